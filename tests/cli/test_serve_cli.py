"""``watcher serve`` run by hand: a second daemon says which one runs, and ``--idle`` takes seconds above 0."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """An environment whose socket is the test's own (a private folder, a short path)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("WATCHER_", "ANTHROPIC_"))}
    return {**base, "WATCHER_SOCKET": str(tmp_path / "run" / "serve.sock"), "WATCHER_JOURNAL": str(tmp_path / "j")}


@pytest.fixture
def first(env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """A ``watcher serve`` of the test's own, stopped (by its pid) when the test ends."""
    proc = subprocess.Popen([sys.executable, "-m", "watcher", "serve", "--idle", "60"], env=env)
    pid_file = Path(env["WATCHER_SOCKET"]).with_suffix(".pid")
    try:
        deadline = time.monotonic() + 30
        while not (Path(env["WATCHER_SOCKET"]).exists() and pid_file.exists()):
            assert time.monotonic() < deadline and proc.poll() is None, "the first daemon did not start"
            time.sleep(0.05)
        yield proc
    finally:
        proc.terminate()  # SIGTERM: the daemon flushes its journals and exits
        proc.wait(timeout=30)


def serve(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "watcher", "serve", *args], env=env, capture_output=True, text=True, timeout=60
    )


def test_a_second_daemon_says_which_one_serves_the_socket(env: dict[str, str], first: subprocess.Popen[bytes]) -> None:
    second = serve("--idle", "5", env=env)
    assert second.returncode == 1 and second.stdout == ""
    assert second.stderr == (
        f"watcher: error: a hook daemon already serves {env['WATCHER_SOCKET']} (pid {first.pid}); stop it first "
        "with `watcher hooks stop`, or set WATCHER_SOCKET to another path to run a second one\n"
    )
    assert first.poll() is None  # the first one still serves


@pytest.mark.parametrize("idle", ["-1", "0", "nan", "inf", "soon"])
def test_an_idle_time_that_is_not_seconds_above_0_is_refused(env: dict[str, str], idle: str) -> None:
    done = serve("--idle", idle, env=env)
    assert done.returncode == 2 and done.stdout == ""
    assert f"argument --idle: {idle!r} is not a number of seconds above 0" in done.stderr
    assert not Path(env["WATCHER_SOCKET"]).parent.exists()  # nothing started
