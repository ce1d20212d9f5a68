"""Bad input never kills the server: corrupt rows, unknown methods, broken or vanishing journals."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from watcher.lsp_bridge.follow import RETRY_S
from watcher.testing import wait_until

from .conftest import diagnostics, interjection, journal_of, make_workspace, write_events

# one server per module and profile: the module runs on one xdist worker
pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.xdist_group("test_robustness_e2e")]


def _add_folder(client: LanguageClient, folder: Path) -> None:
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            types.WorkspaceFoldersChangeEvent(added=[types.WorkspaceFolder(folder.as_uri(), folder.name)], removed=[])
        )
    )


async def test_corrupt_rows_are_skipped(client: LanguageClient, repo: Path) -> None:
    (repo / "ok.py").write_text("a = 1\nb = 2\n")
    uri = (repo / "ok.py").as_uri()
    here = [{"path": "ok.py", "start_line": 2}]
    await write_events(
        journal_of(repo),
        [
            {"kind": "raw", "payload": "{not json"},
            {"kind": "raw", "payload": '{"interjection": "not an object"}'},
            {"kind": "raw", "payload": '{"interjection": {"id": "bad", "content": "x", "locations": [{"path": "ok.py", "start_line": 3, "end_line": 1}]}}'},
            {"kind": "raw", "as": "delivery", "payload": '{"outcome": "delivered"}'},
            {"kind": "raw", "as": "observation", "payload": '{"index": "x", "observation": {"kind": "cell_executed"}}'},
            interjection("good", "still here", locations=here),
        ],
    )  # fmt: skip
    [diag] = await wait_until(lambda: diagnostics(client, uri), what="the good interjection after the bad rows")
    assert diag.data["interjection_id"] == "good"


async def test_unknown_methods_get_errors_and_the_server_carries_on(client: LanguageClient, repo: Path) -> None:
    with pytest.raises(Exception, match="watcher/nope"):
        await client.protocol.send_request_async("watcher/nope", {"x": 1})
    client.protocol.notify("watcher/alsoNope", {"y": 2})
    (repo / "alive.py").write_text("a = 1\n")
    await write_events(journal_of(repo), [interjection("alive", locations=[{"path": "alive.py", "start_line": 1}])])
    await wait_until(lambda: diagnostics(client, (repo / "alive.py").as_uri()), what="the server to carry on")


async def test_a_file_that_does_not_exist_still_gets_whole_lines(client: LanguageClient, repo: Path) -> None:
    uri = (repo / "deleted.py").as_uri()
    await write_events(
        journal_of(repo), [interjection("ghost", locations=[{"path": "deleted.py", "start_line": 3, "end_line": 4}])]
    )
    [diag] = await wait_until(lambda: diagnostics(client, uri), what="a diagnostic on a missing file")
    assert diag.range == types.Range(types.Position(2, 0), types.Position(4, 0))


async def test_a_broken_journal_is_retried_until_it_is_good(client: LanguageClient, tmp_path: Path) -> None:
    other = make_workspace(tmp_path / "broken")
    journal = journal_of(other)
    journal.parent.mkdir(parents=True)
    journal.write_bytes(b"this is not a database" * 100)
    (other / "f.py").write_text("x = 1\n")
    uri = (other / "f.py").as_uri()
    _add_folder(client, other)
    # the server meets the broken file several times (it retries every RETRY_S): it must not give up
    await asyncio.sleep(3 * RETRY_S)
    assert diagnostics(client, uri) == []
    good = tmp_path / "good.sqlite3"
    await write_events(good, [interjection("late", locations=[{"path": "f.py", "start_line": 1}])])
    journal.write_bytes(good.read_bytes())  # repaired in place: the same file, now a valid journal
    [diag] = await wait_until(lambda: diagnostics(client, uri), what="the diagnostic once the journal is valid")
    assert diag.data["interjection_id"] == "late"


async def test_a_deleted_journal_clears_its_diagnostics(client: LanguageClient, tmp_path: Path) -> None:
    other = make_workspace(tmp_path / "vanishing")
    (other / "g.py").write_text("y = 2\n")
    uri = (other / "g.py").as_uri()
    journal = journal_of(other)
    await write_events(journal, [interjection("first", locations=[{"path": "g.py", "start_line": 1}])])
    _add_folder(client, other)
    await wait_until(lambda: diagnostics(client, uri), what="the first diagnostic")
    for path in journal.parent.iterdir():
        path.unlink()
    await wait_until(lambda: diagnostics(client, uri) == [], what="diagnostics cleared with the journal gone")
    await write_events(journal, [interjection("second", locations=[{"path": "g.py", "start_line": 1}])])
    [diag] = await wait_until(lambda: diagnostics(client, uri), what="the new journal's diagnostic")
    assert diag.data["interjection_id"] == "second"


async def test_a_locked_journal_delays_but_does_not_lose(client: LanguageClient, tmp_path: Path) -> None:
    other = make_workspace(tmp_path / "locked")
    (other / "h.py").write_text("z = 3\n")
    uri = (other / "h.py").as_uri()
    journal = journal_of(other)
    await write_events(journal, [])  # create it
    holder = sqlite3.connect(journal, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    _add_folder(client, other)
    writer = write_events(journal, [interjection("held", locations=[{"path": "h.py", "start_line": 1}])])
    task = asyncio.ensure_future(writer)
    await asyncio.sleep(0.3)  # not a wait for a condition: a window in which the server's polls meet the lock
    holder.execute("COMMIT")
    holder.close()
    await task
    await wait_until(lambda: diagnostics(client, uri), what="the diagnostic after the lock is released", within=20)
