"""The PostgreSQL store: one journal that task hosts, supervisors and editors on many machines share.

Order with many writers: ids are taken at insert but rows become visible at commit, in another
order, so ``id > cursor`` skips rows committed late (8 % of them under four writing processes).
A reader instead reads by ``(tx, id)``, where ``tx`` is the writing transaction's id, and only
below the oldest transaction still running (``pg_snapshot_xmin``): everything it has not seen
then lies ahead of its cursor. A position packs the pair into one int: ``tx << 64 | id`` (``_pg_order``).

Time: claims and leases use the server's ``now()``; nothing compares two machines' clocks (``_pg_commands``).

Connections: a pool per process (at most ``POOL_SIZE``), plus one direct connection that
LISTENs, opened only by a reader that waits. Writers NOTIFY once per batch that holds a decision
or a command (NOTIFY takes a global lock at commit, so never for each observation); a wake-up
only shortens a reader's sleep, polling alone keeps it correct. Behind a connection pooler
(PgBouncer) nothing is kept in a session and nobody LISTENs: see ``_pg_pooler``.

Durability: each commit is as durable as the server is configured to make it (``synchronous_commit``);
the journal never turns that down. An operator who accepts losing the last fraction of a second of
observations in a server crash (as SQLite's WAL with ``synchronous=NORMAL`` may) says so for the
journal's own database: ``ALTER DATABASE … SET synchronous_commit = off`` (README).

A batch is one transaction whose id is read before its rows are sent: when the link breaks
between the commit and its answer, the retry asks the server whether that transaction committed,
so a batch is never written twice (three round trips a batch instead of one; about 0.4 ms more on
a loopback link).

A server that is down or restarting makes writes raise ``StoreBusy`` (the journal retries them as
it does a locked file) and reads a ``JournalError`` that names the server, the database and what
to do; no driver traceback reaches a user.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from watcher.core.errors import JournalError
from watcher.core.logs import logger
from watcher.runtime._pg_schema import VERSION, creates_in, migrate, missing_tables, schema_version
from watcher.runtime._store import EventRow, Fences, RawEvent, StoreBusy, future_cutoff, journal_label

try:
    import psycopg
    from psycopg_pool import PoolTimeout

    from watcher.runtime._pg_commands import CHANNEL, PostgresCoordination, Proof
    from watcher.runtime._pg_messages import (
        CANCELLED_HINT,
        LOCK_TIMEOUT_S,
        cancelled_error,
        connect_error,
        create_privilege_error,
        first_line,
        locked_error,
        lost_tables_error,
        migrate_command,
        no_schema_error,
        privilege_error,
    )
    from watcher.runtime._pg_order import VISIBLE, position, split
    from watcher.runtime._pg_pool import POOL_SIZE, JournalPool, Watch, Watchdog
    from watcher.runtime._pg_pooler import OwnTransactions, Statements, behind_pooler, in_own_transaction
    from watcher.runtime._pg_urls import conninfo
except ImportError as exc:  # the extra is not installed: say how to get it
    raise JournalError(
        "a postgresql:// journal needs psycopg: pip install 'watcher-agents[postgres]'; or give a file path instead"
    ) from exc

__all__ = ["PostgresStore", "configure", "limits", "position", "split"]

log = logger("watcher.journal")
# the pool logs every failed reconnection; the journal says once that the server is away, and when it is back
logging.getLogger("psycopg.pool").setLevel(logging.ERROR)

IDLE_IN_TRANSACTION_S = 30.0  # the server ends a transaction of ours that waits this long for its next statement
# a statement whose server has not answered for this long is given up (its link cut): a hung server
QUERY_TIMEOUT_S = 30.0
REREAD_S = 1.0  # how long a read retried past a dead pooled connection waits for a new one
PRUNE_BATCH = 5000  # rows a prune deletes a transaction: each takes milliseconds, so followers read on meanwhile
RETRY_S = 5.0  # how long a command (submit, claim, mark) retries a server that went away: SQLite's busy timeout
# a link that goes dead (a partition) fails a statement within seconds instead of TCP's quarter of an hour
LINK = {"connect_timeout": 10, "keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2, "keepalives_count": 3,
        "tcp_user_timeout": 10_000}  # fmt: skip
# the same on the server's side of each of our connections (settable by any user; a socket ignores them)
SERVER_LINK = {
    "tcp_keepalives_idle": 5,
    "tcp_keepalives_interval": 2,
    "tcp_keepalives_count": 3,
    "tcp_user_timeout": 10_000,
}
_T = TypeVar("_T")

# ``tx`` as is (psycopg reads an xid8 as text): a selected ``tx::text`` would also be what ``ORDER BY tx``
# sorts, as text, putting transaction 10 before 9
_EVENT_COLUMNS = "tx, id, ts, session, watcher, kind, payload"
_UNREACHABLE = (psycopg.OperationalError, PoolTimeout)


def configure(conn: psycopg.Connection[Any]) -> bool:
    """Session settings of every journal connection: no statement waits on another session's lock unbounded,
    and a transaction of ours left open ends instead of holding back every follower (they read below
    the oldest running transaction): one left idle by its client, after ``IDLE_IN_TRANSACTION_S``;
    one whose host was cut off, once the server's own keepalives (``SERVER_LINK``, the client's
    ``LINK`` mirrored) find the link dead, in seconds rather than the system's two hours.

    Behind a connection pooler nothing is set in the session, which the pooler may hand to another
    client (``_pg_pooler``): the limits are set in each transaction (``limits``) and no statement is
    prepared on the server. Returns True when ``conn`` is behind a pooler.
    """
    if behind_pooler(conn):
        conn.prepare_threshold = None
        return True
    link = "; ".join(f"SET {name} = {value}" for name, value in SERVER_LINK.items())
    conn.execute(
        f"SET lock_timeout = '{LOCK_TIMEOUT_S:g}s'; SET idle_in_transaction_session_timeout = "
        f"'{IDLE_IN_TRANSACTION_S:g}s'; {link}"
    )
    return False


def _configure_pooled(conn: psycopg.Connection[Any]) -> None:
    """``configure`` for each connection the pool opens (all reach the server as the first one did)."""
    configure(conn)


def limits() -> list[str]:
    """The limits of ``configure`` for one transaction (``SET LOCAL``): what a transaction sets behind a pooler."""
    return [
        f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT_S:g}s'",
        f"SET LOCAL idle_in_transaction_session_timeout = '{IDLE_IN_TRANSACTION_S:g}s'",
    ]


def _begin(conn: psycopg.Connection[Any]) -> tuple[str, int]:
    """Open a transaction on ``conn`` that sets its own limits (one round trip): its id, and the server process
    that runs it (asked of the server: a pooler gives its clients a process id of its own making)."""
    local = limits()
    cur = conn.execute("; ".join(["BEGIN", *local, "SELECT pg_current_xact_id(), pg_backend_pid()"]))
    for _ in range(len(local) + 1):
        cur.nextset()
    row = cur.fetchone()
    return (str(row[0]), int(row[1])) if row else ("0", 0)


class PostgresStore(PostgresCoordination):
    """The journal's statements on a PostgreSQL database; safe to share between threads."""

    def __init__(self, url: str, *, create: bool, pool_size: int = POOL_SIZE) -> None:
        self.url = url
        self.where = journal_label(url)
        self._conninfo = conninfo(url, **LINK)
        try:
            with psycopg.connect(self._conninfo, autocommit=True) as conn:
                self._pooled = configure(conn)
                found = schema_version(conn)
                if found is None and creates_in(conn) is None:
                    raise no_schema_error(self.where)
                if found is None and create:
                    try:
                        migrate(conn, limits())
                    except psycopg.errors.InsufficientPrivilege as exc:
                        raise create_privilege_error(self.where, exc) from exc
                    found = VERSION
                lost = missing_tables(conn) if found == VERSION else []
        except psycopg.Error as exc:
            raise connect_error(self.where, exc) from exc
        if found is None:
            raise JournalError(f"no journal at {self.where} yet: run `{migrate_command(self.where)}`")
        if found < VERSION:
            raise JournalError(
                f"the journal at {self.where} has schema version {found}, older than this watcher's {VERSION}: "
                f"run `{migrate_command(self.where)}` (once, from any machine)"
            )
        if found > VERSION:
            raise JournalError(
                f"the journal at {self.where} has schema version {found}, newer than this watcher's {VERSION}: "
                "upgrade watcher on this machine"
            )
        if lost:
            raise lost_tables_error(self.where, lost)
        if self._pooled:
            log.info(
                "the journal at %s is reached through a connection pooler: nothing is kept in a session, and "
                "readers poll (LISTEN needs a direct connection)",
                self.where,
            )
        self._pool = JournalPool(
            self._conninfo,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True, "application_name": "watcher"},
            timeout=RETRY_S,
            configure=_configure_pooled,
            reconnect_timeout=float("inf"),  # a server down for long comes back: keep trying
            name="watcher-journal",
            open=True,
        )
        self._news = threading.Condition()
        self._wakes = 0
        self._listener: threading.Thread | None = None
        self._closed = False
        self._watchdog = Watchdog()
        # the batch being written, its transaction's id and server process, until the commit's answer comes
        self._unsure: tuple[Sequence[EventRow], str, int, EventRow | None] | None = None

    # --- events ----------------------------------------------------------------------------------

    def append(self, rows: Sequence[EventRow], *, wake: bool, fences: Fences | None = None) -> set[int]:
        """Write ``rows`` in one transaction; a retry of a batch whose commit went unanswered never writes it twice.

        The transaction's id is read before its rows are sent. When the link breaks after the commit
        was sent and before its answer came, the server may have committed: the retry of the same
        batch first asks the server how that transaction ended (``pg_xact_status``) and writes the
        rows again only if it did not commit. ``fences``: the rows that are a command's effect are
        written, and the command marked applied, in the same transaction, only while its claim holds.
        """
        if self._unsure is not None:
            batch, xid, pid, first = self._unsure
            ours = (
                "SELECT EXISTS (SELECT 1 FROM events WHERE tx = %s::xid8 AND ts = %s AND session = %s AND kind = %s)",
                (xid, first[0], first[1], first[3]) if first else (xid, 0.0, "", ""),
            )
            # a batch that wrote no row (each a command's effect whose claim was lost) proves nothing: as not landed
            landed = self._landed(xid, pid, ours) if batch is rows and first else False
            if landed is None:  # kept: asked again at the next retry
                raise StoreBusy(
                    "not yet saying whether it took a batch whose answer was lost; asking again",
                    "If it stays so, start the server or restore the link",
                )
            self._unsure = None
            if landed:
                log.info("the journal at %s had taken a batch whose answer was lost: not written twice", self.where)
                return set()
        committed = False
        lost: set[int] = set()
        try:
            with self._pool.connection() as conn, self._watchdog.watching(conn, QUERY_TIMEOUT_S):
                # three round trips: the transaction and its id, the rows, the commit (a fourth settles commands)
                cur = conn.cursor()
                xid, pid = _begin(conn)
                kept = rows
                if fences:
                    lost = self.settle(conn, fences)
                    if lost:
                        kept = [row for i, row in enumerate(rows) if fences.get(i, (0, 0.0))[0] not in lost]
                self._unsure = (rows, xid, pid, kept[0] if kept else None)
                with cur.copy("COPY events(ts, session, watcher, kind, payload) FROM STDIN") as copy:
                    for row in kept:
                        copy.write_row(row)
                conn.execute("COMMIT")
                self._unsure = None
                committed = True
                if wake:  # once committed, so a reader it wakes sees the rows
                    conn.execute(f"NOTIFY {CHANNEL}")
        except (*_UNREACHABLE, psycopg.Error) as exc:
            if committed:  # only the wake-up is lost: readers find the rows by polling
                log.debug("the journal at %s took a batch but not its wake-up (%s)", self.where, first_line(exc))
            elif isinstance(exc, psycopg.errors.LockNotAvailable):
                raise StoreBusy(
                    f"locked by another session on its server ({first_line(exc)})",
                    "pg_stat_activity names the session holding it: end it if it is stuck",
                ) from exc
            elif isinstance(exc, psycopg.errors.QueryCanceled):
                raise StoreBusy(f"cancelling its statements ({first_line(exc)})", CANCELLED_HINT) from exc
            elif isinstance(exc, _UNREACHABLE):
                raise StoreBusy(
                    f"not answering: its server is down or unreachable ({first_line(exc)})",
                    "If it stays so, start the server or restore the link",
                ) from exc
            elif isinstance(exc, psycopg.errors.InsufficientPrivilege):
                raise privilege_error(self.where, exc) from exc
            else:
                self._unsure = None  # the server answered with an error: the transaction did not commit
                raise JournalError(f"cannot write the journal at {self.where}: {first_line(exc)}") from exc
        return lost

    def _landed(self, xid: str, pid: int, ours: tuple[str, Sequence[Any]]) -> bool | None:
        """Whether transaction ``xid``, whose commit went unanswered, committed; None while the server cannot say.

        A transaction still running belongs to a session the server has not yet seen die (a link
        cut): it is ended first (``pg_terminate_backend``, allowed on one's own sessions), so it
        cannot commit after its work is done again.

        A server that crashed before writing any of the transaction's log comes back with its
        transaction counter behind ``xid`` ("transaction ID … is in the future"), as does a standby
        promoted behind its primary: no commit of it is on record there, so it did not commit (a
        commit is on disk before it is answered). Asking again would never get another answer.
        Back from such a crash, the server hands the same transaction ids out again: a committed
        ``xid`` may be another writer's. ``ours`` (a query, ``SELECT EXISTS …``) tells whether what
        the transaction wrote is there: else ours did not commit, and skipping it would lose it.
        """
        status = "SELECT pg_xact_status(%s::xid8)"
        try:
            with self._pool.connection() as conn, self._watchdog.watching(conn, QUERY_TIMEOUT_S):
                found = conn.execute(status, (xid,)).fetchone()
                if found and found[0] == "in progress":
                    conn.execute(
                        "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
                        "WHERE pid = %s AND backend_xid = xid(%s::xid8)",
                        (pid, xid),
                    )
                    found = conn.execute(status, (xid,)).fetchone()
                if found and found[0] == "committed":
                    mine = conn.execute(ours[0], ours[1]).fetchone()
                    if not (mine and mine[0]):
                        log.info("the journal at %s: a transaction id of a lost batch was used again", self.where)
                        return False
        except psycopg.errors.InvalidParameterValue as exc:  # "transaction ID … is in the future"
            log.info(
                "the journal at %s has no record of a batch whose answer was lost (%s)", self.where, first_line(exc)
            )
            return False
        except psycopg.Error:
            return None
        if found and found[0] == "in progress":
            return None
        return bool(found and found[0] == "committed")

    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        try:
            return self._read(sql, args)
        except psycopg.errors.LockNotAvailable as exc:
            raise locked_error(self.where, exc) from exc
        except psycopg.errors.QueryCanceled as exc:
            raise cancelled_error(self.where, exc) from exc
        except psycopg.errors.InsufficientPrivilege as exc:
            raise privilege_error(self.where, exc) from exc
        except _UNREACHABLE as exc:
            raise JournalError(
                f"the journal's PostgreSQL server at {self.where} is not answering ({first_line(exc)}); "
                "retrying will work once it is back"
            ) from exc
        except psycopg.errors.UndefinedTable as exc:
            raise lost_tables_error(self.where, [first_line(exc)]) from exc
        except psycopg.Error as exc:
            raise JournalError(f"cannot read the journal at {self.where}: {first_line(exc)}") from exc

    def _read(self, sql: str, args: Sequence[Any]) -> list[Any]:
        """Run a read, past the pooled connections a restarted server left dead.

        After a restart every idle connection of the pool is closed on the server's side, and the
        pool learns it only by using one: a read that meets one tries the next, then a new one
        (waiting at most ``REREAD_S`` for it), so a server already back is never reported away.
        """
        for attempt in range(POOL_SIZE + 1):
            conn: psycopg.Connection[Any] | None = None
            watch: Watch | None = None
            try:
                with (
                    self._pool.connection(timeout=REREAD_S if attempt else None) as conn,
                    self._watchdog.watching(conn, QUERY_TIMEOUT_S) as watch,
                ):
                    if self._pooled:
                        return in_own_transaction(conn, limits(), sql, args).fetchall()
                    return conn.execute(sql, args).fetchall()
            except PoolTimeout:
                raise
            except psycopg.OperationalError as exc:
                if watch is not None and watch.cut:
                    raise JournalError(
                        f"the journal's PostgreSQL server at {self.where} did not answer a read within "
                        f"{QUERY_TIMEOUT_S:g}s: it may be hung or overloaded; retrying will work once it answers"
                    ) from exc
                if conn is None or not conn.broken or attempt == POOL_SIZE:
                    raise
                log.debug("a pooled connection to %s was dead (%s); reading on another", self.where, first_line(exc))
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    @staticmethod
    def _rows(raw: list[Any]) -> list[RawEvent]:
        return [
            (position(tx, id_), ts, session, watcher, kind, payload)
            for tx, id_, ts, session, watcher, kind, payload in raw
        ]

    def events(self, after: int, limit: int, session: str | None, kinds: Sequence[str] | None) -> list[RawEvent]:
        sql = f"SELECT {_EVENT_COLUMNS} FROM events WHERE (tx, id) > (%s::xid8, %s) AND {VISIBLE}"
        args: list[Any] = list(split(after))
        if session is not None:
            sql += " AND session = %s"
            args.append(session)
        if kinds is not None:
            sql += " AND kind = ANY(%s)"
            args.append(list(kinds))
        return self._rows(self._query(sql + " ORDER BY tx, id LIMIT %s", [*args, limit]))

    def latest(self, kind: str, after: int, upto: int | None) -> list[tuple[int, str, bytes | str | None]]:
        sql = (
            "SELECT DISTINCT ON (session) tx, id, session, payload FROM events "
            f"WHERE kind = %s AND (tx, id) > (%s::xid8, %s) AND {VISIBLE}"
        )
        args: list[Any] = [kind, *split(after)]
        if upto is not None:
            sql += " AND (tx, id) <= (%s::xid8, %s)"
            args += split(upto)
        raw = self._query(sql + " ORDER BY session, tx DESC, id DESC", args)
        return [(position(tx, id_), session, payload) for tx, id_, session, payload in raw]

    def tail(self, session: str, kinds: Sequence[str], limit: int) -> list[RawEvent]:
        return self._rows(
            self._query(
                f"SELECT {_EVENT_COLUMNS} FROM events WHERE session = %s AND kind = ANY(%s) AND {VISIBLE} "
                "ORDER BY tx DESC, id DESC LIMIT %s",
                [session, list(kinds), limit],
            )
        )

    def head(self) -> int:
        found = self._query(f"SELECT tx, id FROM events WHERE {VISIBLE} ORDER BY tx DESC, id DESC LIMIT 1")
        return position(*found[0]) if found else 0

    def prune(self, before_ts: float) -> tuple[int, int]:
        """Delete what is older than ``before_ts``, ``PRUNE_BATCH`` rows a transaction.

        One DELETE of millions of rows would run for minutes as the oldest transaction: every row
        written meanwhile lies above it, and no follower would read anything new until it ended.
        """

        def cutoff(conn: Statements) -> None:
            row = conn.execute("SELECT extract(epoch FROM now())::float8").fetchone()
            refused = future_cutoff(before_ts, float(row[0]) if row else 0.0, self.where, "the server's clock")
            if refused is not None:
                raise refused

        self._retrying(cutoff)
        events = self._prune_batches(
            "DELETE FROM events WHERE id = ANY(ARRAY(SELECT id FROM events WHERE ts < %s LIMIT %s))", before_ts
        )
        commands = self._prune_batches(
            "DELETE FROM commands WHERE id = ANY(ARRAY(SELECT id FROM commands WHERE ts < %s "
            "AND status IN ('applied', 'failed') LIMIT %s))",
            before_ts,
        )
        return events, commands

    def _prune_batches(self, sql: str, before_ts: float) -> int:
        deleted = 0
        while True:
            done = self._retrying(lambda conn: conn.execute(sql, (before_ts, PRUNE_BATCH)).rowcount)
            deleted += max(done, 0)
            if done < PRUNE_BATCH:
                return deleted

    # --- statements that change the journal (commands, leases, claims: ``PostgresCoordination``) ---

    def _retrying(self, run: Callable[[Statements], _T], *, once: Proof[_T] | None = None, bounded: bool = True) -> _T:
        """``run`` on a pooled connection, retried for ``RETRY_S`` while the server does not answer.

        ``once``: ``run`` is not idempotent (an insert). It runs in a transaction whose id is read
        first; when the commit's answer is lost with the link, the server is asked how it ended
        before ``run`` is tried again, and a committed one's result is returned (``once(xid,
        result)`` is the query telling that what it wrote is there, see ``_landed``). ``bounded``: each
        try is given up after ``QUERY_TIMEOUT_S`` without an answer (not so for a long ``prune``).
        """
        started = time.monotonic()
        attempt = 0
        unsure: tuple[str, int, _T, tuple[str, Sequence[Any]]] | None = None
        while True:
            try:
                if unsure is not None:
                    landed = self._landed(*unsure[:2], unsure[3])
                    if landed:
                        return unsure[2]
                    if landed is False:
                        unsure = None
                    else:  # the server cannot say yet: as if it did not answer
                        raise psycopg.OperationalError("the outcome of a commit whose answer was lost is not known yet")
                with (
                    self._pool.connection() as conn,
                    self._watchdog.watching(conn, QUERY_TIMEOUT_S if bounded else None),
                ):
                    if once is None:
                        return run(OwnTransactions(conn, limits()) if self._pooled else conn)
                    xid, pid = _begin(conn)
                    result = run(conn)
                    unsure = (xid, pid, result, once(xid, result))
                    conn.execute("COMMIT")
                    return result
            except psycopg.errors.LockNotAvailable as exc:
                raise locked_error(self.where, exc) from exc
            except psycopg.errors.QueryCanceled as exc:
                raise cancelled_error(self.where, exc) from exc
            except psycopg.errors.InsufficientPrivilege as exc:
                raise privilege_error(self.where, exc) from exc
            except psycopg.errors.UndefinedTable as exc:
                raise lost_tables_error(self.where, [first_line(exc)]) from exc
            except _UNREACHABLE as exc:
                if time.monotonic() - started > RETRY_S:
                    raise JournalError(
                        f"the journal's PostgreSQL server at {self.where} did not answer for "
                        f"{time.monotonic() - started:.0f}s "
                        f"({first_line(exc)}); start it or check the network, then retry"
                    ) from exc
            except psycopg.Error as exc:
                raise JournalError(f"cannot update the journal at {self.where}: {first_line(exc)}") from exc
            attempt += 1
            time.sleep(min(0.05 * 2**attempt, 1.0))

    # --- wake-ups --------------------------------------------------------------------------------

    def wait(self, timeout: float) -> bool:
        if self._pooled:  # a LISTEN would stay on a server session the pooler hands to other clients
            time.sleep(timeout)
            return False
        with self._news:
            if self._listener is None and not self._closed:
                self._listener = threading.Thread(target=self._listen, name="watcher-journal-listener", daemon=True)
                self._listener.start()
            seen = self._wakes
            return self._news.wait_for(lambda: self._wakes != seen, timeout)

    def _listen(self) -> None:
        """LISTEN on a direct connection (a pooler in transaction mode cannot carry it); reconnect after outages."""
        while not self._closed:
            try:
                with psycopg.connect(self._conninfo, autocommit=True) as conn:
                    configure(conn)
                    conn.execute(f"LISTEN {CHANNEL}")
                    while not self._closed:
                        if any(True for _ in conn.notifies(timeout=0.5, stop_after=1)):
                            with self._news:
                                self._wakes += 1
                                self._news.notify_all()
            except psycopg.Error:  # the server went away: readers keep polling meanwhile
                time.sleep(1.0)

    def close(self) -> None:
        self._closed = True
        self._pool.close(timeout=1.0)  # a worker still trying a server that went away is not waited for
