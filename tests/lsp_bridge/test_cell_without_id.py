"""A finding located on a notebook cell that has no id: the language server has no document for it."""

from __future__ import annotations

from pathlib import Path

from pygls.workspace import Workspace

from watcher.lsp_bridge.diagnostics import diagnostics_for
from watcher.lsp_bridge.findings import FindingBook
from watcher.runtime.journal import JournalRow


def test_cell_located_by_execution_count_is_skipped_not_an_error(tmp_path: Path) -> None:
    book = FindingBook(tmp_path / "journal.sqlite3", tmp_path)
    body = {
        "id": "i1",
        "content": "Unpickling data that may be untrusted",
        "locations": [
            {"execution_count": 3, "cell_index": 2, "start_line": 2, "end_line": 2},
            {"path": "model.py", "start_line": 4, "end_line": 4},
        ],
    }
    book.apply_rows(
        [JournalRow(1, 0.0, "s", "security", "interjection", {"interjection": body, "status": "pending", "index": 0})],
        live_after=0,
    )
    finding = book.findings["i1"]
    assert finding.interjection.locations[0].execution_count == 3
    diagnostics = diagnostics_for(Workspace(tmp_path.as_uri()), book, finding)
    assert list(diagnostics) == [(tmp_path / "model.py").as_uri()]  # the file; the id-less cell has no URI
