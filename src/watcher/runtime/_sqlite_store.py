"""The SQLite store: one journal file in WAL mode, the embedded default for one machine.

One writer lock serialises commits, so a row's id is its position: ``id > cursor`` misses
nothing. Each thread reads on its own connection. A file another process holds locked raises
``StoreBusy`` on write (the journal retries) and a clear ``JournalError`` on read.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from watcher.core.errors import JournalError
from watcher.core.logs import logger
from watcher.runtime._store import SETTLED, CommandRow, EventRow, Fences, Mark, RawEvent, StoreBusy, future_cutoff

__all__ = [
    "SqliteStore",
    "a_folder",
    "busy",
    "connect",
    "damaged",
    "locked",
    "not_a_file",
    "not_a_journal",
    "refuse_foreign",
]

log = logger(__name__)

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
CREATE TABLE IF NOT EXISTS leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, until REAL NOT NULL);
CREATE TABLE IF NOT EXISTS task_claims (
    grp TEXT NOT NULL, task TEXT NOT NULL, host TEXT NOT NULL, beat REAL NOT NULL, started INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (grp, task)
);
"""

PRUNE_BATCH = 5000  # rows a prune deletes a transaction: writers wait milliseconds for the lock, not the whole prune
_EVENT_COLUMNS = "id, ts, session, watcher, kind, CAST(payload AS BLOB)"
_COMMAND_COLUMNS = "id, ts, session, watcher, kind, interjection_id, payload, status, detail"


def damaged(path: Path, exc: BaseException) -> JournalError:
    """The error for a journal file SQLite cannot read: what is wrong, and what to do.

    A write to a journal opened read-only (on a read-only filesystem) fails too, and is no damage.
    """
    if _read_only_error(exc):
        return read_only(path)
    return JournalError(
        f"the journal at {path} is damaged ({exc}). Run `watcher journal check {path}` to see how many "
        f"rows are readable, then move it aside (mv {path} {path}.damaged) so a new one is started."
    )


def read_only(path: Path) -> JournalError:
    """The error for a write to a journal on a read-only filesystem: it can be read, not written."""
    return JournalError(
        f"the journal at {path} is on a read-only filesystem: it can be read, but nothing can be written to it "
        "(no event, no command from an editor). To record, set WATCHER_JOURNAL to a path on a writable disk."
    )


