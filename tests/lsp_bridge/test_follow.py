"""When a journal is read: only when it changed (a quiet one costs two ``stat`` calls); a journal still
being made is not reported broken; a real server with 60 folders follows every journal."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

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


async def test_sixty_folders_are_all_followed_and_news_still_shows(tmp_path: Path) -> None:
    """60 folders, 30 with journals, on one poller: every journal is read, and a finding written later
    still shows. (What they cost idle is measured by ``benchmarks/bench_lsp_folders.py``.)"""
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
        folder = folders[10]
        await write_events(journal_of(folder), [interjection("new", locations=[{"path": "a.py", "start_line": 1}])])
        await wait_until(lambda: len(diagnostics(lsp, (folder / "a.py").as_uri())) == 2, what="the new finding")
        await lsp.shutdown_session()
    finally:
        await lsp.stop()


def test_a_journal_being_made_is_not_reported_broken_until_it_stays_so(tmp_path: Path) -> None:
    """SQLite makes the file before its tables: the server told the person the journal was "not a
    watcher journal (it is empty ...)" each time a session started one. A file that young is looked
    at again quietly; one that stays broken is reported."""
    repo = make_workspace(tmp_path)
    journal = journal_of(repo)
    journal.parent.mkdir(parents=True)
    journal.touch()  # as SQLite leaves it before the first table is written
    warned: list[str] = []
    follower = JournalFollower(journal, repo, _fold, warn=warned.append)
    try:
        follower.take(follower.poll(stamp_of(journal)))
        assert warned == []
        _age(journal)  # the same empty file, written a while ago: it is not being made any more
        follower._retry_at = 0.0  # look again now, not after the retry pause
        follower.take(follower.poll(stamp_of(journal)))
        assert len(warned) == 1 and "not a watcher journal" in warned[0], warned
    finally:
        follower.close()
