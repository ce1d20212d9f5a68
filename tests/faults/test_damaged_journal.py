"""Fault class 2: damaged journals get a clear answer (replay, history, journal check, readers)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import watcher
from watcher.core.errors import JournalError
from watcher.core.observations import UserMessage
from watcher.runtime import Journal
from watcher.runtime.events import ObservationEvent

from .conftest import no_traceback, watcher_cli, write_transcript

pytestmark = [pytest.mark.faults, pytest.mark.slow]


def _journal(path: Path, count: int = 300) -> Path:
    with Journal(path) as journal:
        for i in range(count):
            journal.append(ObservationEvent(session="s", observation=UserMessage(text=f"m{i} " + "x" * 300), index=i))
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def _random_bytes(path: Path) -> None:
    path.write_bytes(os.urandom(8192))


def _truncated(path: Path) -> None:
    _journal(path)
    with path.open("r+b") as f:
        f.truncate(path.stat().st_size // 3)


def _garbage_page(path: Path) -> None:
    _journal(path)
    with path.open("r+b") as f:
        f.seek(4096)  # the events table's root page
        f.write(os.urandom(4096))


DAMAGE = {"random bytes": _random_bytes, "truncated": _truncated, "garbage page": _garbage_page}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_history_and_readers_report_a_damaged_journal(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "journal.sqlite3"
    DAMAGE[damage](path)
    with pytest.raises(JournalError) as failure:
        watcher.history(path)
    message = str(failure.value)
    assert str(path) in message and ("move it aside" in message or "damaged" in message)


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_replay_and_journal_check_answer_with_a_message(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "journal.sqlite3"
    DAMAGE[damage](path)
    transcript = write_transcript(tmp_path / "t.jsonl", [{"kind": "user_message", "text": "hi"}, {"kind": "done"}])
    replayed = watcher_cli("replay", str(transcript), "--journal", str(path))
    assert replayed.returncode == 2 and no_traceback(replayed.stderr), replayed.stderr
    assert str(path) in replayed.stderr
    checked = watcher_cli("journal", "check", str(path))
    assert checked.returncode in (1, 2) and no_traceback(checked.stderr), checked.stderr
    assert str(path) in checked.stdout + checked.stderr


def test_replay_into_a_journal_that_fails_mid_run_says_so_once_without_a_traceback(tmp_path: Path) -> None:
    """The writer fails after the run started: the journal's sink keeps failing, quietly, until the close reports it."""
    path = tmp_path / "journal.sqlite3"
    _garbage_page(path)
    records: list[dict[str, object] | str] = []
    for i in range(200):
        records.append({"kind": "tool_call", "id": str(i), "name": "Bash", "input": {"command": f"ls {i}"}})
        records.append({"kind": "tool_result", "tool_call_id": str(i), "output": "x" * 50})
    transcript = write_transcript(tmp_path / "t.jsonl", records)
    replayed = watcher_cli("replay", str(transcript), "--journal", str(path))
    assert replayed.returncode == 2 and no_traceback(replayed.stderr), replayed.stderr
    assert "events were not written" in replayed.stderr
    assert "subscriber" not in replayed.stderr, replayed.stderr


def test_a_row_that_is_not_utf8_or_not_json_is_skipped_and_counted(tmp_path: Path) -> None:
    path = _journal(tmp_path / "journal.sqlite3", count=3)
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO events(ts, session, watcher, kind, payload) VALUES (0, 's', '', 'observation', CAST(? AS TEXT))",
        (b'{"index": 3, "observation": {"kind": "user_message", "text": "\xff\xfe"}}',),
    )
    conn.execute("INSERT INTO events(ts, session, watcher, kind, payload) VALUES (0, 's', '', 'observation', '[1')")
    conn.commit()
    conn.close()
    with Journal(path) as journal:
        journal.append(ObservationEvent(session="s", observation=UserMessage(text="after"), index=9))
        journal.flush()
        texts = [r.payload["observation"]["text"][:2] for r in journal.read()]
        assert texts == ["m0", "m1", "m2", "af"], "the rows after the bad ones are read"
        assert journal.skipped == 2
    checked = watcher_cli("journal", "check", str(path))
    assert checked.returncode == 1 and "readable: 4, unreadable: 2" in checked.stdout


@pytest.mark.parametrize("damage", ["random bytes", "truncated"])
def test_the_kernel_extension_says_what_is_wrong_instead_of_a_traceback(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "journal.sqlite3"
    DAMAGE[damage](path)
    done = subprocess.run(
        [sys.executable, "-m", "IPython", "--no-banner", "--HistoryManager.enabled=False", "-c", "%load_ext watcher"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "WATCHER_JOURNAL": str(path)},
        cwd=tmp_path,
    )
    output = done.stdout + done.stderr
    assert no_traceback(output) and "Error" not in done.stdout, output
    assert f"the journal at {path} is damaged" in output and "move it aside" in output