def _read_only_error(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF == sqlite3.SQLITE_READONLY


def _cannot_open(path: Path, exc: BaseException) -> JournalError:
    return JournalError(
        f"cannot open the journal at {path}: {exc}. Check the folder is writable, or set "
        "WATCHER_JOURNAL to another path."
    )


def busy(path: Path, exc: BaseException) -> JournalError:
    """The error for a journal another process holds locked: it is whole, so wait, not move it aside."""
    return JournalError(
        f"the journal at {path} is locked by another process ({exc}); wait for that process to finish "
        "(or end it if it is stuck), then retry"
    )


def a_folder(path: Path) -> JournalError:
    """The error for a journal path that names a folder (SQLite only says "unable to open")."""
    if path.suffix in (".sqlite3", ".sqlite", ".db"):  # a journal's own path, taken by a folder: move that aside
        return JournalError(f"{path} is a folder, not a journal file; move the folder aside, or give another path")
    return JournalError(
        f"{path} is a folder, not a journal file; give the path of a file, such as {path / 'journal.sqlite3'}"
    )


def not_a_file(path: Path) -> JournalError:
    """The error for a journal path that names a pipe, a socket or a device (SQLite says "disk I/O error")."""
    kind = "a named pipe" if path.is_fifo() else "a socket" if path.is_socket() else "a device"
    return JournalError(
        f"{path} is {kind}, not a journal file; give the path of a file, such as .watcher/journal.sqlite3"
    )


def not_a_journal(path: Path, why: str) -> JournalError:
    """The error for a database that is not watcher's: it is someone else's, so it is left untouched."""
    return JournalError(
        f"{path} is not a watcher journal ({why}); give the path of a watcher journal, or a new file for one"
    )


def locked(exc: sqlite3.Error) -> bool:
    """True for "database is locked"/"busy": another process holds the journal; retrying helps."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


def _lenient_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def tables(conn: sqlite3.Connection) -> set[str]:
    """The names of the tables in the database ``conn`` is open on."""
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name) for (name,) in rows}


def refuse_foreign(conn: sqlite3.Connection, path: Path, *, create: bool) -> None:
    """Raise unless ``conn`` is on a watcher journal, or on an empty database that may become one.

    A database with tables but no ``events`` is someone else's: watcher must not switch it to WAL
    or add its schema to it. An empty one (a 0-byte file) is a journal only for a caller that may
    create one; ``journal prune`` or ``migrate`` on it would otherwise write a schema silently.
    """
    found = tables(conn)
    if "events" in found:
        return
    if found:
        shown = ", ".join(sorted(found)[:5]) + (", ..." if len(found) > 5 else "")
        raise not_a_journal(path, f"it has no events table; its tables are {shown}")
    if not create:
        raise not_a_journal(path, "it is empty: no events table, no tables at all")


def connect(path: Path, *, timeout: float = 5.0, create: bool = True, verify: bool = False) -> sqlite3.Connection:
    """A connection to the journal file in WAL mode; ``create=False`` never makes a file.

    ``verify`` first refuses a file that is not a watcher journal (see ``refuse_foreign``), before
    WAL mode changes it.
    """
    if path.is_dir():
        raise a_folder(path)
    if path.exists() and not path.is_file():
        raise not_a_file(path)
    try:
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                keep_out_of_git(path)
            # as a file: URI, always: SQLite (built with URI names on) would read a path starting with
            # "file:" as a URI of another file, and ":memory:" as no file at all
            conn = sqlite3.connect(
                path.absolute().as_uri(), timeout=timeout, isolation_level=None, check_same_thread=False, uri=True
            )
        else:  # mode=rw: open an existing file read-write, never create one
            conn = _existing(path, timeout)
    except (OSError, sqlite3.Error) as exc:
        raise _cannot_use(path, exc) from exc
    try:
        if verify:
            refuse_foreign(conn, path, create=create)
        if not getattr(conn, "read_only", False):
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
    except (OSError, sqlite3.Error, JournalError) as exc:
        conn.close()
        if isinstance(exc, JournalError):
            raise
        raise _cannot_use(path, exc) from exc
    return conn


class _ReadOnly(sqlite3.Connection):
    """A connection to a journal on a read-only filesystem: it reads; a write fails saying so."""

    read_only = True


def _existing(path: Path, timeout: float) -> sqlite3.Connection:
    """The journal file at ``path`` opened read-write; on a read-only filesystem, read-only.

    A project on a read-only mount (an archive, a container's volume) still has findings an editor
    can show. SQLite reads a WAL journal read-only when its ``-shm`` file is there to read; one
    closed cleanly has none, and nothing can change it through this mount, so it is read as
    immutable.
    """
    base = path.resolve().as_uri()

    def open_as(query: str, factory: type[sqlite3.Connection] = sqlite3.Connection) -> sqlite3.Connection:
        return sqlite3.connect(
            f"{base}?{query}", timeout=timeout, isolation_level=None, check_same_thread=False, uri=True, factory=factory
        )

    conn = open_as("mode=rw")
    if os.access(path.parent, os.W_OK) or not os.access(path, os.R_OK):
        return conn  # a writable folder: whatever fails is said by the statements that meet it
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # sqlite opens the file at the first statement
        return conn
    except sqlite3.OperationalError:
        conn.close()
    last: sqlite3.Error | None = None
    for query in ("mode=ro", "mode=ro&immutable=1"):
        conn = open_as(query, _ReadOnly)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:
            conn.close()
            last = exc
            continue
        log.info("the journal %s is on a read-only filesystem: it is read, and nothing can be written to it", path)
        return conn
    assert last is not None
    raise last


def keep_out_of_git(path: Path) -> None:
    """A ``.gitignore`` beside a new journal in a project's ``.watcher`` folder, naming the journal's files.

    The journal is this checkout's own record (and large): an agent's ``git add -A`` must not
    commit it. The rest of the folder (``policy.toml``) stays tracked, and a ``.gitignore``
    someone already keeps there is left as it is.
    """
    ignore = path.parent / ".gitignore"
    if path.parent.name != ".watcher" or ignore.exists():
        return
    with contextlib.suppress(OSError):  # a read-only folder: the journal's own open says what is wrong
        ignore.write_text(
            f"# watcher's journal: this checkout's own record, never committed\n/{path.name}\n/{path.name}-*\n",
            encoding="utf-8",
        )


def _cannot_use(path: Path, exc: OSError | sqlite3.Error) -> JournalError:
    """Why a journal file could not be opened: locked (wait), damaged (move it aside), or unreachable."""
    if isinstance(exc, sqlite3.Error) and locked(exc):  # the file is whole: moving it aside would lose it
        return busy(path, exc)
    if type(exc) is sqlite3.DatabaseError:  # not a database, malformed: the file, not the folder
        return damaged(path, exc)
    if path.is_symlink() and not path.exists():  # "check the folder is writable" would send a person to the wrong one
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return JournalError(
            f"the journal at {path} is a symbolic link to {target}, which leads nowhere (a missing folder, or a "
            "loop of links); point it at a journal file or remove it"
        )
    return _cannot_open(path, exc)


class SqliteStore:
    """The journal's statements on one SQLite file; safe to share between threads."""

    def __init__(self, path: Path, *, create: bool) -> None:
        self.path = path
        self.where = str(path)
        self._create = create
        if not create and not path.exists():
            raise JournalError(f"no journal at {path} yet; a watched session creates it when it starts")
        self._writer = connect(path, create=create, verify=True)
        try:
            self._writer.executescript(SCHEMA)
        except sqlite3.OperationalError as exc:
            self._writer.close()
            if not locked(exc):
                raise JournalError(
                    f"{path} is not a watcher journal ({exc}); move it aside or set WATCHER_JOURNAL"
                ) from exc
            # an older journal gains an index on first open; another process holds it locked now
            raise busy(path, exc) from exc
        except sqlite3.Error as exc:
            self._writer.close()
            raise JournalError(
                f"{path} is not a watcher journal ({exc}); move it aside or set WATCHER_JOURNAL"
            ) from exc
        self._local = threading.local()
        self._file = _identity(path)  # the file opened: one deleted or moved aside meanwhile is noticed
        self._generation = 0  # bumped when a new file is opened at the path: readers reconnect

    def _reopened(self) -> None:
        """Open a new journal at ``path`` when the one in use was deleted or moved aside (``rm -rf
        .watcher``, ``git clean -fdx``, a damaged journal moved away): what is written next is not lost
        into a file nobody can read."""
        if _identity(self.path) == self._file:
            return
        log.warning(
            "the journal %s was deleted or replaced while in use; a new one is started there (what the old file "
            "held went with it)",
            self.path,
        )
        self._writer.close()
        self._writer = connect(self.path, create=True, verify=True)
        self._writer.executescript(SCHEMA)
        self._file = _identity(self.path)
        self._generation += 1

    def append(self, rows: Sequence[EventRow], *, wake: bool, fences: Fences | None = None) -> set[int]:
        try:
            self._reopened()
            with self._writer:
                self._writer.execute("BEGIN IMMEDIATE")
                lost: set[int] = set()
                if fences:  # each command settled here only while this process's claim on it holds
                    for command_id, claim in set(fences.values()):
                        settled = self._writer.execute(
                            "UPDATE commands SET status = 'applied', detail = ? "
                            "WHERE id = ? AND status = 'claimed' AND applied_ts = ?",
                            (SETTLED, command_id, claim),
                        )
                        if settled.rowcount == 0:
                            lost.add(command_id)
                kept = (
                    rows if not lost else [r for i, r in enumerate(rows) if (fences or {}).get(i, (0,))[0] not in lost]
                )
                self._writer.executemany(
                    "INSERT INTO events(ts, session, watcher, kind, payload) VALUES (?, ?, ?, ?, ?)", kept
                )
                return lost
        except sqlite3.Error as exc:
            if locked(exc):
                raise StoreBusy(f"locked by another process ({type(exc).__name__}: {exc})") from exc
            if type(exc) is sqlite3.DatabaseError:  # malformed, not a database
                raise damaged(self.path, exc) from exc
            if _read_only_error(exc):
                raise read_only(self.path) from exc
            if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
                raise JournalError(
                    f"cannot write the journal at {self.path}: its disk is full. Free some space on it "
                    "or set WATCHER_JOURNAL to a path on another disk."
                ) from exc
            raise JournalError(f"cannot write the journal at {self.path}: {exc}.") from exc

    def _reader(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "generation", 0) != self._generation:
            conn.close()  # the file it read was replaced: read the new one
            conn = None
        if conn is None:
            conn = connect(self.path, create=self._create)
            conn.text_factory = _lenient_text  # one bad column must not make a whole batch unreadable
            self._local.conn, self._local.generation = conn, self._generation
        return conn

    def _run(self, sql: str, args: Any = ()) -> sqlite3.Cursor:
        """Run a statement; a damaged file becomes a ``JournalError`` saying what to do."""
        try:
            return self._reader().execute(sql, args)
        except sqlite3.OperationalError as exc:
            if locked(exc):
                raise busy(self.path, exc) from exc
            raise damaged(self.path, exc) from exc
        except sqlite3.DatabaseError as exc:
            raise damaged(self.path, exc) from exc

    def _query(self, sql: str, args: Any = ()) -> list[Any]:
        cursor = self._run(sql, args)
        try:
            return cursor.fetchall()
        except sqlite3.DatabaseError as exc:
            raise damaged(self.path, exc) from exc

    def events(self, after: int, limit: int, session: str | None, kinds: Sequence[str] | None) -> list[RawEvent]:
        sql = f"SELECT {_EVENT_COLUMNS} FROM events WHERE id > ?"
        args: list[Any] = [after]
        if session is not None:
            sql += " AND session = ?"
            args.append(session)
        if kinds is not None:
            sql += f" AND kind IN ({', '.join('?' * len(kinds))})"
            args += kinds
        return self._query(sql + " ORDER BY id LIMIT ?", [*args, limit])

    def latest(self, kind: str, after: int, upto: int | None) -> list[tuple[int, str, bytes | str | None]]:
        return self._query(
            "SELECT MAX(id), session, CAST(payload AS BLOB) FROM events WHERE id > ? AND id <= ? AND kind = ? "
            "GROUP BY session",
            [after, 2**62 if upto is None else upto, kind],
        )

    def tail(self, session: str, kinds: Sequence[str], limit: int) -> list[RawEvent]:
        return self._query(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE session = ? AND kind IN ({', '.join('?' * len(kinds))}) "
            "ORDER BY id DESC LIMIT ?",
            [session, *kinds, limit],
        )

    def head(self) -> int:
        return int(self._query("SELECT COALESCE(MAX(id), 0) FROM events")[0][0])

    def submit_command(self, session: str, watcher: str, kind: str, interjection_id: str, payload: str) -> int:
        cursor = self._run(
            "INSERT INTO commands(ts, session, watcher, kind, interjection_id, payload) VALUES (?, ?, ?, ?, ?, ?)",
            (time.time(), session, watcher, kind, interjection_id, payload),
        )
        return int(cursor.lastrowid or 0)

    def commands(self, after: int, status: str | None, sessions: Sequence[str] | None) -> list[CommandRow]:
        return self._query(*_commands_sql(after, status, sessions))

    def commands_now(self, after: int, status: str | None, sessions: Sequence[str] | None) -> list[CommandRow] | None:
        """``commands`` on a connection of this thread's that never waits for a lock: None when it would.

        A read of the file takes microseconds, so an event loop can make it itself, unless another
        process holds the file locked (then the caller reads on a thread, which may wait).
        """
        try:
            conn: sqlite3.Connection | None = getattr(self._local, "now", None)
            if conn is None:
                conn = connect(self.path, timeout=0, create=self._create)
                conn.text_factory = _lenient_text
                self._local.now = conn
            rows: list[CommandRow] = conn.execute(*_commands_sql(after, status, sessions)).fetchall()
            return rows
        except (sqlite3.Error, JournalError):
            return None

    def command_feed(self, after: int, limit: int) -> list[tuple[int, CommandRow]]:
        rows = self._query(f"SELECT {_COMMAND_COLUMNS} FROM commands WHERE id > ? ORDER BY id LIMIT ?", (after, limit))
        return [(row[0], row) for row in rows]  # one writer at a time: commit order is id order

    def claim_commands(self, sessions: Sequence[str], limit: int) -> list[tuple[CommandRow, float]]:
        # one statement under the writer lock: two processes never claim the same command; applied_ts holds
        # the time of the claim until the command is marked applied or failed, and is the claim's token
        rows = self._query(
            "UPDATE commands SET status = 'claimed', applied_ts = ? WHERE id IN (SELECT id FROM commands "
            f"WHERE status = 'new' AND session IN ({','.join('?' * len(sessions))}) ORDER BY id LIMIT ?) "
            f"RETURNING {_COMMAND_COLUMNS}, applied_ts",
            (time.time(), *sessions, limit),
        )
        return sorted((tuple(row[:-1]), float(row[-1])) for row in rows)

    def release_claims(self, older_than_s: float, sessions: Sequence[str]) -> int:
        cursor = self._run(
            "UPDATE commands SET status = 'new', applied_ts = NULL, "
            "detail = 'released: the process that claimed it stopped before applying it' "
            f"WHERE status = 'claimed' AND applied_ts < ? AND session IN ({','.join('?' * len(sessions))})",
            (time.time() - older_than_s, *sessions),
        )
        return int(cursor.rowcount)

    def mark_commands(self, marks: Sequence[Mark]) -> None:
        # a claimed command is marked only while the claim is still this process's (its token, the
        # claim's time, unchanged: a claim released and taken by another process has another)
        now = time.time()
        try:
            conn = self._reader()
            with conn:
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany(
                    "UPDATE commands SET status = ?, applied_ts = ?, detail = ? "
                    "WHERE id = ? AND (? IS NULL OR (applied_ts = ? AND status IN ('claimed', 'applied')))",
                    [(status, now, detail, command_id, claim, claim) for command_id, status, detail, claim in marks],
                )
        except sqlite3.OperationalError as exc:
            if locked(exc):
                raise busy(self.path, exc) from exc
            raise damaged(self.path, exc) from exc
        except sqlite3.DatabaseError as exc:
            raise damaged(self.path, exc) from exc

    def hold_lease(self, name: str, holder: str, ttl_s: float) -> bool:
        now = time.time()  # one machine: its clock is every holder's clock
        return bool(
            self._query(
                "INSERT INTO leases(name, holder, until) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE SET "
                "holder = excluded.holder, until = excluded.until WHERE leases.holder = excluded.holder OR leases.until < ? "
                "RETURNING holder",
                (name, holder, now + ttl_s, now),
            )
        )

    def drop_lease(self, name: str, holder: str) -> None:
        self._run("DELETE FROM leases WHERE name = ? AND holder = ?", (name, holder))

    def claim_task(self, group: str, task: str, host: str, lost_after_s: float) -> bool:
        now = time.time()
        return bool(
            self._query(
                "INSERT INTO task_claims(grp, task, host, beat) VALUES (?, ?, ?, ?) ON CONFLICT(grp, task) DO UPDATE "
                "SET host = excluded.host, beat = excluded.beat WHERE task_claims.started = 0 "
                "AND (task_claims.host = excluded.host OR task_claims.beat < ?) "
                "RETURNING host",
                (group, task, host, now, now - lost_after_s),
            )
        )

    def start_task(self, group: str, task: str, host: str) -> None:
        self._run("UPDATE task_claims SET started = 1 WHERE grp = ? AND task = ? AND host = ?", (group, task, host))

    def beat_claims(self, group: str, host: str) -> None:
        self._run("UPDATE task_claims SET beat = ? WHERE grp = ? AND host = ?", (time.time(), group, host))

    def started_tasks(self, group: str) -> set[str]:
        return {row[0] for row in self._query("SELECT task FROM task_claims WHERE grp = ? AND started = 1", (group,))}

    def prune(self, before_ts: float) -> tuple[int, int]:
        # a file is written and pruned on one machine: its clock is the store's
        if (refused := future_cutoff(before_ts, time.time(), self.where, "this machine's clock")) is not None:
            raise refused
        # a batch a transaction: one DELETE of millions of rows would hold the file's writer lock for
        # as long, and every writer would wait on it (SQLite's busy timeout, then retries)
        events = self._prune_batches(
            "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE ts < ? LIMIT ?)", before_ts
        )
        commands = self._prune_batches(
            "DELETE FROM commands WHERE id IN (SELECT id FROM commands WHERE ts < ? "
            "AND status IN ('applied', 'failed') LIMIT ?)",
            before_ts,
        )
        return events, commands

    def _prune_batches(self, sql: str, before_ts: float) -> int:
        deleted = 0
        while True:
            done = int(self._run(sql, (before_ts, PRUNE_BATCH)).rowcount)
            deleted += max(done, 0)
            if done < PRUNE_BATCH:
                return deleted

    def wait(self, timeout: float) -> bool:
        time.sleep(timeout)  # a file has no way to wake a reader: polling alone finds news
        return False

    def close(self) -> None:
        self._writer.close()  # readers' connections stay with their threads (a read may be in flight)


def _commands_sql(after: int, status: str | None, sessions: Sequence[str] | None) -> tuple[str, list[Any]]:
    sql = f"SELECT {_COMMAND_COLUMNS} FROM commands WHERE id > ?"
    args: list[Any] = [after]
    if status is not None:
        sql += " AND status = ?"
        args.append(status)
    if sessions is not None:
        sql += f" AND session IN ({','.join('?' * len(sessions))})"
        args.extend(sessions)
    return sql + " ORDER BY id", args


def _identity(path: Path) -> tuple[int, int] | None:
    """The (device, inode) of the file at ``path``, None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)
