"""The PostgreSQL journal's schema, versioned: what ``watcher journal migrate`` creates or upgrades.

Each version is one script run in one transaction under an advisory lock, so two processes that
migrate at once do it once. ``watcher_schema`` holds the version a database is at.

Order: ``tx`` is the id of the transaction that wrote a row (``pg_current_xact_id()``); readers
read by ``(tx, id)`` below the oldest transaction still running, so a row committed late is never
skipped (ids are taken at insert, in another order than commits). The partial index on new
commands keeps claims fast however many applied commands pile up. Version 2 adds ``leases``: who
leads a fleet's supervision, until when (the server's clock). Version 3 adds ``task_claims``: which
task host runs which task of a run shared by several hosts. Version 4 gives ``commands`` the same
``tx`` column as ``events``, so an editor following new commands reads them in commit order too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["TABLES", "VERSION", "creates_in", "migrate", "missing_tables", "schema_version"]

MIGRATIONS: dict[int, str] = {
    1: """
CREATE TABLE IF NOT EXISTS events (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
    ts double precision NOT NULL,
    session text NOT NULL,
    watcher text NOT NULL DEFAULT '',
    kind text NOT NULL,
    payload text NOT NULL
);
CREATE INDEX IF NOT EXISTS events_order ON events(tx, id);
CREATE INDEX IF NOT EXISTS events_session ON events(session, tx, id);
CREATE INDEX IF NOT EXISTS events_kind ON events(kind, tx, id);
CREATE INDEX IF NOT EXISTS events_ts ON events(ts);
CREATE TABLE IF NOT EXISTS commands (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ts double precision NOT NULL DEFAULT extract(epoch FROM clock_timestamp()),
    session text NOT NULL,
    watcher text NOT NULL DEFAULT '',
    kind text NOT NULL,
    interjection_id text NOT NULL DEFAULT '',
    payload text NOT NULL DEFAULT '{}',
    status text NOT NULL DEFAULT 'new',
    claimed_at timestamptz,
    applied_ts double precision,
    detail text NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS commands_new ON commands(session, id) WHERE status = 'new';
CREATE INDEX IF NOT EXISTS commands_claimed ON commands(session, claimed_at) WHERE status = 'claimed';
""",
    2: """
CREATE TABLE IF NOT EXISTS leases (name text PRIMARY KEY, holder text NOT NULL, until timestamptz NOT NULL);
""",
    3: """
CREATE TABLE IF NOT EXISTS task_claims (
    grp text NOT NULL, task text NOT NULL, host text NOT NULL, beat timestamptz NOT NULL DEFAULT now(),
    started boolean NOT NULL DEFAULT false, PRIMARY KEY (grp, task)
);
""",
    4: """
ALTER TABLE commands ADD COLUMN IF NOT EXISTS tx xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX IF NOT EXISTS commands_order ON commands(tx, id);
""",
}
VERSION = max(MIGRATIONS)
TABLES = ("events", "commands", "leases", "task_claims")  # what the journal's current version has

_LOCK = 0x77617463  # "watc": the advisory lock migrations take


def schema_version(conn: Any) -> int | None:
    """The version this database's journal schema is at; None when it has none yet."""
    found = conn.execute("SELECT to_regclass('watcher_schema') IS NOT NULL").fetchone()
    if not found or not found[0]:
        return None
    row = conn.execute("SELECT max(version) FROM watcher_schema").fetchone()
    return int(row[0]) if row and row[0] is not None else None


def creates_in(conn: Any) -> str | None:
    """The schema the journal's tables are (or would be) created in; None when the search_path names none that exists."""
    row = conn.execute("SELECT current_schema()").fetchone()
    return str(row[0]) if row and row[0] is not None else None


def missing_tables(conn: Any) -> list[str]:
    """The journal's tables this database lacks (dropped by hand, or a half-restored dump)."""
    row = conn.execute("SELECT ARRAY[" + ", ".join(f"to_regclass('{t}') IS NULL" for t in TABLES) + "]").fetchone()
    return [table for table, gone in zip(TABLES, row[0] if row else [], strict=False) if gone]


def migrate(conn: Any, limits: Sequence[str] = ()) -> tuple[int | None, int, list[str]]:
    """Bring the schema to ``VERSION``: (version before, version after, tables it had to create again).

    ``limits`` (``SET LOCAL …``) run first in its transaction: a lock it waits for is bounded
    behind a pooler too, where the session's own settings are not the journal's.

    Every script only creates what is not there (``IF NOT EXISTS``), so a journal whose version is
    current but which lost a table has every script run again, which recreates it (empty).
    """
    with conn.transaction():
        for limit in limits:
            conn.execute(limit)
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS watcher_schema (version int NOT NULL, at timestamptz DEFAULT now())")
        before = schema_version(conn)
        lost = missing_tables(conn) if before is not None else []
        for version in sorted(MIGRATIONS):
            if before is None or version > before or lost:
                conn.execute(MIGRATIONS[version])
            if before is None or version > before:
                conn.execute("INSERT INTO watcher_schema(version) VALUES (%s)", (version,))
    return before, VERSION, lost
