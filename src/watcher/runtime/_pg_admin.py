"""Operating a PostgreSQL journal: create or upgrade its schema, and say how it is doing.

``watcher journal migrate URL`` and ``watcher journal check URL`` call these. Each failure is a
``JournalError`` naming the server, the database and what to do; no driver traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from watcher.core.errors import JournalError
from watcher.runtime._pg_messages import (
    connect_error,
    create_privilege_error,
    first_line,
    locked_error,
    no_schema_error,
    privilege_error,
)
from watcher.runtime._pg_schema import VERSION, creates_in, migrate, missing_tables, schema_version
from watcher.runtime._pg_store import configure, limits
from watcher.runtime._pg_urls import conninfo
from watcher.runtime._store import journal_label

try:
    import psycopg
except ImportError as exc:  # pragma: no cover - the extra is part of [all]
    raise JournalError("a postgresql:// journal needs psycopg: pip install 'watcher-agents[postgres]'") from exc

__all__ = ["JournalHealth", "inspect_journal", "migrate_journal", "server_now"]


@dataclass(frozen=True, slots=True)
class JournalHealth:
    """What ``journal check`` reports about a PostgreSQL journal."""

    where: str
    server: str
    version: int | None
    events: int
    commands_waiting: int
    oldest_transaction_s: float  # a transaction open this long holds every follower back
    missing: tuple[str, ...] = ()  # tables of the current schema the database lacks

    @property
    def ok(self) -> bool:
        """The schema is this watcher's and no transaction holds the followers back for a minute."""
        return self.version == VERSION and not self.missing and self.oldest_transaction_s < 60


def _connect(target: str, where: str) -> psycopg.Connection[Any]:
    """A connection to the journal's server; whatever keeps it from being made is said as ``connect_error``
    (a bad parameter value such as ``connect_timeout=abc`` is a ``ProgrammingError``, not an outage)."""
    try:
        return psycopg.connect(target, autocommit=True)
    except psycopg.Error as exc:
        raise connect_error(where, exc) from exc


def migrate_journal(url: str) -> tuple[int | None, int, list[str]]:
    """Create or upgrade the journal schema at ``url``: (version before, version now, tables created again)."""
    where = journal_label(url)
    target = conninfo(url, connect_timeout=5)
    try:
        with _connect(target, where) as conn:
            configure(conn)
            found = schema_version(conn)
            if found is None and creates_in(conn) is None:
                raise no_schema_error(where)
            if found is not None and found > VERSION:
                raise JournalError(
                    f"the journal at {where} has schema version {found}, newer than this watcher's {VERSION}: "
                    "upgrade watcher on this machine"
                )
            return migrate(conn, limits())
    except psycopg.errors.LockNotAvailable as exc:
        raise locked_error(where, exc) from exc
    except psycopg.errors.InsufficientPrivilege as exc:
        raise create_privilege_error(where, exc) from exc
    except psycopg.OperationalError as exc:
        raise connect_error(where, exc) from exc
    except psycopg.Error as exc:
        raise JournalError(f"cannot migrate the journal at {where}: {first_line(exc)}") from exc


def inspect_journal(url: str) -> JournalHealth:
    """The journal at ``url`` as the server sees it now."""
    where = journal_label(url)
    target = conninfo(url, connect_timeout=5)
    try:
        with _connect(target, where) as conn:
            configure(conn)
            server = str(conn.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]
            version = schema_version(conn)
            if version is None and creates_in(conn) is None:
                raise no_schema_error(where)
            events = waiting = 0
            missing = tuple(missing_tables(conn)) if version is not None else ()
            if version is not None and not missing:
                # an estimate for a big table (counting 86 M rows a day would take minutes)
                events = int(conn.execute("SELECT COALESCE(max(id), 0) FROM events").fetchone()[0])  # type: ignore[index]
                waiting = int(
                    conn.execute("SELECT count(*) FROM commands WHERE status IN ('new', 'claimed')").fetchone()[0]  # type: ignore[index]
                )
            oldest = conn.execute(
                "SELECT COALESCE(max(extract(epoch FROM now() - xact_start)), 0) FROM pg_stat_activity "
                "WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()"
            ).fetchone()
    except psycopg.errors.LockNotAvailable as exc:
        raise locked_error(where, exc) from exc
    except psycopg.errors.InsufficientPrivilege as exc:
        raise privilege_error(where, exc) from exc
    except psycopg.OperationalError as exc:
        raise connect_error(where, exc) from exc
    except psycopg.Error as exc:
        raise JournalError(f"cannot check the journal at {where}: {first_line(exc)}") from exc
    return JournalHealth(where, server, version, events, waiting, float(oldest[0]) if oldest else 0.0, missing)


def server_now(url: str) -> float:
    """The time on the journal's server (Unix seconds): the clock a cut-off is counted back from, not this host's."""
    where = journal_label(url)
    try:
        with _connect(conninfo(url, connect_timeout=5), where) as conn:
            row = conn.execute("SELECT extract(epoch FROM now())::float8", prepare=False).fetchone()
    except psycopg.Error as exc:
        raise connect_error(where, exc) from exc
    return float(row[0]) if row else 0.0
