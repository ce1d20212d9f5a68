"""Two ``watcher fleet supervise`` on one PostgreSQL journal: one leads; the other takes over when it dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import IO

import pytest

from watcher.runtime.journal import Journal

pytestmark = pytest.mark.slow

HOST_LOST_S = 4.0


def supervise(url: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "watcher", "fleet", "supervise", "--journal", url, "--fleet", "shared",
         "--host-lost", str(HOST_LOST_S), "--watch-interval", "0.1", "--sync-interval", "0.1", "--for", "90"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip


def line(stream: IO[str] | None) -> str:
    assert stream is not None
    return stream.readline().strip()


def test_the_standby_supervisor_leads_within_host_lost_s_of_the_leader_dying(pg_url: str) -> None:
    Journal(pg_url).close()
    first = supervise(pg_url)
    second: subprocess.Popen[str] | None = None
    try:
        assert line(first.stdout).startswith("leading the supervision of fleet shared")
        second = supervise(pg_url)
        assert line(second.stdout) == "standing by: another supervisor leads fleet shared"
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        killed = time.monotonic()
        with Journal(pg_url, create=False) as journal:
            before = journal.last_id()  # everything the dead leader wrote
        assert line(second.stdout).startswith("leading the supervision of fleet shared")
        took = time.monotonic() - killed
        assert took < HOST_LOST_S, f"the standby took {took:.1f}s to lead"
        with Journal(pg_url, create=False) as journal:  # the new leader runs the loops: it reports their health
            deadline = time.monotonic() + 30
            while not journal.read(before, kinds=("fleet_supervision",)) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert journal.read(before, kinds=("fleet_supervision",))
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            if proc is not None:
                proc.communicate(timeout=30)
