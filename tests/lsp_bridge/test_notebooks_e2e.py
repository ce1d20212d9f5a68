"""End to end: diagnostics reach notebook cells synced with ``notebookDocument/*``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from watcher.testing import wait_until

from .conftest import diagnostics, interjection, journal_of, write_events

# one server per module and profile: the module runs on one xdist worker
pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.xdist_group("test_notebooks_e2e")]

SOURCE = "import pandas as pd\ndf = pd.read_csv('sales.csv')\nmonthly = df.groupby('month').sum()\n"


def _open_notebook(client: LanguageClient, notebook: Path, cells: dict[str, str]) -> None:
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=notebook.as_uri(),
                notebook_type="jupyter-notebook",
                version=0,
                cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=uri) for uri in cells],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=uri, language_id="python", version=0, text=text)
                for uri, text in cells.items()
            ],
        )
    )


def _observed(session: str, index: int, source: str, cell_id: str | None) -> dict[str, Any]:
    observation = {"kind": "cell_executed", "source": source, "cell_id": cell_id}
    return {"kind": "observation", "session": session, "payload": {"index": index, "observation": observation}}


async def test_vscode_cell_uri_is_used_as_is(client: LanguageClient, repo: Path) -> None:
    notebook = repo / "sales.ipynb"
    cell = f"vscode-notebook-cell:{notebook}#W1sZmlsZQ%3D%3D"
    _open_notebook(client, notebook, {cell: SOURCE})
    where = [{"cell_id": cell, "start_line": 3, "end_line": 3}]
    await write_events(
        journal_of(repo), [interjection("nb1", "KeyError: 'month' again", session="kernel-1", locations=where)]
    )
    [diag] = await wait_until(lambda: diagnostics(client, cell), what="a diagnostic on the cell URI")
    assert diag.range == types.Range(types.Position(2, 0), types.Position(2, 35))
    assert diag.message.startswith("security: KeyError: 'month' again")


async def test_cell_found_by_observed_source(client: LanguageClient, repo: Path) -> None:
    """JupyterLab sends nbformat ids and nbval none: match what the kernel ran against synced cells."""
    notebook = repo / "lab.ipynb"
    first, second, third = (f"{notebook.as_uri()}#cell{i}" for i in range(3))
    other = "print('hello')\n"
    events = [
        _observed("kernel-2", 0, other, "aaaa"),
        _observed("kernel-2", 1, SOURCE, "c3f1a2"),
        _observed("kernel-2", 2, "x = 1 + 1\n", None),  # nbval: no cell id at all
        interjection(
            "nb2",
            "groupby on a missing column",
            session="kernel-2",
            index=1,
            locations=[{"cell_id": "c3f1a2", "start_line": 3}],
        ),
        interjection(
            "nb3",
            "by index",
            session="kernel-2",
            index=2,
            severity="hint",
            locations=[{"cell_id": "unknown-id", "start_line": 1}],
        ),
    ]
    await write_events(journal_of(repo), events)
    await wait_until(lambda: any(n.interjection.id == "nb3" for n in client.interjections), what="the interjections")
    assert diagnostics(client, second) == []  # the notebook is not open yet: nowhere to put it
    # the editor's copy has trailing whitespace the kernel did not see
    _open_notebook(client, notebook, {first: other, second: SOURCE.replace("\n", "  \n"), third: "x = 1 + 1"})
    [diag] = await wait_until(lambda: diagnostics(client, second), what="a diagnostic on the matching cell")
    assert diag.range.start.line == 2
    assert diag.data["interjection_id"] == "nb2"
    [by_index] = await wait_until(lambda: diagnostics(client, third), what="a diagnostic matched by index")
    assert by_index.severity == types.DiagnosticSeverity.Information
    assert diagnostics(client, first) == []


async def test_closing_the_notebook_clears_the_findings_matched_to_its_cells(
    client: LanguageClient, repo: Path
) -> None:
    notebook = repo / "closed.ipynb"
    cell = f"{notebook.as_uri()}#cell0"
    source = "total = sum(range(10))\n"
    where = [{"cell_id": "closing-1", "start_line": 1}]
    await write_events(
        journal_of(repo),
        [_observed("kernel-3", 0, source, "closing-1"), interjection("nb-closed", session="kernel-3", locations=where)],
    )
    _open_notebook(client, notebook, {cell: source})
    await wait_until(lambda: diagnostics(client, cell), what="a diagnostic on the matching cell")
    client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=notebook.as_uri()),
            cell_text_documents=[types.TextDocumentIdentifier(uri=cell)],
        )
    )
    await wait_until(lambda: not diagnostics(client, cell), what="the closed cell's diagnostic cleared")


async def test_a_finding_on_a_vscode_cell_uri_shows_only_while_its_notebook_is_open(
    client: LanguageClient, repo: Path
) -> None:
    """It stayed on the closed notebook's cell (VS Code kept it in Problems) after the notebook closed."""
    notebook = repo / "uri-closed.ipynb"
    cell = f"vscode-notebook-cell:{notebook}#W0sZmlsZQ%3D%3D"
    where = [{"cell_id": cell, "start_line": 1}]
    await write_events(journal_of(repo), [interjection("nb-uri-closed", session="kernel-4", locations=where)])
    await wait_until(
        lambda: any(n.interjection.id == "nb-uri-closed" for n in client.interjections), what="the interjection"
    )
    assert diagnostics(client, cell) == []  # its notebook is not open: nowhere to put it
    _open_notebook(client, notebook, {cell: "secret = 'x'\n"})
    await wait_until(lambda: diagnostics(client, cell), what="a diagnostic on the cell URI once it is open")
    client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=notebook.as_uri()),
            cell_text_documents=[types.TextDocumentIdentifier(uri=cell)],
        )
    )
    await wait_until(lambda: not diagnostics(client, cell), what="the closed cell's diagnostic cleared")
