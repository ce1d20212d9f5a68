"""Supervisors on other "machines" (network namespaces) sharing one PostgreSQL journal over veth links.

The leader is cut off the network (its link down): the standby on another machine leads within
``host_lost_s``, the cut-off one stands down by itself, and when its link is back it stays a
standby, since another leads.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import IO

import pytest
from netns import Machine, can_make_machines

from watcher.runtime.journal import Journal
from watcher.testing.postgres import LocalPostgres

pytestmark = pytest.mark.skipif(
    not can_make_machines(), reason="network namespaces need root and iproute2 (CI has both)"
)

HOST_LOST_S = 4.0


@pytest.fixture(scope="module")
def machines() -> Iterator[tuple[LocalPostgres, list[Machine]]]:
    made = [Machine(i) for i in range(2)]
    try:
        listen = ",".join(["127.0.0.1", *(m.server_ip for m in made)])
        with LocalPostgres(listen=listen) as server:
            yield server, made
    finally:
        for machine in made:
            machine.close()


def supervise(machine: Machine, url: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "watcher", "fleet", "supervise", "--journal", url, "--fleet", "shared",
            "--host-lost", str(HOST_LOST_S), "--watch-interval", "0.2", "--sync-interval", "0.2", "--for", "90"]  # fmt: skip
    return subprocess.Popen(
        machine.command(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip


def line(stream: IO[str] | None) -> str:
    assert stream is not None
    return stream.readline().strip()


def test_a_partitioned_leader_is_replaced_and_stands_down(machines: tuple[LocalPostgres, list[Machine]]) -> None:
    server, (one, two) = machines
    server.create_database("partition")
    Journal(server.url("partition")).close()
    first = supervise(one, server.url("partition", host=one.server_ip))
    second: subprocess.Popen[str] | None = None
    try:
        assert line(first.stdout).startswith("leading the supervision of fleet shared"), first.stderr
        second = supervise(two, server.url("partition", host=two.server_ip))
        assert line(second.stdout) == "standing by: another supervisor leads fleet shared"
        one.down()
        cut = time.monotonic()
        assert line(second.stdout).startswith("leading the supervision of fleet shared")
        assert time.monotonic() - cut < HOST_LOST_S, "the standby leads within host_lost_s"
        assert line(first.stdout) == "standing by: another supervisor leads fleet shared", (
            "the cut-off leader stands down"
        )
        one.up()
        time.sleep(HOST_LOST_S / 2)  # a whole term with the link back: the first one does not take the lease back
        with Journal(server.url("partition"), create=False) as journal:
            assert not journal.hold_lease("fleet-supervisor:shared", "someone else", 1), "the second still holds it"
    finally:
        one.up()
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            if proc is not None:
                proc.communicate(timeout=60)
