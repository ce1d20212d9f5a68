"""The journal: where processes meet, in one SQLite file (WAL) or on a PostgreSQL server.

``events`` is append-only: every observation, evaluation, interjection and delivery, each with a
position so any reader can follow in commit order. ``commands`` goes the other way: inject,
dismiss, accept or edit requests written by a language server or a widget, applied by the
process that owns the session and marked applied or failed.

This module holds everything that is not SQL; a store (``_sqlite_store``, ``_pg_store``) runs the
statements. One writer thread per ``Journal`` batches event writes in short transactions, so the
asyncio loop never waits on the disk or the network. Secrets are redacted before anything is
written, and a payload that cannot be stored as is (too long, lone surrogates, nested too deep)
is clipped and says so.

Nothing confirmed is lost: a batch is retried, with backoff, for as long as another process holds
the file locked or the server does not answer; ``flush`` returns only once everything appended
before it is committed, and raises ``JournalError`` (naming the journal and the cause) if it never
will be. A writer that meets anything else (a damaged file, a full disk) stops, logs once, and
every later ``flush`` says why. Readers skip (and count) rows they cannot decode.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import threading
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from watcher.core.errors import JournalError
from watcher.core.logs import logger
from watcher.runtime._coordination import Command, Coordination
from watcher.runtime._storable import encode_payload, storable_text, stored_session
from watcher.runtime._store import EventRow, RawEvent, Store, StoreBusy, is_url, journal_label, journal_target
from watcher.runtime.events import Event, event_from_payload
from watcher.settings import Settings

__all__ = [
    "DECISION_KINDS",
    "Command",
    "Journal",
    "JournalRow",
    "default_journal_path",
    "journal_label",
    "journal_target",
    "project_root",
    "stored_session",
]

log = logger("watcher.journal")

# the journal and the claimed command (id, claim token) whose effect the events appended here are (``settling``)
_SETTLING: ContextVar[tuple[Journal, tuple[int, float]] | None] = ContextVar("watcher_settling", default=None)

# kinds that a reader waiting on a PostgreSQL journal is woken for (observations are only polled)
DECISION_KINDS = frozenset(
    {"interjection", "watcher_nudge", "watcher_pause", "watcher_abort", "sync_message", "fleet_task"}
)


def project_root(start: Path | None = None) -> Path:
    """The nearest ancestor of ``start`` holding ``.git`` or ``pyproject.toml``, else ``start``."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists() or (folder / "pyproject.toml").exists():
            return folder
    return here


def default_journal_path(start: Path | None = None, *, settings: Settings | None = None) -> Path | str:
    """``$WATCHER_JOURNAL`` if set (a path or a ``postgresql://`` URL), else ``.watcher/journal.sqlite3`` at the project root.

    The variable comes from ``settings`` (default: the environment, read now).
    """
    override = (settings or Settings.from_env()).journal
    if override:
        return journal_target(override)
    return project_root(start) / ".watcher" / "journal.sqlite3"


@dataclass(frozen=True, slots=True)
class JournalRow:
    """One row of ``events`` as a reader sees it; ``payload`` is already decoded.

    ``id`` is the row's position in commit order, the cursor a reader passes back as ``after``:
    the row id in SQLite; in PostgreSQL the writing transaction's id and the row id packed in one
    int, since ids there are not in commit order. Compare positions; never do arithmetic on them.
    """

    id: int
    ts: float
    session: str
    watcher: str
    kind: str
    payload: dict[str, Any]

    def event(self) -> Event:
        """The typed event this row holds; raises ``MalformedEventError`` when it cannot be read."""
        return event_from_payload(self.kind, self.payload, session=self.session, watcher=self.watcher, ts=self.ts)


def open_store(target: Path | str, *, create: bool, **options: Any) -> Store:
    """The store for ``target``: ``PostgresStore`` for a ``postgresql://`` URL, else ``SqliteStore``."""
    if is_url(target):
        from watcher.runtime._pg_store import PostgresStore  # psycopg is an extra: imported only when used

        return PostgresStore(str(target), create=create, **options)
    from watcher.runtime._sqlite_store import SqliteStore

    return SqliteStore(Path(target), create=create)


