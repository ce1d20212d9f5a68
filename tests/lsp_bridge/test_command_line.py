"""``watcher-lsp``'s own flags: a bad value is one usage line naming the fix, never a traceback."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from .conftest import server_env


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "watcher.lsp_bridge", *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env=server_env(),
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--poll", "0"], "give 0.01 seconds or more"),  # 0 would read the journal in a busy loop
        (["--poll", "nan"], "give 0.01 seconds or more"),
        (["--poll", "soon"], "'soon' is not a number of seconds"),
        (["--tcp", "--port", "99999"], "99999 is not a port number; give one from 0 to 65535 (0: any free port)"),
    ],
)
def test_a_bad_flag_value_is_a_usage_error(args: list[str], said: str) -> None:
    done = _run(*args)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr


def test_a_port_in_use_says_so() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _run("--tcp", "--port", str(port))
    assert done.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "choose another --port" in done.stderr
    assert "Traceback" not in done.stderr
