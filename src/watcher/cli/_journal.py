"""``watcher journal check PATH``: is this journal readable, and how much of it?

Runs SQLite's integrity check, then reads every event row by row (a damaged page stops a scan,
so rows are read in id order, stepping over what cannot be read) and reports how many rows are
readable, how many are not, and what to do.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path
from typing import Any

from watcher.core.errors import JournalError


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``journal`` subcommand (``journal check``)."""
    jp = sub.add_parser("journal", help="inspect a journal file", description="Inspect a watcher journal.")
    jsub = jp.add_subparsers(dest="journal_command", required=True, metavar="ACTION")
    check = jsub.add_parser("check", help="run SQLite's integrity check and count the readable rows")
    check.add_argument("path", type=Path, help="the journal file (e.g. .watcher/journal.sqlite3)")
    check.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check the journal; 0 when it is whole, 1 when damaged (with the counts), 2 when unreadable."""
    path: Path = args.path
    if not path.is_file():
        raise JournalError(f"no journal at {path}; give the path of a journal file")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        conn.text_factory = bytes
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
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
