"""``watcher fleet run`` shows its tasks live on a terminal (a real pseudo-terminal), and nothing extra in a pipe."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from watcher.testing import Reply, StubAnthropicServer

TASKS = """[fleet]
name = "progress"
watch_interval_s = 0.1
min_task_age_s = 0

[[tasks]]
name = "client"
prompt = "write the client"

[[tasks]]
name = "server"
prompt = "write the server"
"""
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _argv(tasks: Path, journal: Path, url: str) -> list[str]:
    return [sys.executable, "-m", "watcher", "fleet", "run", str(tasks), "--base-url", url, "--journal", str(journal)]


def _on_a_terminal(argv: list[str], timeout: float = 60) -> tuple[int, str]:
    """Run ``argv`` with a pseudo-terminal as its stdin, stdout and stderr; its exit status and all it wrote."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    with subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True) as child:
        os.close(slave)
        out = bytearray()
        ends = time.monotonic() + timeout
        while time.monotonic() < ends:
            if not select.select([master], [], [], 0.2)[0]:
                if child.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        os.close(master)
        status = child.wait(timeout=10)
    return status, ANSI.sub("", out.decode("utf-8", "replace")).replace("\r", "")


@pytest.mark.slow
def test_fleet_run_shows_its_tasks_live_on_a_terminal_and_only_the_result_in_a_pipe(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.toml"
    tasks.write_text(TASKS)
    slow = Reply.text("Done.", delay_s=1.5)  # each task's one turn takes 1.5 s: several frames show it running
    with StubAnthropicServer(*[slow] * 4) as stub:
        status, shown = _on_a_terminal(_argv(tasks, tmp_path / "tty.sqlite3", stub.base_url))
        piped = subprocess.run(
            _argv(tasks, tmp_path / "pipe.sqlite3", stub.base_url),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert status == 0, shown
    assert "fleet progress · 2 task(s)" in shown, shown
    running = [line.split() for line in shown.splitlines() if line.startswith(("client ", "server "))]
    assert any(row[2] == "running" for row in running), shown  # task, health, status: seen while it ran
    assert any(row[2] == "completed" and row[3] == "1" for row in running), shown  # and its steps when it ended
    assert "nudges" in shown and "ladder" in shown
    assert "client: completed" in shown and "Traceback" not in shown
    assert piped.returncode == 0, piped.stderr
    assert "task(s)" not in piped.stdout and "client: completed" in piped.stdout  # a pipe gets the result alone
