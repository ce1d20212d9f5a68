"""The journal on PostgreSQL, with the SQLite figures of the same run side by side.

    BENCH pg_journal_events_per_s      4 writing processes append observations (~260 B) as fast as they can (target >= 20,000)
    BENCH pg_follow_missed             rows a follower reading by the journal's cursor missed or saw twice meanwhile (target 0)
    BENCH pg_follow_missed_by_id       the same rows read by a plain ``id > cursor`` follower (why the cursor is not an id)
    BENCH pg_command_claims_per_s      4 processes, each a host of its own sessions, claim and mark commands in batches (target >= 2,000)
    BENCH pg_notify_ms_p50             a command written by one journal wakes a reader napping on another (target <= 10)
    BENCH pg_fleet_cycle_ms_10000      one supervisor watcher cycle over 10,000 simulated tasks (target <= 150)
    BENCH pg_back_after_outage_ms      the first write to succeed after the server, away for 10 s while writes
                                       were tried, comes back (target <= 1,500)

and ``sqlite_*`` for the same measures on a journal file. The server is started by this script
(Debian's PostgreSQL, fsync on, defaults otherwise) on a loopback port; everything runs on this
one machine, so client and server share its cores.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import psycopg

from bench_fleet import _watch_cycle_ms  # the same cycle bench_fleet measures on SQLite
from watcher.core.errors import JournalError
from watcher.runtime.journal import Journal
from watcher.testing.postgres import LocalPostgres

WRITERS = 4
EVENTS = 25_000  # per writer
COMMANDS = 2_500  # per claiming process

WRITER = textwrap.dedent(
    """
    import sys, time
    from watcher.core.observations import ToolResult
    from watcher.runtime.journal import Journal
    from watcher.runtime.events import ObservationEvent
    target, count, session = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    journal = Journal(target)
    output = "ok " * 40  # about 260 bytes a row, as a short tool result
    events = [ObservationEvent(session=session, observation=ToolResult(tool_call_id=str(i), output=output), index=i)
              for i in range(count)]
    print("ready", flush=True)
    sys.stdin.readline()
    started = time.time()
    for event in events:
        journal.append(event)
    journal.flush()
    print(started, time.time(), flush=True)
    journal.close()
    """
)

CLAIMER = textwrap.dedent(
    """
    import sys, time
    from watcher.runtime.journal import Journal
    target, host = sys.argv[1], sys.argv[2]
    journal = Journal(target, create=False)
    mine = [f"{host}-{i}" for i in range(20)]
    print("ready", flush=True)
    sys.stdin.readline()
    started, done = time.time(), 0
    while batch := journal.claim_commands(mine):  # as a fleet's command poller: claim a batch, apply, mark it
        journal.mark_commands([(command.id, "applied", "") for command in batch])
        done += len(batch)
    print(started, time.time(), done, flush=True)
    journal.close()
    """
)


def _together(script: str, args: list[list[str]]) -> list[list[float]]:
    """Start one process per ``args``, let them all go at once, and collect what each printed last."""
    procs = [
        subprocess.Popen([sys.executable, "-c", script, *a], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for a in args
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    out = []
    for proc in procs:
        text, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0
        out.append([float(x) for x in text.split()])
    return out


def _follow(target: str | Path, total: int, stop: threading.Event, found: dict[str, int]) -> None:
    """Follow by the journal's cursor until every row arrived (or ``stop``): counts missed and repeated rows."""
    journal = Journal(target, create=False)
    seen: set[tuple[str, int]] = set()
    repeated = 0
    cursor = 0
    while len(seen) < total and not stop.is_set():
        rows = journal.read(cursor, limit=5000)
        for row in rows:
            key = (row.session, int(row.payload["index"]))
            repeated += key in seen
            seen.add(key)
        cursor = rows[-1].id if rows else cursor
        if not rows:
            time.sleep(0.005)
    journal.close()
    found["missed"] = total - len(seen) + repeated


def _follow_by_id(url: str, stop: threading.Event, found: dict[str, int]) -> None:
    """What the journal does not do: read ``id > cursor`` (ids are not in commit order on a server)."""
    seen = 0
    cursor = 0
    with psycopg.connect(url, autocommit=True) as conn:
        while not stop.is_set():
            rows = conn.execute("SELECT id FROM events WHERE id > %s ORDER BY id LIMIT 5000", (cursor,)).fetchall()
            seen += len(rows)
            cursor = rows[-1][0] if rows else cursor
            if not rows:
                time.sleep(0.005)
        total = conn.execute("SELECT count(*) FROM events").fetchone()
    found["missed"] = (total[0] if total else 0) - seen


