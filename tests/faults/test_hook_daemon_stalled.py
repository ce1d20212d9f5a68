"""Fault class 9 (continued): a hook daemon that takes the call and never answers, and a payload
that is not valid UTF-8. Neither may open the guard: the hook answers a dangerous call itself.

A daemon busy with other work (a huge file judged on its loop) looks, to the hook, exactly like a
socket that accepts and stays silent; the test stands one up in the daemon's place. The hook is
the real ``watcher-hook`` script.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from watcher.hooks._settings import client_argv

pytestmark = [pytest.mark.faults]

CLIENT = client_argv()
RM_HOME = {
    "hook_event_name": "PreToolUse",
    "session_id": "s-1",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf ~/"},
}


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WATCHER_", "ANTHROPIC_"))}
    env.update(WATCHER_SOCKET=str(tmp / "run" / "serve.sock"), WATCHER_JOURNAL=str(tmp / "journal.sqlite3"))
    env.update(extra)
    return env


@contextlib.contextmanager
def silent_daemon(path: Path) -> Iterator[list[socket.socket]]:
    """A Unix socket at the daemon's place that takes every call and answers none."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def take() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                held.append(server.accept()[0])

    thread = threading.Thread(target=take, daemon=True)
    thread.start()
    try:
        yield held
    finally:
        stop.set()
        thread.join(timeout=5)
        for conn in held:
            conn.close()
        server.close()


def _hook(env: dict[str, str], payload: bytes, budget: str = "0.8") -> tuple[dict[str, object] | None, float]:
    started = time.monotonic()
    done = subprocess.run(
        [*CLIENT, "PreToolUse", "--agent", "claude", "--budget", budget],
        input=payload,
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode().strip()
    return (json.loads(out) if out else None), time.monotonic() - started


def test_a_daemon_that_never_answers_leaves_the_guard_to_answer(tmp_path: Path) -> None:
    env = _env(tmp_path)
    with silent_daemon(tmp_path / "run" / "serve.sock") as held:
        answer, seconds = _hook(env, json.dumps({**RM_HOME, "cwd": str(tmp_path)}).encode())
        assert held, "the hook reached the stalled daemon first"
    assert answer is not None, "the hook failed open on a dangerous call"
    decision = answer["hookSpecificOutput"]
    assert isinstance(decision, dict) and decision["permissionDecision"] == "deny"
    assert "home folder" in str(decision["permissionDecisionReason"])
    assert seconds < 30  # within the CLI's own limit on a hook, with room to spare


def test_a_payload_that_is_not_utf8_is_still_judged(tmp_path: Path) -> None:
    payload = json.dumps({**RM_HOME, "cwd": str(tmp_path)}).encode().replace(b"rm -rf ~/", b"rm -rf ~/ \xff")
    for daemon in ("0", "1"):
        answer, _ = _hook(_env(tmp_path, WATCHER_HOOK_DAEMON=daemon, WATCHER_SERVE_IDLE="5"), payload, budget="5")
        assert answer is not None, f"failed open (daemon {daemon})"
        decision = answer["hookSpecificOutput"]
        assert isinstance(decision, dict) and decision["permissionDecision"] == "deny", daemon
    subprocess.run(
        [sys.executable, "-m", "watcher", "hooks", "stop"],
        env=_env(tmp_path),
        capture_output=True,
        timeout=30,
        check=False,
    )
