"""Following one journal from the language server: read by id, survive anything.

A ``JournalFollower`` holds what the server knows of one journal and reads the events (and
commands) committed since its cursor; ``poller.JournalPoller`` decides when, for every journal
at once. A journal that does not exist yet, is locked, is not a journal, or is deleted or
replaced under it is logged (once per distinct problem) and retried; the follower only stops
when the server shuts down or no workspace folder names its journal any more.

A journal file is read only when its ``Stamp`` (the file's and its WAL's identity, size and
modification time) changed since the last read: every commit writes the WAL, so an idle journal
costs two ``stat`` calls per look, not a query.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from watcher.core.errors import JournalError
from watcher.core.logs import logger
from watcher.lsp_bridge.findings import FindingBook
from watcher.runtime.journal import Command, Journal, JournalRow

__all__ = ["Batch", "JournalFollower", "Stamp", "stamp_of"]

log = logger("watcher.lsp")

RETRY_S = 0.5  # how often to look again for a missing or broken journal
READ_LIMIT = 1000  # events read at once: a full batch means more is waiting


@dataclass(frozen=True, slots=True)
class Batch:
    """What one poll read: new events, commands since the cursor, and the history boundary."""

    rows: list[JournalRow]
    commands: list[Command]
    live_after: int
    reset: bool = False  # the journal went away or was replaced: forget what it said
    more: bool = False  # the read was full: more rows are waiting
    command_cursor: int | None = None  # the position new commands were read up to (None: no new ones)


Stamp = tuple[int, int, int, int, tuple[int, int, int] | None]
"""A journal file's (device, inode, size, mtime_ns) and its WAL's (inode, size, mtime_ns), or None."""

SETTLE_NS = 2_000_000_000  # a stamp this young may hide a second write in the same mtime tick: read anyway
BACKSTOP_S = 5.0  # read a quiet journal this often anyway (a clock or file system that fools the stamp)


def stamp_of(path: Path | str) -> Stamp | None:
    """The stamp of the journal file at ``path`` (None: no file; a URL has none: it is always read)."""
    if not isinstance(path, Path):
        return None
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    try:
        wal = os.stat(f"{path}-wal")
        beside: tuple[int, int, int] | None = (wal.st_ino, wal.st_size, wal.st_mtime_ns)
    except (OSError, ValueError):
        beside = None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, beside)


def _young(stamp: Stamp) -> bool:
    """Whether the file (or its WAL) was written within ``SETTLE_NS``: a stamp that may hide a second write,
    or a journal still being made (its tables not written yet)."""
    return time.time_ns() - max(stamp[3], stamp[4][2] if stamp[4] else 0) < SETTLE_NS


class JournalFollower:
    """One journal's reader: ``due`` says whether to read it now, ``poll`` reads, ``take`` hands it over.

    ``deliver(book, batch)`` is called on the loop for every read that brought something.
    """

    def __init__(
        self,
        path: Path | str,
        root: Path,
        deliver: Callable[[FindingBook, Batch], None],
        *,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.path = path
        self.book = FindingBook(path, root)
        self.journal: Journal | None = None
        self._deliver = deliver
        self._inode: int | None = None
        self._live_after = 0
        self._problem = ""
        self._warn = warn  # shows a problem to the person (on the loop), once per distinct problem
        self._unshown = ""
        self._absent = False  # the journal was missing when we looked: all it will hold is news
        self._seen: Stamp | None = None  # the stamp of the file as last read
        self._read_at = -math.inf  # when it was last read (monotonic seconds)
        self._retry_at = 0.0  # a broken journal is not looked at again before this (monotonic seconds)
        self.looked = False  # read at least once
        self._behind = False  # the last batch delivered was full: the server holds its diagnostics back

    def due(self, stamp: Stamp | None, now: float) -> bool:
        """Whether to read the journal now, given its ``stamp`` just taken (``now``: monotonic seconds)."""
        if not isinstance(self.path, Path) or not self.looked:
            return True  # a PostgreSQL journal has no stamp: every look is a read
        if now < self._retry_at:
            return False
        if stamp is None:  # no file: read once to notice it went away, then wait for one
            return self.journal is not None or not self._absent
        if self.journal is None or stamp != self._seen or now - self._read_at >= BACKSTOP_S:
            return True
        return _young(stamp)

    def poll(self, stamp: Stamp | None) -> Batch | Exception | None:
        """Read what is new (in a worker thread): a batch, None (no journal to read yet), or the failure."""
        try:
            batch = self._poll(stamp)
        except Exception as exc:  # noqa: BLE001 - locked, corrupt, vanished: logged, never fatal
            self._close()
            self._retry_at = time.monotonic() + RETRY_S
            return exc
        self.looked = True
        self._read_at = time.monotonic()
        self._seen = stamp
        return batch

    def take(self, outcome: Batch | Exception | None) -> bool:
        """Hand a poll's outcome over on the loop: report a failure, deliver a batch. True: more is waiting."""
        if isinstance(outcome, Exception):
            text = str(outcome) if isinstance(outcome, JournalError) else f"{type(outcome).__name__}: {outcome}"
            self.looked = True
            self._report(f"cannot read the journal at {self.path}: {text}")
            self._show()
            return False
        self._show()
        if outcome is None:
            return False
        if outcome.command_cursor is not None:
            self.book.command_cursor = outcome.command_cursor
        if outcome.rows or outcome.commands or outcome.reset or self._behind:  # behind: what it held back
            self._behind = outcome.more
            try:
                self._deliver(self.book, outcome)
            except Exception:
                log.exception("handling rows of %s failed; carrying on", self.path)
        return outcome.more  # read on at once

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

    def _poll(self, stamp: Stamp | None) -> Batch | None:
        """One poll, in a worker thread. None: no journal to read (yet)."""
        # a file can be removed or replaced under us; a PostgreSQL journal (a URL) cannot
        inode = (stamp[1] if stamp is not None else None) if isinstance(self.path, Path) else 0
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
            except JournalError as exc:  # not a journal, locked, unreadable: look again in a while
                if stamp is not None and _young(stamp):  # a session is making it now: not a problem yet
                    log.debug("the journal at %s is not readable yet: %s", self.path, exc)
                else:
                    self._report(str(exc))
                self._retry_at = time.monotonic() + RETRY_S
                return None
            self._inode = inode
            self._live_after = 0 if self._absent else self.journal.last_id()
            if self._problem:
                log.info("following the journal at %s", self.path)
            self._problem = ""
        rows = self.journal.read(self.book.cursor, limit=READ_LIMIT)
        if not rows and self._rewound():
            self._close()
            self._report(f"the journal at {self.path} was overwritten with another (its newest event is older)")
            self._reset_book()
            return Batch([], [], 0, reset=True)
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
        cursor = feed[-1][0] if feed else None
        return Batch(rows, commands, self._live_after, command_cursor=cursor, more=len(rows) >= READ_LIMIT)

    def _rewound(self) -> bool:
        """Whether the file's newest event is older than what was read: another journal was copied over it
        (same file, so its identity did not change). Only what the file holds now is shown, as a server
        started now would show it (a prune of every event reads the same way)."""
        return isinstance(self.path, Path) and self.journal is not None and self.journal.last_id() < self.book.cursor

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

    def close(self) -> None:
        """Release the journal (in a worker thread: closing waits for its writer)."""
        self._close()
