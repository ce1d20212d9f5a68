"""The journal: one SQLite file (WAL) where processes meet.

``events`` is append-only: every observation, evaluation, interjection and delivery, with an
integer id so any reader can follow by id. ``commands`` goes the other way: inject, dismiss,
accept or edit requests written by a language server or a widget, applied by the process that
owns the session and marked applied or failed.

One writer thread per ``Journal`` batches event writes in short transactions, so the asyncio loop
never waits on the disk. Secrets are redacted before anything is written.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from watcher.core.errors import JournalError
from watcher.core.redact import may_hold_secret, redact_value
from watcher.runtime.events import Event, event_from_payload

__all__ = ["Command", "Journal", "JournalRow", "default_journal_path", "project_root"]

log = logging.getLogger("watcher.journal")

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    session TEXT NOT NULL,
    watcher TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL,
    payload TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_session ON events(session, id);
CREATE TABLE IF NOT EXISTS commands (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    session TEXT NOT NULL,
    watcher TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL,
    interjection_id TEXT NOT NULL DEFAULT '',
    payload TEXT NOT NULL DEFAULT '{}',
    status TEXT NOT NULL DEFAULT 'new',
    applied_ts REAL,
    detail TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS commands_status ON commands(status, session);
"""

COMMAND_KINDS = ("inject", "accept", "edit", "dismiss")


