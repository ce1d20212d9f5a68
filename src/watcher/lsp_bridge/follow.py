"""Following one journal from the language server: poll by id, survive anything.

A ``JournalFollower`` is an asyncio task on the server's loop. Every ``interval`` it reads the
events (and commands) committed since its cursor in a worker thread, so the loop never waits on
the journal, and hands them to the server. A journal that does not exist yet, is locked, is not a
journal, or is deleted or replaced under it is logged (once per distinct problem) and retried;
the follower only stops when the server shuts down.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from watcher.core.errors import JournalError
from watcher.core.logs import logger
from watcher.lsp_bridge.findings import FindingBook
from watcher.runtime.journal import Command, Journal, JournalRow

__all__ = ["Batch", "JournalFollower"]

log = logger("watcher.lsp")

RETRY_S = 0.5  # how often to look again for a missing or broken journal


@dataclass(frozen=True, slots=True)
class Batch:
    """What one poll read: new events, commands since the cursor, and the history boundary."""

    rows: list[JournalRow]
    commands: list[Command]
    live_after: int
    reset: bool = False  # the journal went away or was replaced: forget what it said
    command_cursor: int | None = None  # the position new commands were read up to (None: no new ones)


class JournalFollower:
    """Polls one journal and calls ``deliver(book, batch)`` on the loop for every non-empty poll."""

    def __init__(
        self,
        path: Path | str,
        root: Path,
        deliver: Callable[[FindingBook, Batch], None],
        *,
        interval: float = 0.05,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.path = path
        self.book = FindingBook(path, root)
        self.journal: Journal | None = None
        self._deliver = deliver
        self._interval = interval
        self._inode: int | None = None
        self._live_after = 0
        self._problem = ""
        self._warn = warn  # shows a problem to the person (on the loop), once per distinct problem
        self._unshown = ""
        self._absent = False  # the journal was missing when we looked: all it will hold is news

    async def run(self) -> None:
        """Follow until cancelled."""
        while True:
            try:
                batch = await asyncio.to_thread(self._poll)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - locked, corrupt, vanished: logged, never fatal
                text = str(exc) if isinstance(exc, JournalError) else f"{type(exc).__name__}: {exc}"
                self._report(f"cannot read the journal at {self.path}: {text}")
                self._show()
                await asyncio.to_thread(self._close)
                await asyncio.sleep(RETRY_S)
                continue
            self._show()
            if batch is None:
                await asyncio.sleep(RETRY_S)
                continue
            if batch.command_cursor is not None:
                self.book.command_cursor = batch.command_cursor
            if batch.rows or batch.commands or batch.reset:
                try:
                    self._deliver(self.book, batch)
                except Exception:
                    log.exception("handling rows of %s failed; carrying on", self.path)
            if len(batch.rows) < 1000:  # a full batch means more is waiting: read on at once
                await asyncio.sleep(self._interval)

    def _report(self, problem: str, *, level: int = logging.WARNING) -> None:
        if problem != self._problem:
            log.log(level, "%s (retrying every %gs)", problem, RETRY_S)
            self._problem = problem
            if level >= logging.WARNING:
                self._unshown = problem

    def _show(self) -> None:
        problem, self._unshown = self._unshown, ""
        if problem and self._warn is not None:
            try:
                self._warn(problem)
            except Exception:  # showing a problem must not become one
                log.exception("cannot show a journal problem to the client")

    def _poll(self) -> Batch | None:
        """One poll, in a worker thread. None: no journal to read (yet)."""
        try:  # a file can be removed or replaced under us; a PostgreSQL journal (a URL) cannot
            inode = os.stat(self.path).st_ino if isinstance(self.path, Path) else 0
        except OSError:
            inode = None
        if self.journal is not None and inode != self._inode:
            self._close()
            self._report(f"the journal at {self.path} was removed or replaced")
            self._reset_book()
            return Batch([], [], 0, reset=True)
        if inode is None:
            self._absent = True
            self._report(f"no journal at {self.path} yet", level=logging.INFO)
            return None
        if self.journal is None:
            try:
                self.journal = Journal(self.path, create=False)
            except JournalError as exc:
                self._report(str(exc))
                return None
            self._inode = inode
            self._live_after = 0 if self._absent else self.journal.last_id()
            if self._problem:
                log.info("following the journal at %s", self.path)
            self._problem = ""
        rows = self.journal.read(self.book.cursor, limit=1000)
        feed = self.journal.commands_since(self.book.command_cursor)  # new commands, in commit order
        commands = [command for _, command in feed]
        awaiting = self.book.awaited
        if awaiting:  # open requests (this server's and others'): re-read by id until each is answered
            known = {command.id for command in commands}
            commands += [
                command
                for command in self.journal.commands(status=None, after=min(awaiting) - 1)
                if command.id in awaiting and command.id not in known
            ]
        return Batch(rows, commands, self._live_after, command_cursor=feed[-1][0] if feed else None)

    def _reset_book(self) -> None:
        self.book = FindingBook(self.book.journal, self.book.root)
        self._live_after = 0
        self._absent = True

    def _close(self) -> None:
        if self.journal is not None:
            journal, self.journal = self.journal, None
            try:
                journal.close()
            except Exception as exc:  # noqa: BLE001 - a broken journal must not stop the server
                log.warning("closing the journal at %s failed: %s", self.path, exc)

    async def close(self) -> None:
        """Release the journal (after the task was cancelled)."""
        await asyncio.to_thread(self._close)
