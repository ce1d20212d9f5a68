"""Running the real hook command and the real daemon as processes, bounded in time."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watcher.hooks._settings import client_argv

CLIENT = client_argv()  # the command `watcher hooks install` writes (`watcher-hook`), as PATH finds it here
RM_HOME = {"tool_name": "Bash", "tool_input": {"command": "rm -rf ~/"}, "tool_use_id": "toolu_rm"}


@dataclass(frozen=True)
class HookRun:
    """One run of the hook command: what it printed, its exit status and its wall time."""

    stdout: str
    returncode: int
    seconds: float

    @property
    def answer(self) -> dict[str, Any] | None:
        text = self.stdout.strip()
        return json.loads(text) if text else None


def hook_env(tmp: Path, **extra: str) -> dict[str, str]:
    """An environment whose socket and journal are the test's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WATCHER_", "ANTHROPIC_"))}
    env.update(WATCHER_SOCKET=str(tmp / "run" / "serve.sock"), WATCHER_JOURNAL=str(tmp / "journal.sqlite3"))
    env["WATCHER_SERVE_IDLE"] = "20"  # a daemon a hook call starts ends soon after the test anyway
    env.update(extra)
    return env


def run_hook(env: dict[str, str], event: str, fields: dict[str, Any], *options: str, session: str = "s-1") -> HookRun:
    payload = {"session_id": session, "cwd": os.getcwd(), "prompt_id": "p-1", "hook_event_name": event, **fields}
    started = time.monotonic()
    done = run_raw(env, json.dumps(payload), event, *options)
    return HookRun(done.stdout, done.returncode, time.monotonic() - started)


def run_raw(env: dict[str, str], text: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """The hook command with ``argv`` and ``text`` on stdin, as the CLI runs it (stdout and stderr kept)."""
    return subprocess.run(
        [*CLIENT, *argv], input=text, capture_output=True, text=True, env=env, timeout=30, check=False
    )


def ask_daemon(request: dict[str, Any], timeout: float, env: dict[str, str]) -> dict[str, Any]:
    """The daemon's JSON reply to ``request`` on the socket of ``env`` (raw, as ``hooks status`` asks)."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(env["WATCHER_SOCKET"])
        conn.sendall(json.dumps(request).encode() + b"\n")
        conn.shutdown(socket.SHUT_WR)
        data = b"".join(iter(lambda: conn.recv(65536), b""))
    reply: dict[str, Any] = json.loads(data)
    return reply


def wait_for(predicate: Any, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met in time")
        time.sleep(0.05)


def daemon_pid(env: dict[str, str]) -> int | None:
    pid_file = Path(env["WATCHER_SOCKET"]).with_suffix(".pid")
    with contextlib.suppress(FileNotFoundError, ValueError):
        return int(pid_file.read_text())
    return None


@contextlib.contextmanager
def daemon(env: dict[str, str], idle_s: float = 60) -> Iterator[subprocess.Popen[bytes]]:
    """A ``watcher serve`` of the test's own, killed (by its pid) when the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "watcher", "serve", "--idle", str(idle_s)], env=env, start_new_session=True
    )
    try:
        wait_for(lambda: Path(env["WATCHER_SOCKET"]).exists())
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()  # SIGTERM: the daemon flushes its journals and exits
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def stop_started_daemon(env: dict[str, str], *, not_pid: int | None = None) -> None:
    """Stop a daemon a hook call started (it would exit when idle anyway).

    ``not_pid``: one the test killed itself; wait a little for its successor to announce itself.
    """
    if not_pid is not None:
        with contextlib.suppress(TimeoutError):
            wait_for(lambda: daemon_pid(env) not in (None, not_pid), timeout=10)
    pid = daemon_pid(env)
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