def events_per_s(target: str | Path, prefix: str) -> None:
    Journal(target).close()
    total = WRITERS * EVENTS
    stop = threading.Event()
    follow: dict[str, int] = {}
    by_id: dict[str, int] = {}
    threads = [threading.Thread(target=_follow, args=(target, total, stop, follow))]
    if isinstance(target, str):
        threads.append(threading.Thread(target=_follow_by_id, args=(target, stop, by_id)))
    for thread in threads:
        thread.start()
    spans = _together(WRITER, [[str(target), str(EVENTS), f"w{n}"] for n in range(WRITERS)])
    threads[0].join(timeout=120)
    time.sleep(0.5)
    stop.set()
    for thread in threads:
        thread.join()
    rate = total / (max(s[1] for s in spans) - min(s[0] for s in spans))
    print(f"BENCH {prefix}_journal_events_per_s {rate:.0f} events/s ({WRITERS} writing processes, {total} events)")
    print(f"BENCH {prefix}_follow_missed {follow['missed']} rows (missed or repeated by the journal's cursor)")
    if by_id:
        print(f"BENCH {prefix}_follow_missed_by_id {by_id['missed']} rows (a plain id cursor, for comparison)")


def claims_per_s(target: str | Path, prefix: str) -> None:
    with Journal(target) as journal:
        for n in range(WRITERS):
            for i in range(COMMANDS):
                journal.submit_command(f"h{n}-{i % 20}", "nudge", payload={"text": "look again"})
    spans = _together(CLAIMER, [[str(target), f"h{n}"] for n in range(WRITERS)])
    done = sum(int(s[2]) for s in spans)
    assert done == WRITERS * COMMANDS, done
    rate = done / (max(s[1] for s in spans) - min(s[0] for s in spans))
    print(
        f"BENCH {prefix}_command_claims_per_s {rate:.0f} claims/s ({WRITERS} processes: claim a batch, mark it applied)"
    )


def notify_ms(url: str) -> None:
    reader, writer = Journal(url), Journal(url)
    woke: list[float] = []
    done = threading.Event()

    def listen() -> None:
        while not done.is_set():
            if reader._store.wait(5):  # the store's wait: what Journal.nap runs in a thread
                woke.append(time.perf_counter())

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    while not woke:  # until the LISTEN is up
        writer.submit_command("s", "nudge")
        time.sleep(0.1)
    latencies = []
    for _ in range(200):
        count = len(woke)
        time.sleep(0.01)
        sent = time.perf_counter()
        writer.submit_command("s", "nudge")
        deadline = sent + 5
        while len(woke) == count and time.perf_counter() < deadline:
            time.sleep(0.0002)
        latencies.append((woke[-1] - sent) * 1000 if len(woke) > count else 5000.0)
    done.set()
    reader.close()
    writer.close()
    p50 = statistics.median(latencies)
    p99 = sorted(latencies)[int(len(latencies) * 0.99)]
    print(f"BENCH pg_notify_ms_p50 {p50:.2f} ms (p99 {p99:.1f} ms; submit and commit included)")


def back_after_outage_ms(server: LocalPostgres, url: str) -> float:
    """From the server's restart to the first write that succeeds, writes having failed while it was away."""
    journal = Journal(url)
    try:
        journal.hold_lease("bench", "me", 5.0)
        server.stop()
        away = time.monotonic()
        while time.monotonic() - away < 10:  # the pool's reconnections back off meanwhile
            with contextlib.suppress(JournalError):  # the server is away: the failure is the point
                journal.hold_lease("bench", "me", 5.0)
        server.start()
        back = time.monotonic()
        journal.hold_lease("bench", "me", 5.0)
        return (time.monotonic() - back) * 1000
    finally:
        journal.close()


def main() -> None:
    with LocalPostgres(fast=False) as server, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"# PostgreSQL at {server.url()} (started by this benchmark), SQLite files in {folder}")
        events_per_s(server.create_database("events"), "pg")
        events_per_s(folder / "events.sqlite3", "sqlite")
        claims_per_s(server.create_database("claims"), "pg")
        claims_per_s(folder / "claims.sqlite3", "sqlite")
        notify_ms(server.create_database("notify"))
        for prefix, target in (("pg", server.create_database("fleet")), ("sqlite", folder / "fleet.sqlite3")):
            cycle, _, _ = asyncio.run(_watch_cycle_ms(folder, 10_000, journal_at=target))
            print(f"BENCH {prefix}_fleet_cycle_ms_10000 {cycle:.1f} ms (simulated tasks, median of three cycles)")
        back = back_after_outage_ms(server, server.create_database("outage"))
        print(f"BENCH pg_back_after_outage_ms {back:.0f} ms (first write after the server's 10 s outage)")


if __name__ == "__main__":
    main()
