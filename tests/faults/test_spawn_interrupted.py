"""Fault class 9: a spawn interrupted mid-run ends its session, and its stream is readable while it runs."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from watcher.testing.fake_cli import launcher

from .conftest import no_traceback

pytestmark = [pytest.mark.faults, pytest.mark.slow]

SESSION = "5b0c1c7e-0000-4000-8000-0000000000cc"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "shop"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "dev@example.com")
    _git(repo, "config", "user.name", "Dev")
    (repo / "README.md").write_text("# shop\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "init")
    return repo


def _wait_for(check: Callable[[], bool], within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def test_ctrl_c_ends_the_session_and_the_stream_was_readable_while_it_ran(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    lines = [
        {"type": "system", "subtype": "init", "cwd": "@CWD@", "session_id": SESSION, "tools": ["Bash"]},
        {
            "type": "assistant",
            "session_id": SESSION,
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Looking around first."}]},
        },
        {"fake": "sleep", "s": 60},
    ]
    script = tmp_path / "script.jsonl"
    script.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    cli = launcher(script, tmp_path)
    journal = tmp_path / "journal.sqlite3"
    argv = [sys.executable, "-m", "watcher", "spawn", "add a.txt", "--repo", str(repo), "--cli-path", str(cli)]
    argv += ["--no-pr", "--journal", str(journal), "--idle-timeout", "120", "--total-timeout", "120"]
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-test-0000", "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as child:
        spawns = repo / ".watcher" / "spawns"

        def streamed() -> bool:
            return any("Looking around first." in p.read_text() for p in spawns.glob("*/stream.jsonl"))

        _wait_for(streamed)  # the CLI is still running (it sleeps): the line is on disk already
        assert child.poll() is None
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
    assert child.returncode == 130 and no_traceback(err), err
    with sqlite3.connect(journal) as conn:
        rows = [(kind, json.loads(payload)) for kind, payload in conn.execute("SELECT kind, payload FROM events")]
    statuses = [payload["status"] for kind, payload in rows if kind == "session"]
    assert statuses[0] == "started" and statuses[-1] == "interrupted", statuses
