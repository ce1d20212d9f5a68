"""The journal behind a connection pooler (PgBouncer, in transaction mode above all): no state kept in a session.

In transaction mode a pooler hands the server session to another client once a transaction
ends, so whatever a client leaves in a session is lost to it and given to someone else: a
``SET`` (the journal's lock and idle timeouts would apply to other applications' statements, and
not to its own), a server-side prepared statement (psycopg prepares a query run five times:
the sixth fails with "prepared statement "_pg3_0" already exists"), a ``LISTEN``.

A pooler is told apart at connect: the process id a server gives a client at startup is the
server process's own (``pg_backend_pid()``), while a pooler gives one of its own making. Behind
one the journal keeps nothing in the session, whatever the mode (a pooler in session mode does
not say so): no prepared statements, each statement in a transaction of its own that sets the
journal's limits for itself (``SET LOCAL``), sent with them as one message (the same round trip),
and no ``LISTEN`` (readers poll, as they do for a file).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Protocol

import psycopg

__all__ = ["OwnTransactions", "Statements", "behind_pooler", "in_own_transaction"]


class Statements(Protocol):
    """What the journal's statements need of a connection: ``execute``."""

    def execute(self, query: Any, params: Any = ...) -> psycopg.Cursor[Any]: ...


def behind_pooler(conn: psycopg.Connection[Any]) -> bool:
    """True when ``conn`` reaches its server through a pooler (one round trip; asked once per connection)."""
    row = conn.execute("SELECT pg_backend_pid()", prepare=False).fetchone()
    return bool(row) and int(row[0]) != conn.info.backend_pid  # type: ignore[index]


def in_own_transaction(
    conn: psycopg.Connection[Any], limits: Sequence[str], sql: str, args: Any
) -> psycopg.Cursor[Any]:
    """``sql`` run in a transaction of its own that first runs ``limits`` (``SET LOCAL …``), all as one message.

    Returns a cursor on ``sql``'s result (rows, ``rowcount``). Parameters are bound on this side
    (a message of several statements takes none), by psycopg's quoting. After an error the
    transaction is rolled back before the connection goes back to the pool.
    """
    cur = psycopg.ClientCursor(conn)
    try:
        cur.execute("; ".join(["BEGIN", *limits, sql, "COMMIT"]), args or None)
    except psycopg.Error:
        if conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR:
            with contextlib.suppress(psycopg.Error):
                conn.execute("ROLLBACK")
        raise
    for _ in range(len(limits) + 1):  # past BEGIN and each SET LOCAL, to the statement's own result
        cur.nextset()
    return cur


class OwnTransactions:
    """A connection behind a pooler as the journal's statements see it: each ``execute`` is ``in_own_transaction``."""

    def __init__(self, conn: psycopg.Connection[Any], limits: Sequence[str]) -> None:
        self._conn = conn
        self._limits = limits

    def execute(self, query: Any, params: Any = None) -> psycopg.Cursor[Any]:
        return in_own_transaction(self._conn, self._limits, str(query), params)
