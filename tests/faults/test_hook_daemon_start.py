"""Fault class 9: the hook daemon's start under a burst of cold calls, and its socket lost while it runs.

Real processes throughout: the ``watcher-hook`` script as the CLI runs it, the daemon it
starts, and ``/proc`` to see every ``watcher serve`` that was started for the test's socket.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from watcher.hooks._settings import client_argv
from watcher.runtime.journal import Journal

pytestmark = [pytest.mark.faults, pytest.mark.slow]

CLIENT = client_argv()  # `watcher-hook`, the script beside this interpreter
BURST = 50


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WATCHER_", "ANTHROPIC_"))}
    env.update(WATCHER_SOCKET=str(tmp / "run" / "serve.sock"), WATCHER_JOURNAL=str(tmp / "journal.sqlite3"))
    env["WATCHER_SERVE_IDLE"] = "30"
    return env


def _processes_of(sock: str) -> dict[int, bytes]:
    """This test's processes (their command lines): the hooks, their judges, the daemons of ``sock``."""
    found = {}
    mark = f"WATCHER_SOCKET={sock}\0".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if mark in (entry / "environ").read_bytes():
                found[int(entry.name)] = (entry / "cmdline").read_bytes()
    return found


def _daemons(sock: str) -> set[int]:
    return {pid for pid, cmd in _processes_of(sock).items() if b"watcher\0serve" in cmd}


def _status(sock: str) -> dict[str, Any] | None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn, contextlib.suppress(OSError, ValueError):
        conn.settimeout(5)
        conn.connect(sock)
        conn.sendall(b'{"op": "status"}\n')
        conn.shutdown(socket.SHUT_WR)
        reply: dict[str, Any] = json.loads(b"".join(iter(lambda: conn.recv(65536), b"")))
        return reply
    return None


def _wait_for(predicate: Callable[[], object], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met in time")
        time.sleep(0.05)


@contextlib.contextmanager
def _cleaned_up(sock: str) -> Iterator[None]:
    """Stop, by pid, every process left for ``sock``: the daemon first (SIGTERM), then any judge."""
    try:
        yield
    finally:
        for pid in _daemons(sock):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            _wait_for(lambda: not _daemons(sock), timeout=15)
        for pid in _processes_of(sock):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _hook_rows(journal: Path) -> int:
    if not journal.exists():
        return 0
    reader = Journal(journal, create=False)
    try:
        return sum(r.kind == "hook" for r in reader.read(0, limit=100_000))
    finally:
        reader.close()


def _call(i: int, cwd: Path) -> bytes:
    payload = {
        "session_id": "burst",
        "cwd": str(cwd),
        "prompt_id": "p-1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": f"ls -la src/part_{i}"},
        "tool_use_id": f"toolu_burst{i:03d}",
    }
    return json.dumps(payload).encode()


def test_a_burst_of_cold_hook_calls_starts_one_daemon_which_then_judges_them(tmp_path: Path) -> None:
    env = _env(tmp_path)
    sock = env["WATCHER_SOCKET"]
    seen: set[int] = set()
    done = threading.Event()

    def watch() -> None:  # every daemon started for this socket, however briefly it lived
        while not done.is_set():
            seen.update(_daemons(sock))
            time.sleep(0.01)

    watcher = threading.Thread(target=watch, daemon=True)
    with _cleaned_up(sock):
        watcher.start()
        calls = [
            subprocess.Popen([*CLIENT, "PreToolUse"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
            for _ in range(BURST)
        ]
        answers = [call.communicate(_call(i, tmp_path), timeout=120) for i, call in enumerate(calls)]
        assert [c.returncode for c in calls] == [0] * BURST
        # `ls` is allowed: nothing printed, or (a call the loaded daemon judged past its budget) the
        # session told as context that its watchers were slow; never a denial
        printed = [json.loads(out) for out, _ in answers if out.strip()]
        assert all(set(p["hookSpecificOutput"]) == {"hookEventName", "additionalContext"} for p in printed), printed
        _wait_for(lambda: _status(sock) is not None)  # the daemon serves, and every call was judged (journaled)
        _wait_for(lambda: _hook_rows(Path(env["WATCHER_JOURNAL"])) >= BURST, timeout=120)
        time.sleep(1.0)  # a daemon started late (its CLI loading) would show by now
        done.set()
        watcher.join()
    assert len(seen) == 1, f"{len(seen)} daemons were started for one burst: {sorted(seen)}"


@pytest.mark.parametrize("how", ["deleted", "replaced-by-a-stale-socket"])
def test_a_lost_socket_is_served_again_by_the_running_daemon(tmp_path: Path, how: str) -> None:
    env = _env(tmp_path)
    sock = Path(env["WATCHER_SOCKET"])
    with _cleaned_up(str(sock)):
        daemon = subprocess.Popen([sys.executable, "-m", "watcher", "serve", "--idle", "60"], env=env)
        _wait_for(lambda: _status(str(sock)) is not None)
        sock.unlink()
        if how == "replaced-by-a-stale-socket":  # a socket nobody listens on (a file there: test_guard_stays_on)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stale:
                stale.bind(str(sock))
        _wait_for(lambda: _status(str(sock)) is not None, timeout=15)  # served again, by the same daemon:
        status = _status(str(sock)) or {}
        assert status["pid"] == daemon.pid and sock.is_socket()
        assert any(
            f"{'was deleted' if how == 'deleted' else 'was replaced'}; listening on it again" in f
            for f in status["failures"]
        )
        rm = json.dumps(
            {
                "session_id": "s",
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "rm -rf ~/"},
            }
        )
        hook = subprocess.run(
            [*CLIENT, "PreToolUse"], input=rm.encode(), env=env, capture_output=True, timeout=60, check=False
        )
        assert b'"deny"' in hook.stdout

        def judged_by_the_daemon() -> bool:
            journals = (_status(str(sock)) or {}).get("journals") or {}
            return any(any("s" in s.split(":") for s in sessions) for sessions in journals.values())

        _wait_for(judged_by_the_daemon)
        assert _daemons(str(sock)) == {daemon.pid}  # and no other daemon was started for it
        daemon.terminate()
        daemon.wait(timeout=15)
