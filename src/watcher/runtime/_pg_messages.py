"""What a PostgreSQL journal's failures mean for a person: one line each, saying what is wrong and what to do.

Every message names the journal by its label (``journal_label``: no password) and quotes only the
first line of a driver's message; none carries a traceback.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from watcher.core.errors import JournalError
from watcher.runtime._pg_pool import POOL_SIZE

try:
    import psycopg
except ImportError as exc:  # the extra is not installed: say how to get it
    raise JournalError(
        "a postgresql:// journal needs psycopg: pip install 'watcher-agents[postgres]'; or give a file path instead"
    ) from exc

__all__ = [
    "CANCELLED_HINT",
    "LOCK_TIMEOUT_S",
    "cancelled_error",
    "connect_error",
    "create_privilege_error",
    "first_line",
    "locked_error",
    "lost_tables_error",
    "migrate_command",
    "no_schema_error",
    "privilege_error",
]

# a statement waits this long for a lock another session holds (a migration, a VACUUM FULL), then says so
LOCK_TIMEOUT_S = 10.0


def migrate_command(where: str) -> str:
    """The command that creates or upgrades the journal at ``where``, quoted for a shell (a URL may hold ``&``)."""
    return f"watcher journal migrate {shlex.quote(where)}"


def first_line(exc: BaseException) -> str:
    """The first line of a driver's message (its detail and hint lines are for a server's log)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def connect_error(where: str, exc: BaseException) -> JournalError:
    """What a failed connection (or first statement) means for the user, and what to do about it."""
    text = first_line(exc)
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return privilege_error(where, exc)
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return cancelled_error(where, exc)
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return locked_error(where, exc)
    if "password authentication failed" in text or "no pg_hba.conf entry" in text:
        hint = "check the user and password in the URL, and the server's pg_hba.conf"
    elif "does not exist" in text and "database" in text:
        hint = "create the database (createdb) or name an existing one in the URL"
    elif "role" in text and "does not exist" in text:
        hint = "create that role on the server (createuser) or name another user in the URL"
    elif any(said in text for said in ("too many connections", "too many clients", "connection slots")):
        hint = (
            f"the server takes no more connections: raise max_connections (or the role's CONNECTION LIMIT), or put "
            f"PgBouncer in front; each watcher process holds up to {POOL_SIZE + 1}"
        )
    elif "unsupported startup parameter" in text:
        hint = (
            "a connection pooler (PgBouncer) stands there and refuses that URL parameter: leave it out of the URL and "
            "set it for the user instead (ALTER ROLE … SET search_path = …), or connect to the server itself"
        )
    elif "SSL" in text or "certificate" in text:
        hint = "the URL's SSL settings and the server's disagree: correct sslmode (or the certificate paths) in the URL"
    elif "timeout expired" in text:
        hint = (
            "it did not answer in time: check that it runs and is not overloaded, and that no firewall drops the link"
        )
    elif text.startswith(("connection is bad: invalid", "invalid", "bad value")) or "connection option" in text:
        hint = "correct that part of the URL (WATCHER_JOURNAL or --journal)"
    else:
        hint = "start the server or correct the host and port in the URL (WATCHER_JOURNAL or --journal)"
    return JournalError(f"cannot reach the journal's PostgreSQL server at {where} ({text}): {hint}")


def create_privilege_error(where: str, exc: BaseException) -> JournalError:
    """The URL's user may not create the journal's tables (PostgreSQL 15 gives no one but the owner CREATE on public)."""
    return JournalError(
        f"the user of {where} may not create the journal's tables there ({first_line(exc)}): run "
        f"`{migrate_command(where)}` as the database's owner, or have it GRANT CREATE ON SCHEMA (or DATABASE) to this user"
    )


def privilege_error(where: str, exc: BaseException) -> JournalError:
    """The URL's user may not touch the journal's tables: say so, and how to grant it."""
    return JournalError(
        f"the user of {where} may not use the journal there ({first_line(exc)}): connect as the user that ran "
        "`watcher journal migrate`, or have it grant this one SELECT, INSERT, UPDATE and DELETE on the journal's tables"
    )


def lost_tables_error(where: str, lost: Sequence[str]) -> JournalError:
    """The journal's schema is recorded as current, but tables of it are gone (dropped, or a partial restore)."""
    return JournalError(
        f"the journal at {where} lacks some of its tables ({', '.join(lost)}): `{migrate_command(where)}` creates "
        "them again (empty: what they held is gone unless a backup has it)"
    )


def no_schema_error(where: str) -> JournalError:
    """The URL's ``search_path`` (in its ``options``) names no schema that exists in the database."""
    return JournalError(
        f"the journal at {where} has no schema to live in: the search_path in the URL's options names none that "
        "exists in that database; create it (CREATE SCHEMA name) or correct the URL"
    )


CANCELLED_HINT = (
    "a statement_timeout set for this user or database, or in the URL's options, may be too short for the "
    "journal: raise it (ALTER ROLE … SET statement_timeout = '1min')"
)


def cancelled_error(where: str, exc: BaseException) -> JournalError:
    """The server cancelled a statement: its ``statement_timeout`` (or a person's ``pg_cancel_backend``)."""
    return JournalError(f"the journal's server at {where} cancelled a statement ({first_line(exc)}): {CANCELLED_HINT}")


def locked_error(where: str, exc: BaseException) -> JournalError:
    """Another session on the server has held a journal table locked longer than ``LOCK_TIMEOUT_S``."""
    return JournalError(
        f"the journal at {where} has been locked by another session on its server for over {LOCK_TIMEOUT_S:g}s "
        f"({first_line(exc)}; a migration, a VACUUM FULL or a LOCK TABLE): retry once it is done; "
        "pg_stat_activity names the session holding it"
    )