def project_root(start: Path | None = None) -> Path:
    """The nearest ancestor of ``start`` holding ``.git`` or ``pyproject.toml``, else ``start``."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists() or (folder / "pyproject.toml").exists():
            return folder
    return here


def default_journal_path(start: Path | None = None) -> Path:
    """``$WATCHER_JOURNAL`` if set, else ``.watcher/journal.sqlite3`` at the project root."""
    override = os.environ.get("WATCHER_JOURNAL")
    if override:
        return Path(override).expanduser()
    return project_root(start) / ".watcher" / "journal.sqlite3"


@dataclass(frozen=True, slots=True)
class JournalRow:
    """One row of ``events`` as a reader sees it; ``payload`` is already decoded."""

    id: int
    ts: float
    session: str
    watcher: str
    kind: str
    payload: dict[str, Any]

    def event(self) -> Event:
        """The typed event this row holds; raises ``MalformedEventError`` when it cannot be read."""
        return event_from_payload(self.kind, self.payload, session=self.session, watcher=self.watcher, ts=self.ts)


@dataclass(frozen=True, slots=True)
class Command:
    """One row of ``commands``: a request for the owning process to act on an interjection."""

    id: int
    ts: float
    session: str
    watcher: str
    kind: str
    interjection_id: str
    payload: dict[str, Any]
    status: str
    detail: str


def _connect(path: Path, *, timeout: float = 5.0, create: bool = True) -> sqlite3.Connection:
    try:
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
        else:  # mode=rw: open an existing file read-write, never create one
            uri = f"{path.resolve().as_uri()}?mode=rw"
            conn = sqlite3.connect(uri, timeout=timeout, isolation_level=None, check_same_thread=False, uri=True)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        return conn
    except (OSError, sqlite3.Error) as exc:
        raise JournalError(
            f"cannot open the journal at {path}: {exc}. Check the folder is writable, or set "
            "WATCHER_JOURNAL to another path."
        ) from exc


_Row = tuple[float, str, str, str, str]


def _json(data: Mapping[str, Any]) -> str:
    # orjson: every event is encoded once on its way to disk, so this is the journal's hot path
    return orjson.dumps(data, default=str, option=orjson.OPT_NON_STR_KEYS).decode()


def _encode(event: Event) -> _Row | None:
    """The ``events`` row for ``event``, secrets redacted; None (logged) if it cannot be encoded."""
    try:
        data = event.payload()
        payload = _json(data)
        if may_hold_secret(payload):  # a cheap scan rules out most events; redact the rest fully
            payload = _json(redact_value(data))
    except Exception:  # one bad event must not break its publisher (logged with its traceback)
        log.exception("cannot journal a %s event of session %r; skipped", event.kind, event.session)
        return None
    return (event.ts, event.session, event.watcher, event.kind, payload)


class Journal:
    """The SQLite journal of one project; safe to share between threads of one process.

    ``create=False`` opens only a journal that already exists (raising ``JournalError``
    otherwise), for readers such as the language server that must not leave files behind.
    """

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, batch_interval: float = 0.02, create: bool = True
    ) -> None:
        self.path = Path(path) if path is not None else default_journal_path()
        self._create = create
        if not create and not self.path.is_file():
            raise JournalError(f"no journal at {self.path} yet; a watched session creates it when it starts")
        self._writer = _connect(self.path, create=create)
        try:
            self._writer.executescript(SCHEMA)
        except sqlite3.Error as exc:
            raise JournalError(
                f"{self.path} is not a watcher journal ({exc}); move it aside or set WATCHER_JOURNAL"
            ) from exc
        self._local = threading.local()
        self._pending: list[_Row] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()  # something is queued: the writer wakes (and gathers a batch)
        self._now = threading.Event()  # someone waits (flush, close) or a batch is full: write at once
        self._flushed = threading.Condition(self._lock)
        self._written = 0
        self._queued = 0
        self._closed = False
        self._interval = batch_interval
        self._thread = threading.Thread(target=self._run, name="watcher-journal-writer", daemon=True)
        self._thread.start()

    # --- writing -------------------------------------------------------------------------------

    def append(self, event: Event) -> None:
        """Encode and redact ``event`` now, and queue it for the next batch. Never waits on the disk.

        Encoding happens on the caller's thread and the writer thread only runs SQLite, which
        releases the interpreter lock: the two threads then work in parallel instead of taking
        turns with the lock.
        """
        row = _encode(event)
        if row is None:
            return
        with self._lock:
            if self._closed:
                raise JournalError(f"the journal at {self.path} is closed; open a new Journal to write")
            self._pending.append(row)
            self._queued += 1
            if len(self._pending) == 1:  # the first of a batch wakes the writer; it sleeps otherwise
                self._wake.set()
            elif len(self._pending) == 1000:
                self._now.set()

    def flush(self, timeout: float = 10.0) -> None:
        """Block until everything appended so far is committed."""
        with self._lock:
            target = self._queued
            self._wake.set()
            self._now.set()
            if not self._flushed.wait_for(lambda: self._written >= target or not self._thread.is_alive(), timeout):
                raise JournalError(f"timed out writing the journal at {self.path}; is another process holding a lock?")

    def close(self) -> None:
        """Write what is queued and stop the writer thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._wake.set()
            self._now.set()
        self._thread.join(timeout=10)
        self._writer.close()

    def _run(self) -> None:
        # Idle, the writer sleeps until something is queued (no periodic wake-ups to compete with a
        # notebook's cells for the interpreter lock); then it lets a batch gather for ``_interval``
        # unless a flush, a close or a full batch wants it now.
        while True:
            self._wake.wait()
            self._now.wait(self._interval)
            with self._lock:
                batch, self._pending = self._pending, []
                closing = self._closed
                self._wake.clear()
                self._now.clear()
            if batch:
                self._write(batch)
            with self._lock:
                self._written += len(batch)
                self._flushed.notify_all()
            if closing and not self._pending:
                return

    def _write(self, batch: list[_Row]) -> None:
        for attempt in range(5):
            try:
                with self._writer:
                    self._writer.execute("BEGIN IMMEDIATE")
                    self._writer.executemany(
                        "INSERT INTO events(ts, session, watcher, kind, payload) VALUES (?, ?, ?, ?, ?)", batch
                    )
                return
            except sqlite3.OperationalError as exc:  # locked by another writer: retry shortly
                log.warning("journal write failed (%s); retrying (%d/5)", exc, attempt + 1)
                time.sleep(0.05 * (attempt + 1))
        log.error("dropped %d journal events after 5 failed writes to %s", len(batch), self.path)

    # --- reading -------------------------------------------------------------------------------

    def _reader(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = _connect(self.path, create=self._create)
            self._local.conn = conn
        return conn

    def read(self, after: int = 0, *, limit: int = 1000, session: str | None = None) -> list[JournalRow]:
        """Events with id greater than ``after``, oldest first. Corrupt rows are skipped and logged."""
        sql = "SELECT id, ts, session, watcher, kind, payload FROM events WHERE id > ?"
        args: list[Any] = [after]
        if session is not None:
            sql += " AND session = ?"
            args.append(session)
        sql += " ORDER BY id LIMIT ?"
        args.append(limit)
        rows = []
        for id_, ts, sess, watcher, kind, payload in self._reader().execute(sql, args).fetchall():
            try:
                decoded = json.loads(payload)
                if not isinstance(decoded, dict):
                    raise ValueError("payload is not an object")
            except ValueError as exc:
                log.warning("skipping corrupt journal row %d (%s)", id_, exc)
                continue
            rows.append(JournalRow(id_, ts, sess, watcher, kind, decoded))
        return rows

    def last_id(self) -> int:
        """The id of the newest committed event (0 when empty)."""
        row = self._reader().execute("SELECT COALESCE(MAX(id), 0) FROM events").fetchone()
        return int(row[0])

    # --- commands ------------------------------------------------------------------------------

    def submit_command(
        self,
        session: str,
        kind: str,
        interjection_id: str = "",
        *,
        watcher: str = "",
        payload: dict[str, Any] | None = None,
    ) -> int:
        """Record a command for the process that owns ``session``; returns its id."""
        if kind not in COMMAND_KINDS:
            raise JournalError(f"unknown command {kind!r}; expected one of {', '.join(COMMAND_KINDS)}")
        body = json.dumps(redact_value(payload or {}), ensure_ascii=False)
        cur = self._reader().execute(
            "INSERT INTO commands(ts, session, watcher, kind, interjection_id, payload) VALUES (?, ?, ?, ?, ?, ?)",
            (time.time(), session, watcher, kind, interjection_id, body),
        )
        return int(cur.lastrowid or 0)

    def commands(
        self, *, sessions: list[str] | None = None, status: str | None = "new", after: int = 0
    ) -> list[Command]:
        """Commands (by default the new ones), optionally only for ``sessions``."""
        sql = (
            "SELECT id, ts, session, watcher, kind, interjection_id, payload, status, detail FROM commands WHERE id > ?"
        )
        args: list[Any] = [after]
        if status is not None:
            sql += " AND status = ?"
            args.append(status)
        if sessions is not None:
            sql += f" AND session IN ({','.join('?' * len(sessions))})"
            args.extend(sessions)
        out = []
        for row in self._reader().execute(sql + " ORDER BY id", args).fetchall():
            try:
                payload = json.loads(row[6])
            except ValueError:
                payload = {}
            out.append(Command(row[0], row[1], row[2], row[3], row[4], row[5], payload, row[7], row[8]))
        return out

    def mark_command(self, command_id: int, status: str, detail: str = "") -> None:
        """Mark a command ``applied`` or ``failed`` (with a reason)."""
        self._reader().execute(
            "UPDATE commands SET status = ?, applied_ts = ?, detail = ? WHERE id = ?",
            (status, time.time(), detail, command_id),
        )

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
