"""When a journal is read: only when it changed (a quiet one costs two ``stat`` calls), and the server's
whole cost with many quiet folders (a real server, 60 folders, 30 journals)."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp.client import make_test_lsp_client

from watcher.core.interjection import Interjection, Location
from watcher.lsp_bridge.findings import FindingBook
from watcher.lsp_bridge.follow import BACKSTOP_S, SETTLE_NS, Batch, JournalFollower, stamp_of
from watcher.runtime.events import InterjectionEvent
from watcher.runtime.journal import Journal
from watcher.testing import wait_until

from .conftest import SERVER, diagnostics, interjection, journal_of, make_workspace, server_env, write_events


def _age(journal: Path) -> None:
    """Date the journal's files back past the settle window, as if written a while ago."""
    old = time.time_ns() - 2 * SETTLE_NS
    for path in (journal, Path(f"{journal}-wal")):
        if path.exists():
            os.utime(path, ns=(old, old))


def _fold(book: FindingBook, batch: Batch) -> None:
    book.apply_rows(batch.rows, live_after=0)  # as the server does: the book's cursor moves on


async def test_a_quiet_journal_is_not_read_again_until_it_changes(tmp_path: Path) -> None:
    repo = make_workspace(tmp_path)
    journal = journal_of(repo)
    await write_events(journal, [interjection("first")])
    follower = JournalFollower(journal, repo, _fold)
    try:
        stamp = stamp_of(journal)
        assert follower.due(stamp, time.monotonic())  # never read
        batch = follower.poll(stamp)
        assert isinstance(batch, Batch) and len(batch.rows) == 1
        follower.take(batch)
        assert follower.due(stamp_of(journal), time.monotonic())  # just written: a second write may hide in its tick
        _age(journal)
        follower.take(follower.poll(stamp_of(journal)))
        quiet = stamp_of(journal)
        assert not follower.due(quiet, time.monotonic())  # nothing new: not queried
        assert follower.due(quiet, time.monotonic() + BACKSTOP_S)  # now and then anyway
        await write_events(journal, [interjection("second")])
        assert follower.due(stamp_of(journal), time.monotonic())  # a commit changed it
        batch = follower.poll(stamp_of(journal))
        assert isinstance(batch, Batch) and [row.payload["interjection"]["id"] for row in batch.rows] == ["second"]
    finally:
        follower.close()


def _commit(journal: Path, ident: str) -> None:
    """One finding on ``a.py``, committed by this process (a second process per journal would cost seconds)."""
    with Journal(journal) as writer:
        found = Interjection(content=ident, locations=(Location(path="a.py"),), watcher="w", id=ident)
        writer.append(InterjectionEvent(session="s", watcher="w", interjection=found, status="pending"))
        writer.flush()


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the server's CPU time from /proc")
async def test_sixty_quiet_folders_cost_little_cpu(tmp_path: Path) -> None:
    """Each journal was queried 20 times a second: 60 folders, 30 journals, cost 7-17 % of a core, idle."""
    folders = [make_workspace(tmp_path / f"f{i:02d}") for i in range(60)]
    for n, folder in enumerate(folders[::2]):
        (folder / "a.py").write_text("x = 1\n")
        await asyncio.to_thread(_commit, journal_of(folder), f"old-{n}")
        _age(journal_of(folder))
    lsp = make_test_lsp_client()
    await lsp.start_io(*SERVER, env=server_env())
    try:
        await lsp.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                workspace_folders=[types.WorkspaceFolder(f.as_uri(), f.parent.name) for f in folders],
            )
        )
        uris = [(f / "a.py").as_uri() for f in folders[::2]]
        await wait_until(lambda: all(diagnostics(lsp, uri) for uri in uris), within=30, what="every journal read")
        assert lsp._server is not None
        pid = lsp._server.pid
        await asyncio.sleep(1.5)  # not a wait for a condition: start-up done, the looks slowed down
        cpu, wall = _cpu_seconds(pid), time.monotonic()
        await asyncio.sleep(2.5)  # likewise: the window whose cost is measured
        share = (_cpu_seconds(pid) - cpu) / (time.monotonic() - wall)
        assert share < 0.035, f"the idle server used {share:.1%} of a core"
        # a quiet server still shows news
        folder = folders[10]
        await write_events(journal_of(folder), [interjection("new", locations=[{"path": "a.py", "start_line": 1}])])
        await wait_until(lambda: len(diagnostics(lsp, (folder / "a.py").as_uri())) == 2, what="the new finding")
        await lsp.shutdown_session()
    finally:
        await lsp.stop()
