"""The journal: one SQLite file (WAL) where processes meet.

``events`` is append-only: every observation, evaluation, interjection and delivery, with an
integer id so any reader can follow by id. ``commands`` goes the other way: inject, dismiss,
accept or edit requests written by a language server or a widget, applied by the process that
owns the session and marked applied or failed.

One writer thread per ``Journal`` batches event writes in short transactions, so the asyncio loop
never waits on the disk. Secrets are redacted before anything is written, and a payload that
cannot be stored as is (too long, lone surrogates, nested too deep) is clipped and says so.

Nothing confirmed is lost: a batch is retried, with backoff, for as long as another process
holds the journal locked; ``flush`` returns only once everything appended before it is committed,
and raises ``JournalError`` (naming the file and the cause) if it never will be. A writer that
meets anything but a lock (a damaged file, a full disk) stops, logs once, and every later
``flush`` says why. Readers skip (and count) rows they cannot decode, and report a damaged file
as a ``JournalError`` saying what to do.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from watcher.core.errors import JournalError
from watcher.core.logs import logger
from watcher.core.redact import redact_value
from watcher.runtime._storable import encode_payload
from watcher.runtime.events import Event, event_from_payload

__all__ = ["Command", "Journal", "JournalRow", "default_journal_path", "project_root"]

log = logger("watcher.journal")

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
CREATE INDEX IF NOT EXISTS events_kind ON events(kind, id);
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

# inject/accept/edit/dismiss act on interjections; nudge/pause/resume/abort on fleet tasks (session fleet:<task>)
COMMAND_KINDS = ("inject", "accept", "edit", "dismiss", "nudge", "pause", "resume", "abort")


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


def _lenient_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


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
    except sqlite3.DatabaseError as exc:
        if type(exc) is sqlite3.DatabaseError:  # not a database, malformed: the file, not the folder
            raise damaged(path, exc) from exc
        raise JournalError(
            f"cannot open the journal at {path}: {exc}. Check the folder is writable, or set "
            "WATCHER_JOURNAL to another path."
        ) from exc
    except (OSError, sqlite3.Error) as exc:
        raise JournalError(
            f"cannot open the journal at {path}: {exc}. Check the folder is writable, or set "
            "WATCHER_JOURNAL to another path."
        ) from exc


_Row = tuple[float, str, str, str, str]


def _encode(event: Event) -> _Row | None:
    """The ``events`` row for ``event``, storable and redacted; None (logged) if it has no payload."""
    try:
        data = event.payload()
    except Exception:  # a bug in one event class must not break its publisher (logged with its traceback)
        log.exception("cannot journal a %s event of session %r; skipped", event.kind, event.session)
        return None
    return (event.ts, event.session, event.watcher, event.kind, encode_payload(data))


def _locked(exc: sqlite3.Error) -> bool:
    """True for "database is locked"/"busy": another process holds the journal; retrying helps."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


