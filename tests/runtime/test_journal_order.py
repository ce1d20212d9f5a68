"""Many writers, one follower: every committed row seen exactly once, each session's rows in order.

On PostgreSQL ids are taken at insert and rows become visible at commit, in another order: a
follower reading ``id > cursor`` skips rows committed late. The journal reads by transaction-id
watermark instead; the first test pins the trap down deterministically, the second runs four
writing processes against one follower.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psycopg
import pytest

from watcher.core.errors import JournalError
from watcher.core.observations import UserMessage
from watcher.runtime import Journal
from watcher.runtime.events import ObservationEvent
from watcher.testing.postgres import LocalPostgres

WRITER = textwrap.dedent(
    """
    import sys
    from watcher.core.observations import UserMessage
    from watcher.runtime import Journal
    from watcher.runtime.events import ObservationEvent
    journal = Journal(sys.argv[1], batch_interval=0.002)
    session = sys.argv[3]
    for i in range(int(sys.argv[2])):
        journal.append(ObservationEvent(session=session, observation=UserMessage(text=f"m{i}"), index=i))
        if i % 250 == 0:
            journal.flush()
    journal.close()
    """
)

INSERT = "INSERT INTO events(ts, session, watcher, kind, payload) VALUES (0, %s, '', 'observation', %s)"


def test_a_row_committed_after_a_later_id_is_not_skipped(pg_url: str) -> None:
    """Transaction A takes id 1 and commits after B's id 2: an id cursor passes 1 by; the journal does not."""
    with Journal(pg_url) as journal, psycopg.connect(pg_url) as slow, psycopg.connect(pg_url, autocommit=True) as fast:
        slow.execute(INSERT, ("slow", '{"index": 0}'))  # id 1, not committed yet
        fast.execute(INSERT, ("fast", '{"index": 1}'))  # id 2, committed
        plain = fast.execute("SELECT id FROM events WHERE id > 0 ORDER BY id").fetchall()
        assert plain == [(2,)], "an id cursor sees id 2 now and moves past id 1"
        assert journal.read() == [], "the journal holds back what a running transaction might still precede"
        slow.commit()
        assert [r.session for r in journal.read()] == ["slow", "fast"], "then both, in commit-safe order"
        assert fast.execute("SELECT id FROM events WHERE id > 2 ORDER BY id").fetchall() == [], "id 1 is lost to it"


def test_a_command_committed_after_a_later_id_is_not_skipped(pg_url: str) -> None:
    """Commands too: an editor following new commands (another client's dismissal) sees each one once."""
    add = "INSERT INTO commands(session, kind, interjection_id) VALUES ('s', 'dismiss', %s) RETURNING id"
    with Journal(pg_url) as journal, psycopg.connect(pg_url) as slow, psycopg.connect(pg_url, autocommit=True) as fast:
        slow.execute(add, ("late",))  # the lower id, not committed yet
        fast.execute(add, ("early",))  # the higher id, committed
        assert [c.interjection_id for c in journal.commands(status=None)] == ["early"], "by id: one so far"
        assert journal.commands_since() == [], "held back while a transaction that might precede it runs"
        slow.commit()
        feed = journal.commands_since()
        assert [c.interjection_id for _, c in feed] == ["late", "early"], "then both (its transaction began first)"
        assert journal.commands_since(feed[0][0]) == feed[1:], "a position is the cursor to read on from"
        assert journal.commands_since(feed[-1][0]) == []


def test_follower_under_four_writing_processes_misses_and_repeats_nothing(journal_at: Path | str) -> None:
    writers, count = 4, 1500
    follower = Journal(journal_at)
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(journal_at), str(count), f"w{n}"]) for n in range(writers)
    ]
    seen: dict[str, list[int]] = {f"w{n}": [] for n in range(writers)}
    cursor, positions = 0, []
    deadline = time.monotonic() + 120
    try:
        while sum(map(len, seen.values())) < writers * count and time.monotonic() < deadline:
            rows = follower.read(cursor, limit=500)
            for row in rows:
                seen[row.session].append(row.payload["index"])
                positions.append(row.id)
            if rows:
                cursor = rows[-1].id
            else:
                time.sleep(0.005)
    finally:
        assert all(p.wait(timeout=120) == 0 for p in procs)
    time.sleep(0.2)
    assert follower.read(cursor) == [], "nothing more arrives: no row seen twice"
    follower.close()
    for session, indices in seen.items():
        assert indices == list(range(count)), f"{session}: every row once, in order"
    assert positions == sorted(set(positions)), "positions only grow"


async def test_a_command_wakes_a_napping_reader_early(pg_url: str) -> None:
    """NOTIFY only shortens a reader's sleep: a command written elsewhere ends a 30 s nap at once."""
    with Journal(pg_url) as reader, Journal(pg_url) as writer:
        napping = asyncio.ensure_future(reader.nap(30))
        started = time.monotonic()
        while not napping.done() and time.monotonic() - started < 20:  # until its LISTEN is up: a few tries at most
            await asyncio.to_thread(writer.submit_command, "s", "nudge")
            await asyncio.wait({napping}, timeout=0.2)
        assert napping.done() and time.monotonic() - started < 20


async def test_a_file_journal_naps_the_whole_interval(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite3") as journal:
        assert not journal.wakes
        started = time.monotonic()
        await journal.nap(0.2)
        assert time.monotonic() - started >= 0.2


def test_a_server_gone_is_retried_and_nothing_confirmed_is_lost(pg_server: LocalPostgres, pg_url: str) -> None:
    def append(journal: Journal, indices: range) -> None:
        for i in indices:
            journal.append(ObservationEvent(session="s", observation=UserMessage(text=f"m{i}"), index=i))

    with Journal(pg_url) as journal:
        append(journal, range(100))
        journal.flush()
        pg_server.stop()
        try:
            append(journal, range(100, 200))  # queued: the writer retries them as it does a locked file
            with pytest.raises(JournalError, match=r"not yet written .* still being retried"):
                journal.flush(timeout=1.5)
            with pytest.raises(JournalError, match=r"server at postgresql://watcher@.* is not answering"):
                journal.read()
        finally:
            pg_server.start()
        journal.flush(timeout=60)
        assert [r.payload["index"] for r in journal.read(limit=1000)] == list(range(200))


def test_transactions_whose_ids_cross_a_power_of_ten_are_read_in_their_order(pg_url: str) -> None:
    """Transaction 9 precedes transaction 10: as numbers, not as text ("10" < "9"), in every read.

    The rows carry those transaction ids explicitly (both long finished on any server), so the
    boundary is crossed whatever ids the server hands out now.
    """
    with Journal(pg_url) as journal, psycopg.connect(pg_url, autocommit=True) as conn:
        for tx, index in (("10", 1), ("9", 0)):  # inserted in the other order: the row id must not decide
            conn.execute(
                "INSERT INTO events(tx, ts, session, watcher, kind, payload) VALUES (%s::xid8, 0, 's', '', %s, %s)",
                (tx, "task_turn", f'{{"index": {index}}}'),
            )
        first = journal.read(limit=1)
        assert [r.payload["index"] for r in first] == [0], "transaction 9's row comes first"
        assert [r.payload["index"] for r in journal.read(first[-1].id)] == [1], "and transaction 10's is not skipped"
        assert journal.last_id() == journal.read(first[-1].id)[-1].id, "the head is transaction 10's row"
        assert [p["index"] for _, _, p in journal.latest("task_turn")] == [1], "the newest is transaction 10's"
        assert [r.payload["index"] for r in journal.tail("s", kinds=("task_turn",), limit=1)] == [1]
