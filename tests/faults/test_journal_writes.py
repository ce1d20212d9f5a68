"""Fault class 1: the journal never drops what it confirmed (locks, dead writers, killed writers)."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from watcher.core.errors import JournalError
from watcher.core.observations import UserMessage
from watcher.runtime import Journal
from watcher.runtime.events import ObservationEvent

from .conftest import no_traceback, watcher_cli, write_transcript

pytestmark = [pytest.mark.faults, pytest.mark.slow]

LOCKER = textwrap.dedent(
    """
    import sqlite3, sys, time
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    conn.execute("COMMIT")
    """
)


def _event(i: int) -> ObservationEvent:
    return ObservationEvent(session="s", observation=UserMessage(text=f"m{i}"), index=i)


@pytest.mark.timeout(180)
def test_a_journal_locked_longer_than_the_old_retry_budget_loses_nothing(tmp_path: Path) -> None:
    # the old writer gave up after 5 tries of 5 s each (~26 s) and dropped the batch
    path = tmp_path / "journal.sqlite3"
    Journal(path).close()
    transcript = write_transcript(
        tmp_path / "t.jsonl",
        [{"kind": "user_message", "text": f"step {i}"} for i in range(50)] + [{"kind": "done"}],
    )
    with subprocess.Popen([sys.executable, "-c", LOCKER, str(path), "32"], stdout=subprocess.PIPE, text=True) as locker:
        assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
        result = watcher_cli("replay", str(transcript), "--journal", str(path), "--session", "locked", timeout=150)
        locker.wait(timeout=60)
    assert result.returncode == 0, result.stderr
    assert "locked by another process" in result.stderr, "the wait is said, not silent"
    assert "nothing is lost while it waits" in result.stderr and "(Ctrl-C)" in result.stderr, "and what to do"
    with Journal(path, create=False) as journal:
        observed = [r.payload["index"] for r in journal.read(limit=10_000) if r.kind == "observation"]
    assert observed == list(range(51)), "every observation the replay confirmed is in the journal"


def test_a_writer_that_dies_surfaces_as_journal_error_on_flush(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    journal = Journal(path)
    journal.append(_event(0))
    journal.flush()
    # another process breaks the journal under the writer: every later write fails, not for a lock
    subprocess.run(
        [sys.executable, "-c", f"import sqlite3; sqlite3.connect({str(path)!r}).execute('DROP TABLE events')"],
        check=True,
    )
    journal.append(_event(1))
    with pytest.raises(JournalError) as failure:
        journal.flush(timeout=30)
    message = str(failure.value)
    assert str(path) in message and "no such table" in message and "events were not written" in message
    with pytest.raises(JournalError):
        journal.flush(timeout=5)  # and it keeps saying so: nothing pretends to be written


KILLED = textwrap.dedent(
    """
    import sys
    from watcher.core.observations import UserMessage
    from watcher.runtime import Journal
    from watcher.runtime.events import ObservationEvent
    journal = Journal(sys.argv[1])
    i = 0
    while True:
        journal.append(ObservationEvent(session="k", observation=UserMessage(text=f"m{i}"), index=i))
        i += 1
        if i % 50 == 0:
            journal.flush()
            print(i, flush=True)
    """
)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_writer_killed_at_a_random_moment_leaves_a_committed_prefix(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "journal.sqlite3"
    with subprocess.Popen([sys.executable, "-c", KILLED, str(path)], stdout=subprocess.PIPE, text=True) as writer:
        assert writer.stdout is not None
        confirmed = int(writer.stdout.readline())  # wait until it is writing
        time.sleep(random.Random(seed).uniform(0.05, 0.6))
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
        for line in writer.stdout:
            confirmed = max(confirmed, int(line))
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    with Journal(path, create=False) as journal:
        indexes = [r.payload["index"] for r in journal.read(limit=1_000_000)]
    assert indexes == list(range(len(indexes))), "a prefix, in order, with no holes"
    assert len(indexes) >= confirmed, "everything a flush confirmed survived the kill"


def test_replay_exits_2_with_the_message_when_its_events_cannot_be_journaled(tmp_path: Path) -> None:
    # a journal that opens fine but refuses every insert (not a lock: retrying cannot help)
    path = tmp_path / "journal.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, session TEXT NOT NULL, "
        "watcher TEXT NOT NULL DEFAULT '', kind TEXT NOT NULL, payload TEXT NOT NULL CHECK (length(payload) < 0))"
    )
    conn.commit()
    conn.close()
    transcript = write_transcript(tmp_path / "t.jsonl", [{"kind": "user_message", "text": "hi"}, {"kind": "done"}])
    result = watcher_cli("replay", str(transcript), "--journal", str(path))
    assert result.returncode == 2 and no_traceback(result.stderr), result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("watcher: error:") and str(path) in last and "events were not written" in last