def damaged(path: Path, exc: BaseException) -> JournalError:
    """The error for a journal file SQLite cannot read: what is wrong, and what to do."""
    return JournalError(
        f"the journal at {path} is damaged ({exc}). Run `watcher journal check {path}` to see how many "
        f"rows are readable, then move it aside (mv {path} {path}.damaged) so a new one is started."
    )


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
        except sqlite3.OperationalError as exc:
            if not _locked(exc):
                raise JournalError(
                    f"{self.path} is not a watcher journal ({exc}); move it aside or set WATCHER_JOURNAL"
                ) from exc
            # an older journal gains an index on first open; another process holds it locked now
            raise JournalError(f"the journal at {self.path} is locked by another process ({exc}); retry") from exc
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
        self._abandon = False  # close() gave up waiting for a locked journal: stop retrying
        self._failure: JournalError | None = None  # why the writer stopped, if it did
        self._lost = 0  # events appended after the writer stopped (never written)
        self._cause = ""  # the last error a write met, for messages
        self.skipped = 0  # rows readers could not decode (skipped, logged, counted)
        self._bad: set[int] = set()
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
                    log.debug("events appended to the closed journal at %s are not written", self.path)
                return
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
                    f"{target - self._written} events are not yet written to the journal at {self.path} after "
                    f"{timeout:g}s ({self._cause or 'no answer from the writer'}); is another process holding "
                    "it locked? They are still being retried."
                )

    def _raise_if_lost(self) -> None:
        if self._failure is not None:
            unwritten = self._queued - self._written + self._lost
            raise JournalError(f"{self._failure} {unwritten} events were not written.")
        if self._lost:
            raise JournalError(f"{self._lost} events were appended to the journal at {self.path} after it was closed")

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
            self._thread.join()
        self._writer.close()
        with self._lock:
            unwritten = self._queued - self._written
            if unwritten and self._failure is None:
                raise JournalError(
                    f"{unwritten} events could not be written to the journal at {self.path} within {timeout:g}s "
                    f"of closing it ({self._cause}); another process held it locked"
                )
            if self._failure is not None and unwritten:
                self._raise_if_lost()

    def _run(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # noqa: BLE001 - the writer must never die silently
            self._stop(JournalError(f"the journal writer for {self.path} stopped: {type(exc).__name__}: {exc}."))

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
                closing = self._closed
                self._wake.clear()
                self._now.clear()
            if batch and not self._write(batch):
                return
            with self._lock:
                self._written += len(batch)
                self._flushed.notify_all()
                if closing and not self._pending:
                    return

    def _write(self, batch: list[_Row]) -> bool:
        """Commit ``batch``, retrying while the journal is locked; False when the writer must stop."""
        attempt = 0
        started = time.monotonic()
        warned = 0.0
        while True:
            try:
                with self._writer:
                    self._writer.execute("BEGIN IMMEDIATE")
                    self._writer.executemany(
                        "INSERT INTO events(ts, session, watcher, kind, payload) VALUES (?, ?, ?, ?, ?)", batch
                    )
                if attempt:
                    log.warning("the journal at %s is free again; %d events written", self.path, len(batch))
                return True
            except sqlite3.Error as exc:
                self._cause = f"{type(exc).__name__}: {exc}"
                if not _locked(exc):
                    self._stop(
                        damaged(self.path, exc)
                        if type(exc) is sqlite3.DatabaseError  # malformed, not a database
                        else JournalError(f"cannot write the journal at {self.path}: {exc}.")
                    )
                    return False
            waited = time.monotonic() - started
            if waited - warned >= 30 or attempt == 0:  # a lock held long is worth saying, not every retry
                log.warning("the journal at %s is locked by another process (%s); retrying", self.path, self._cause)
                warned = waited
            with self._lock:
                if self._abandon:
                    return False
            attempt += 1
            time.sleep(min(0.05 * 2**attempt, 1.0))

    # --- reading -------------------------------------------------------------------------------

    def _reader(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = _connect(self.path, create=self._create)
            conn.text_factory = _lenient_text  # one bad column must not make a whole batch unreadable
            self._local.conn = conn
        return conn

    def _query(self, sql: str, args: Any = ()) -> list[Any]:
        """Run a reading query; a damaged file becomes a ``JournalError`` saying what to do."""
        try:
            return self._reader().execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:
            if _locked(exc):
                raise JournalError(f"the journal at {self.path} is locked by another process ({exc}); retry") from exc
            raise damaged(self.path, exc) from exc
        except sqlite3.DatabaseError as exc:
            raise damaged(self.path, exc) from exc

    def read(
        self, after: int = 0, *, limit: int = 1000, session: str | None = None, kinds: Collection[str] | None = None
    ) -> list[JournalRow]:
        """Events with id greater than ``after``, oldest first (only of ``kinds``, if given: filtered in SQL).

        A row whose payload is not UTF-8 or not a JSON object is skipped with one log line and
        counted in ``skipped``; the rows after it are read as usual. A damaged file raises
        ``JournalError``.
        """
        sql = "SELECT id, ts, session, watcher, kind, CAST(payload AS BLOB) FROM events WHERE id > ?"
        extra: list[Any] = []
        if session is not None:
            sql += " AND session = ?"
            extra.append(session)
        if kinds is not None:
            wanted = sorted(kinds)
            sql += f" AND kind IN ({', '.join('?' * len(wanted))})"
            extra += wanted
        sql += " ORDER BY id LIMIT ?"
        while True:  # a batch of nothing but bad rows must not look like the end: read on past it
            raw = self._query(sql, [after, *extra, limit])
            rows = [row for row in map(self._decode, raw) if row is not None]
            if rows or len(raw) < limit:
                return rows
            after = raw[-1][0]

    def _decode(self, raw: tuple[Any, ...]) -> JournalRow | None:
        id_, ts, session, watcher, kind, payload = raw
        decoded = self._payload(id_, payload)
        if decoded is None:
            return None
        return JournalRow(id_, float(ts), str(session), str(watcher), str(kind), decoded)

    def _payload(self, id_: int, payload: bytes | None) -> dict[str, Any] | None:
        """A row's payload as a dict, or None (logged once, counted in ``skipped``) when it is not one."""
        try:
            try:
                decoded = orjson.loads(payload or b"")
            except orjson.JSONDecodeError:  # not UTF-8, not JSON, or JSON orjson refuses (a 65-bit int)
                decoded = json.loads(bytes(payload or b"").decode("utf-8"))
            if not isinstance(decoded, dict):
                raise ValueError("the payload is not a JSON object")
        except (ValueError, RecursionError) as exc:
            with self._lock:
                first = id_ not in self._bad
                self._bad.add(id_)
            if first:  # one log line per bad row, however often it is read
                self.skipped += 1
                log.warning("skipping corrupt journal row %d in %s (%s)", id_, self.path, exc)
            return None
        return decoded

    def latest(self, kind: str, after: int = 0, *, upto: int | None = None) -> list[tuple[int, str, dict[str, Any]]]:
        """The newest row of ``kind`` of each session among rows ``after`` < id <= ``upto``: (id, session, payload).

        For summaries whose counters are cumulative (a fleet task's ``TaskTurn``): a reader that
        only needs where each session stands decodes one row per session, not every row written.
        """
        raw = self._query(
            "SELECT MAX(id), session, CAST(payload AS BLOB) FROM events WHERE id > ? AND id <= ? AND kind = ? "
            "GROUP BY session",
            [after, upto if upto is not None else 2**62, kind],
        )
        return [
            (id_, session, payload) for id_, session, blob in raw if (payload := self._payload(id_, blob)) is not None
        ]

    def tail(self, session: str, *, kinds: Collection[str], limit: int = 30) -> list[JournalRow]:
        """The newest ``limit`` rows of ``session`` of ``kinds``, oldest first (a task's recent activity)."""
        wanted = sorted(kinds)
        raw = self._query(
            "SELECT id, ts, session, watcher, kind, CAST(payload AS BLOB) FROM events WHERE session = ? "
            f"AND kind IN ({', '.join('?' * len(wanted))}) ORDER BY id DESC LIMIT ?",
            [session, *wanted, limit],
        )
        return [row for row in map(self._decode, reversed(raw)) if row is not None]

    def last_id(self) -> int:
        """The id of the newest committed event (0 when empty)."""
        return int(self._query("SELECT COALESCE(MAX(id), 0) FROM events")[0][0])

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
        for row in self._query(sql + " ORDER BY id", args):
            try:
                payload = json.loads(row[6])
            except ValueError:
                payload = {}
            out.append(Command(row[0], row[1], row[2], row[3], row[4], row[5], payload, row[7], row[8]))
        return out

    def claim_command(self, command_id: int) -> bool:
        """Take a new command for this process (status ``claimed``); False when another process took it first.

        ``applied_ts`` holds the time of the claim until the command is marked applied or failed.
        """
        cursor = self._reader().execute(
            "UPDATE commands SET status = 'claimed', applied_ts = ? WHERE id = ? AND status = 'new'",
            (time.time(), command_id),
        )
        return cursor.rowcount == 1

    def release_claims(self, older_than_s: float, sessions: list[str]) -> int:
        """Put back to ``new`` the commands of ``sessions`` claimed over ``older_than_s`` ago and never marked.

        The process that claimed them stopped before applying them (it crashed or was killed); a
        live poller takes them again. Returns how many were released.
        """
        if not sessions:
            return 0
        cursor = self._reader().execute(
            "UPDATE commands SET status = 'new', applied_ts = NULL, "
            "detail = 'released: the process that claimed it stopped before applying it' "
            f"WHERE status = 'claimed' AND applied_ts < ? AND session IN ({','.join('?' * len(sessions))})",
            (time.time() - older_than_s, *sessions),
        )
        return int(cursor.rowcount)

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
