"""``watcher journal check|migrate|prune``: look after a journal file or a PostgreSQL journal.

``check PATH`` runs SQLite's integrity check, then reads every event row by row (a damaged page
stops a scan, so rows are read in id order, stepping over what cannot be read) and reports how
many rows are readable, how many are not, and what to do. ``check URL`` reports the server, the
schema version, the rows and commands waiting, and a transaction that holds followers back.
``migrate URL`` creates or upgrades the schema; ``prune --before DATE`` (or ``--older-than 30d``, on the
journal's clock) deletes older rows.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from watcher.core.errors import JournalError
from watcher.runtime._sqlite_store import a_folder, busy, locked, refuse_foreign
from watcher.runtime.journal import Journal, journal_target


def journal_argument(text: str) -> Path | str:
    """``journal_target`` as an argparse ``type``: a bad location is a usage error saying what is wrong."""
    try:
        return journal_target(text)
    except JournalError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``journal`` subcommand (``journal check``, ``journal migrate``, ``journal prune``)."""
    jp = sub.add_parser("journal", help="check, migrate or prune a journal", description="Look after a journal.")
    jsub = jp.add_subparsers(dest="journal_command", required=True, metavar="ACTION")
    where = "the journal: a file (e.g. .watcher/journal.sqlite3) or a postgresql:// URL"
    check = jsub.add_parser("check", help="is the journal readable (a file) or healthy (a server)?")
    check.add_argument("path", type=journal_argument, help=where)
    check.set_defaults(func=run)
    migrate = jsub.add_parser("migrate", help="create or upgrade a PostgreSQL journal's schema")
    migrate.add_argument("path", type=journal_argument, help=where)
    migrate.set_defaults(func=run_migrate)
    prune = jsub.add_parser("prune", help="delete events (and finished commands) older than a date")
    prune.add_argument("path", type=journal_argument, help=where)
    cut = prune.add_mutually_exclusive_group(required=True)
    cut.add_argument("--before", type=_moment, help="a date or time (ISO 8601; UTC unless it says)")
    cut.add_argument(
        "--older-than",
        type=_age,
        metavar="AGE",
        help="an age such as 30d, 12h or 90m, counted back from the journal's clock (a server's, not this machine's)",
    )
    prune.set_defaults(func=run_prune)


def _moment(text: str) -> float:
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date; write it as 2026-11-01 or 2026-11-01T12:00"
        ) from None
    return (found if found.tzinfo else found.replace(tzinfo=UTC)).timestamp()


_AGE_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def _age(text: str) -> float:
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([dhms])\s*", text.lower())
    if found is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not an age; write it as 30d, 12h, 90m or 45s")
    return float(found.group(1)) * _AGE_UNITS[found.group(2)]


def run_migrate(args: argparse.Namespace) -> int:
    """Bring a PostgreSQL journal's schema to this watcher's version (a file is kept current when opened)."""
    if isinstance(args.path, Path):
        Journal(args.path, create=False).close()  # an existing journal only; not someone else's database
        print(f"{args.path}: a journal file is kept current when opened; nothing to migrate")
        return 0
    from watcher.runtime._pg_admin import migrate_journal

    before, after, lost = migrate_journal(args.path)
    said = "created" if before is None else ("already at" if before == after else f"upgraded from {before} to")
    print(f"journal schema {said} version {after}")
    if lost:
        print(f"  created again, empty: {', '.join(lost)} (they were missing)")
    return 0


def run_prune(args: argparse.Namespace) -> int:
    """Delete what is older than ``--before``: a busy fleet writes tens of millions of rows a day.

    A date still to come is refused by the journal's own clock (a PostgreSQL server's, not this
    machine's, which may be wrong): it would delete everything, what running sessions write included.
    ``--older-than`` counts back from that clock too, so a cron job on a host whose clock is wrong
    prunes what the journal's clock says is old.
    """
    with Journal(args.path, create=False) as journal:
        before = args.before if args.older_than is None else _journal_now(args.path) - args.older_than
        events, commands = journal.prune(before)
        print(f"{journal.where}: deleted {events} events and {commands} applied or failed commands")
    return 0


def _journal_now(target: Path | str) -> float:
    """The journal's clock now: its server's for a PostgreSQL URL, this machine's for a file (written here)."""
    if isinstance(target, Path):
        return time.time()
    from watcher.runtime._pg_admin import server_now

    return server_now(target)


