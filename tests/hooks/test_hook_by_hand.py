"""The hook command run by a person rather than an agent CLI: it says what is wrong instead of failing silently."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

from hook_procs import CLIENT, hook_env


def test_a_hook_without_its_event_says_so_and_still_fails_open(tmp_path: Path) -> None:
    done = subprocess.run(
        [*CLIENT], input="{}", capture_output=True, text=True, env=hook_env(tmp_path), timeout=30, check=False
    )
    assert done.returncode == 0  # the session goes on
    assert done.stdout == ""
    assert "usage: watcher-hook EVENT" in done.stderr
    assert "failed open" in done.stderr


def test_a_hook_typed_at_a_terminal_points_to_hooks_check(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [*CLIENT, "PreToolUse"],
            stdin=follower,
            capture_output=True,
            text=True,
            env=hook_env(tmp_path),
            timeout=30,  # without the terminal check it would wait for a payload until this runs out
            check=False,
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert done.returncode == 0
    assert "watcher hooks check" in done.stderr
