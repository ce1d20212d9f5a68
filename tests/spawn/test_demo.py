"""The spawn demo runs end to end with the fake CLI (the recorded Claude Code stream) and says so."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def test_demo_with_the_fake_cli_interrupts_fixes_and_opens_a_pr() -> None:
    env = {**os.environ, "WATCHER_DEMO_FAKE_CLI": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "watcher.demo.spawn"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "Agent: the fake CLI replaying a recorded Claude Code stream (" in out
    assert "Interjection (security, urgent, live):" in out and "SQL injection in login()" in out
    assert "**PR:** #1 - http://127.0.0.1:" in out and "`src/auth/login.js` (+8, -0)" in out
    assert "pr_created x1" in out
