"""Fault class 7: the CLI behaves like a Unix tool (closed pipes, Ctrl-C)."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import no_traceback, write_transcript

pytestmark = [pytest.mark.faults, pytest.mark.slow]


def _long(tmp_path: Path, n: int) -> Path:
    records: list[dict[str, object] | str] = []
    for i in range(n):
        records.append({"kind": "tool_call", "id": f"t{i}", "name": "Bash", "input": {"command": f"ls {i}"}})
        records.append({"kind": "tool_result", "tool_call_id": f"t{i}", "output": "ok", "is_error": False})
    return write_transcript(tmp_path / "long.jsonl", records)


def test_json_output_into_head_exits_quietly(tmp_path: Path) -> None:
    transcript = _long(tmp_path, 2000)
    cmd = f"{sys.executable} -m watcher replay {transcript} --json --all | head -1"
    done = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert done.stdout.count("\n") == 1
    assert done.stderr == "", done.stderr


def test_ctrl_c_prints_one_line_exits_130_and_leaves_the_journal_whole(tmp_path: Path) -> None:
    transcript = _long(tmp_path, 300_000)
    journal = tmp_path / "journal.sqlite3"
    with subprocess.Popen(
        [sys.executable, "-m", "watcher", "replay", str(transcript), "--journal", str(journal)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        while not journal.exists():
            time.sleep(0.05)
        time.sleep(1.0)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
    assert child.returncode == 130
    assert no_traceback(err) and len(err.strip().splitlines()) == 1, err
    conn = sqlite3.connect(journal)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
