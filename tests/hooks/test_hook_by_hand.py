"""The hook command run by a person rather than an agent CLI: it says what is wrong instead of failing silently."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

from hook_procs import CLIENT, hook_env


def test_a_hook_without_its_event_says_so_and_the_guard_still_judges(tmp_path: Path) -> None:
    done = subprocess.run(
        [*CLIENT], input="{}", capture_output=True, text=True, env=hook_env(tmp_path), timeout=30, check=False
    )
    assert done.returncode == 0  # the session goes on
    assert done.stdout == ""  # nothing to judge in "{}"
    assert "usage: watcher-hook EVENT" in done.stderr
    assert "the guard judged the call alone" in done.stderr
    rm = '{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf ~/"}}'
    done = subprocess.run(
        [*CLIENT], input=rm, capture_output=True, text=True, env=hook_env(tmp_path), timeout=30, check=False
    )
    assert done.returncode == 0 and '"permissionDecision": "deny"' in done.stdout


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