def run(args: argparse.Namespace) -> int:
    """Check the journal; 0 when it is whole, 1 when damaged (with the counts), 2 when unreadable."""
    if not isinstance(args.path, Path):
        return _check_server(args.path)
    path: Path = args.path
    if path.is_dir():
        raise a_folder(path)
    if not path.is_file():
        raise JournalError(f"no journal at {path}; give the path of a journal file")
    try:
        conn = sqlite3.connect(_read_only_uri(path), uri=True, timeout=5)
        conn.text_factory = bytes
        refuse_foreign(conn, path, create=False)
    except sqlite3.DatabaseError as exc:
        if locked(exc):  # a lock is no damage: moving a busy journal aside would lose it
            raise busy(path, exc) from exc
        raise JournalError(
            f"{path} cannot be read as a journal ({exc}); move it aside (mv {path} {path}.damaged) "
            "and a new one is started"
        ) from exc
    try:
        problems = [str(r[0], "utf-8", "replace") for r in conn.execute("PRAGMA integrity_check").fetchall()]
    except sqlite3.DatabaseError as exc:  # too damaged for the check itself to finish
        problems = [str(exc)]
    try:
        readable, unreadable = _count(conn)
    finally:
        conn.close()
    whole = problems == ["ok"] and unreadable == 0
    print(f"{path}: {'ok' if whole else 'damaged'}")
    print(f"  integrity check: {'ok' if problems == ['ok'] else '; '.join(problems[:5])}")
    print(f"  events readable: {readable}, unreadable: {unreadable}")
    if not whole:
        print(f"  to start afresh: mv {path} {path}.damaged")
    return 0 if whole else 1


def _read_only_uri(path: Path) -> str:
    """The URI that opens ``path`` for reading only, also where nothing can be written (a read-only mount).

    A journal in WAL mode is read through a shared-memory file beside it, which SQLite must be
    able to create: in a folder nobody can write to, it is opened as ``immutable`` instead (no one
    can be changing it there), else SQLite says "unable to open database file" of a whole journal.
    """
    uri = f"{path.resolve().as_uri()}?mode=ro"
    folder = path.resolve().parent
    try:
        frozen = bool(os.statvfs(folder).f_flag & os.ST_RDONLY) or not os.access(folder, os.W_OK)
    except OSError:
        frozen = False
    return uri + "&immutable=1" if frozen else uri


def _count(conn: sqlite3.Connection) -> tuple[int, int]:
    """Rows whose payload decodes as a JSON object, and rows that do not (or cannot be read: an
    estimate from the ids stepped over)."""
    readable = unreadable = 0
    last = 0
    step = 1
    while True:
        try:
            batch = conn.execute(
                "SELECT id, CAST(payload AS BLOB) FROM events WHERE id > ? ORDER BY id LIMIT 500", (last,)
            ).fetchall()
        except sqlite3.DatabaseError:
            top = _max_id(conn)
            if top is None or last >= top:
                return readable, unreadable
            step = min(step, top - last)
            unreadable += step  # a damaged page: step over ids, twice as many each time, and try again
            last += step
            step *= 2
            continue
        step = 1
        if not batch:
            return readable, unreadable
        for id_, payload in batch:
            last = id_
            try:
                ok = isinstance(json.loads(bytes(payload or b"").decode("utf-8")), dict)
            except (ValueError, RecursionError):
                ok = False
            readable += ok
            unreadable += not ok


def _max_id(conn: sqlite3.Connection) -> int | None:
    try:
        return int(conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()[0])
    except (sqlite3.DatabaseError, TypeError):
        return None


def _check_server(url: str) -> int:
    from watcher.runtime._pg_admin import inspect_journal
    from watcher.runtime._pg_messages import migrate_command
    from watcher.runtime._pg_schema import VERSION

    health = inspect_journal(url)
    print(f"{health.where}: {'ok' if health.ok else 'needs attention'} (PostgreSQL {health.server})")
    if health.version is None:
        print(f"  schema: none yet; run `{migrate_command(health.where)}`")
    elif health.version > VERSION:
        print(f"  schema: version {health.version}, newer than this watcher's {VERSION}: upgrade watcher here")
    elif health.version != VERSION:
        print(
            f"  schema: version {health.version}, this watcher needs {VERSION}; run `{migrate_command(health.where)}`"
        )
    elif health.missing:
        print(
            f"  schema: version {health.version} without {', '.join(health.missing)}; run `{migrate_command(health.where)}`"
        )
    else:
        print(f"  schema: version {health.version}")
    print(f"  events: about {health.events}; commands waiting: {health.commands_waiting}")
    if health.oldest_transaction_s >= 60:
        print(
            f"  a transaction has been open for {health.oldest_transaction_s:.0f}s: followers wait for it; "
            "end it, or set idle_in_transaction_session_timeout"
        )
    return 0 if health.ok else 1