@contextmanager
def _no_collection() -> Iterator[None]:
    """No cyclic garbage collection while a batch of rows is decoded.

    Decoding ten thousand payloads allocates enough containers to run the collector a hundred
    times, and each run that reaches the oldest generation walks every object the process holds
    (a supervisor's picture of every task): tens of milliseconds a cycle for nothing, since the
    payloads form no cycles. The collector runs as usual afterwards (and stays off if it was off).
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _encode(event: Event) -> EventRow | None:
    """The ``events`` row for ``event``, storable and redacted; None (logged) if it has no payload."""
    try:
        data = event.payload()
    except Exception:  # a bug in one event class must not break its publisher (logged with its traceback)
        log.exception("cannot journal a %s event of session %r; skipped", event.kind, stored_session(event.session))
        return None
    watcher, kind = storable_text(event.watcher), storable_text(event.kind)
    return (event.ts, stored_session(event.session), watcher, kind, encode_payload(data))


class Journal(Coordination):
    """The journal of one project (a SQLite file or a PostgreSQL database); safe to share between threads.

    ``path`` is a file path or a ``postgresql://`` URL (default: ``default_journal_path()``).
    ``create=False`` opens only a journal that already exists (raising ``JournalError``
    otherwise), for readers such as the language server that must not leave files behind.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        batch_interval: float = 0.02,
        create: bool = True,
        **store_options: Any,
    ) -> None:
        self.path: Path | str = journal_target(path) if path is not None else default_journal_path()
        self._store = open_store(self.path, create=create, **store_options)
        self.where = self._store.where  # the journal for messages (a URL without its password)
        self._pending: list[EventRow] = []
        self._fences: dict[int, tuple[int, float]] = {}  # pending rows that are a claimed command's effect
        self._lock = threading.Lock()
        self._wake = threading.Event()  # something is queued: the writer wakes (and gathers a batch)
        self._now = threading.Event()  # someone waits (flush, close) or a batch is full: write at once
        self._flushed = threading.Condition(self._lock)
        self._written = 0
        self._queued = 0
        self._closed = False
        self._abandon = False  # close() gave up waiting for a locked journal: stop retrying
        self._failure: JournalError | None = None  # why the writer stopped, if it did
        self._lost = 0  # events appended after the writer stopped (never written)
        self._cause = ""  # the last error a write met, for messages
        self.skipped = 0  # rows readers could not decode (skipped, logged, counted)
        self._bad: set[int] = set()
        self._claims: dict[int, float] = {}  # commands claimed here and not yet marked: their claim tokens
        self._claims_lock = threading.Lock()
        self._interval = batch_interval
        self._thread = threading.Thread(target=self._run, name="watcher-journal-writer", daemon=True)
        self._thread.start()

    # --- writing -------------------------------------------------------------------------------

    def append(self, event: Event) -> None:
        """Encode and redact ``event`` now, and queue it for the next batch. Never waits on the disk.

        Encoding happens on the caller's thread and the writer thread only runs SQLite, which
        releases the interpreter lock: the two threads then work in parallel instead of taking
        turns with the lock. Once the writer has stopped the first append raises ``JournalError``;
        later ones (and any after ``close``) are counted as lost, which ``flush`` reports.
        """
        row = _encode(event)
        if row is None:
            return
        with self._lock:
            if self._closed or self._failure is not None:
                self._lost += 1  # counted: flush reports them (a closed journal, e.g. after Ctrl-C, only logs)
                if self._lost == 1 and self._failure is not None:
                    raise self._failure
                if self._lost == 1:
                    log.debug("events appended to the closed journal at %s are not written", self.where)
                return
            if (settling := _SETTLING.get()) is not None and settling[0] is self:
                self._fences[len(self._pending)] = settling[1]
            self._pending.append(row)
            self._queued += 1
            if len(self._pending) == 1:  # the first of a batch wakes the writer; it sleeps otherwise
                self._wake.set()
            elif len(self._pending) == 1000:
                self._now.set()

    def flush(self, timeout: float | None = None) -> None:
        """Block until everything appended so far is committed.

        While another process holds the journal locked this waits (the writer retries); with a
        ``timeout``, it raises ``JournalError`` when the time is up. It raises at once, naming
        the cause, when the writer has stopped or events were appended after it stopped.
        """
        with self._lock:
            target = self._queued
            self._wake.set()
            self._now.set()
            done = self._flushed.wait_for(lambda: self._written >= target or self._failure is not None, timeout)
            self._raise_if_lost()
            if not done:
                raise JournalError(
                    f"{target - self._written} events are not yet written to the journal at {self.where} after "
                    f"{timeout:g}s ({self._cause or 'no answer from the writer'}); is another process holding "
                    "it locked? They are still being retried."
                )

    @contextmanager
    def settling(self, command: Command) -> Iterator[None]:
        """While in this block, the events this task or thread appends are ``command``'s effect.

        For a command taken with ``claim_commands``: its effect rows are written, and the command
        marked ``applied``, in one transaction, and only while the claim still holds. A process cut
        off from the journal for longer than the lease, whose claim another process released and
        took meanwhile, writes nothing when it is back: a command takes effect once. (Its own
        ``mark_commands`` then changes nothing either: the command is the other process's.)
        """
        claim = self._claims.get(command.id)
        if claim is None:  # not claimed here (given in this process, or read with ``commands``): as before
            yield
            return
        token = _SETTLING.set((self, (command.id, claim)))
        try:
            yield
        finally:
            _SETTLING.reset(token)

    def _raise_if_lost(self) -> None:
        if self._failure is not None:
            unwritten = self._queued - self._written + self._lost
            raise JournalError(f"{self._failure} {unwritten} events were not written.")
        if self._lost:
            raise JournalError(f"{self._lost} events were appended to the journal at {self.where} after it was closed")

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued and stop the writer thread.

        A journal still locked by another process after ``timeout`` seconds is given up on: the
        events not written are reported in a ``JournalError``.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._wake.set()
            self._now.set()
        self._thread.join(timeout=timeout)
        if self._thread.is_alive():
            with self._lock:
                self._abandon = True
            self._thread.join(timeout=timeout)  # it stops at its next retry, unless a write never returns
        if self._thread.is_alive():  # a server that stopped answering mid-write: closing its connections would wait too
            with self._lock:
                unwritten = self._queued - self._written
            raise JournalError(
                f"the journal at {self.where} did not answer a write for {2 * timeout:g}s of closing it "
                f"({self._cause or 'a write in progress never returned'}); {unwritten} events were not written"
            )
        self._store.close()
        with self._lock:
            unwritten = self._queued - self._written
            if unwritten and self._failure is None:
                raise JournalError(
                    f"{unwritten} events could not be written to the journal at {self.where} within {timeout:g}s "
                    f"of closing it ({self._cause})"
                )
            if self._failure is not None and unwritten:
                self._raise_if_lost()

    def _run(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # noqa: BLE001 - the writer must never die silently
            self._stop(JournalError(f"the journal writer for {self.where} stopped: {type(exc).__name__}: {exc}."))

    def _stop(self, failure: JournalError) -> None:
        log.error("%s", failure)  # once: later appends are counted, not logged
        with self._lock:
            self._failure = failure
            self._flushed.notify_all()

    def _loop(self) -> None:
        # Idle, the writer sleeps until something is queued (no periodic wake-ups to compete with a
        # notebook's cells for the interpreter lock); then it lets a batch gather for ``_interval``
        # unless a flush, a close or a full batch wants it now.
        while True:
            self._wake.wait()
            self._now.wait(self._interval)
            with self._lock:
                batch, self._pending = self._pending, []
                fences, self._fences = self._fences, {}
                closing = self._closed
                self._wake.clear()
                self._now.clear()
            if batch and not self._write(batch, fences):
                return
            with self._lock:
                self._written += len(batch)
                self._flushed.notify_all()
                if closing and not self._pending:
                    return

    def _write(self, batch: list[EventRow], fences: dict[int, tuple[int, float]]) -> bool:
        """Commit ``batch``, retrying while the journal is busy; False when the writer must stop."""
        attempt = 0
        started = time.monotonic()
        warned = 0.0
        wake = any(row[3] in DECISION_KINDS for row in batch)
        while True:
            try:
                lost = self._store.append(batch, wake=wake, fences=fences)
                for command_id in sorted(lost):
                    log.warning(
                        "command %d was released while the journal at %s could not be reached, and is another "
                        "process's to apply now: its effect here is not written (it takes effect once)",
                        command_id,
                        self.where,
                    )
                if attempt:
                    log.warning("the journal at %s is free again; %d events written", self.where, len(batch))
                return True
            except StoreBusy as exc:
                self._cause, remedy = str(exc), exc.remedy
            except JournalError as exc:
                self._cause = str(exc)
                self._stop(exc)
                return False
            waited = time.monotonic() - started
            if waited - warned >= 30 or attempt == 0:  # a lock held long is worth saying, not every retry
                log.warning(
                    "the journal at %s is %s; retrying until it is free, and nothing is lost while it waits. "
                    "%s; to give up instead, stop this one (Ctrl-C)",
                    self.where,
                    self._cause,
                    remedy,
                )
                warned = waited
            with self._lock:
                if self._abandon:
                    return False
            attempt += 1
            time.sleep(min(0.05 * 2**attempt, 1.0))

    # --- reading -------------------------------------------------------------------------------

    def read(
        self, after: int = 0, *, limit: int = 1000, session: str | None = None, kinds: Collection[str] | None = None
    ) -> list[JournalRow]:
        """Events with id greater than ``after``, oldest first (only of ``kinds``, if given: filtered in SQL).

        A row whose payload is not UTF-8 or not a JSON object is skipped with one log line and
        counted in ``skipped``; the rows after it are read as usual. A damaged file raises
        ``JournalError``.
        """
        wanted = sorted(kinds) if kinds is not None else None
        while True:  # a batch of nothing but bad rows must not look like the end: read on past it
            raw = self._store.events(after, limit, session if session is None else stored_session(session), wanted)
            rows = [row for row in map(self._decode, raw) if row is not None]
            if rows or len(raw) < limit:
                return rows
            after = raw[-1][0]

    def _decode(self, raw: RawEvent) -> JournalRow | None:
        id_, ts, session, watcher, kind, payload = raw
        decoded = self._payload(id_, payload)
        if decoded is None:
            return None
        return JournalRow(id_, float(ts), str(session), str(watcher), str(kind), decoded)

    def _payload(self, id_: int, payload: bytes | str | None) -> dict[str, Any] | None:
        """A row's payload as a dict, or None (logged once, counted in ``skipped``) when it is not one."""
        try:
            try:
                decoded = orjson.loads(payload or b"")
            except orjson.JSONDecodeError:  # not UTF-8, not JSON, or JSON orjson refuses (a 65-bit int)
                decoded = json.loads(payload if isinstance(payload, str) else bytes(payload or b"").decode("utf-8"))
            if not isinstance(decoded, dict):
                raise ValueError("the payload is not a JSON object")
        except (ValueError, RecursionError) as exc:
            with self._lock:
                first = id_ not in self._bad
                self._bad.add(id_)
            if first:  # one log line per bad row, however often it is read
                self.skipped += 1
                log.warning("skipping corrupt journal row %d in %s (%s)", id_, self.where, exc)
            return None
        return decoded

    def latest(self, kind: str, after: int = 0, *, upto: int | None = None) -> list[tuple[int, str, dict[str, Any]]]:
        """The newest row of ``kind`` of each session among rows ``after`` < id <= ``upto``: (id, session, payload).

        For summaries whose counters are cumulative (a fleet task's ``TaskTurn``): a reader that
        only needs where each session stands decodes one row per session, not every row written.
        """
        raw = self._store.latest(kind, after, upto)
        try:  # the usual case, every payload a JSON object: decoded in one pass (thousands of summaries a cycle)
            with _no_collection():
                fast = [(id_, session, orjson.loads(blob or b"")) for id_, session, blob in raw]
            if all(type(payload) is dict for _, _, payload in fast):
                return fast
        except orjson.JSONDecodeError:
            pass
        return [
            (id_, session, payload) for id_, session, blob in raw if (payload := self._payload(id_, blob)) is not None
        ]

    def tail(self, session: str, *, kinds: Collection[str], limit: int = 30) -> list[JournalRow]:
        """The newest ``limit`` rows of ``session`` of ``kinds``, oldest first (a task's recent activity)."""
        raw = self._store.tail(stored_session(session), sorted(kinds), limit)
        return [row for row in map(self._decode, reversed(raw)) if row is not None]

    def last_id(self) -> int:
        """The position of the newest committed event every reader sees (0 when empty): read after it for news."""
        return self._store.head()

    def prune(self, before_ts: float) -> tuple[int, int]:
        """Delete events, and applied or failed commands, older than ``before_ts``: (events, commands) deleted."""
        return self._store.prune(before_ts)

    @property
    def wakes(self) -> bool:
        """True when writers wake this journal's readers (PostgreSQL's NOTIFY); a file is only polled."""
        return is_url(self.path)

    async def nap(self, seconds: float) -> None:
        """Sleep ``seconds``, or less when a writer signals a decision or a command (PostgreSQL only)."""
        if not self.wakes:
            await asyncio.sleep(seconds)
            return
        await asyncio.to_thread(self._store.wait, seconds)

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
