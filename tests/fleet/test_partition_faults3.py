"""A host cut off the network in the middle of a journal transaction does not hold every follower back.

Followers read below the oldest transaction still running. A transaction whose host vanished
(a link cut) would run on the server until the system's TCP keepalive gave up on it, two hours
by default: no follower, supervisor or editor, would see anything new meanwhile. The journal sets
the server's keepalives for its own sessions, so the server ends such a transaction in seconds.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator

import psycopg
import pytest
from netns import Machine, can_make_machines

from watcher.core.observations import UserMessage
from watcher.runtime.events import ObservationEvent
from watcher.runtime.journal import Journal
from watcher.testing.postgres import LocalPostgres

pytestmark = [
    pytest.mark.skipif(not can_make_machines(), reason="network namespaces need root and iproute2 (CI has both)"),
    pytest.mark.slow,
    pytest.mark.xdist_group("machines"),  # one worker makes the namespaces (their subnets must not overlap)
]

# a host that opens a journal transaction and goes quiet in it; its server-side keepalives shortened to ~3 s
# (5 + 3 x 2 s in use) so the test is quick
HOST = textwrap.dedent(
    """
    import sys
    import psycopg
    from watcher.runtime import _pg_store
    _pg_store.SERVER_LINK = {"tcp_keepalives_idle": 1, "tcp_keepalives_interval": 1, "tcp_keepalives_count": 2,
                             "tcp_user_timeout": 2000}
    conn = psycopg.connect(sys.argv[1], autocommit=True)
    _pg_store.configure(conn)
    cur = conn.execute("BEGIN; SELECT pg_current_xact_id()")
    cur.nextset()
    print(cur.fetchone()[0], flush=True)
    sys.stdin.read()  # quiet inside the transaction until the test ends this process
    """
)


@pytest.fixture
def machine() -> Iterator[tuple[LocalPostgres, Machine]]:
    made = Machine(7)
    try:
        with LocalPostgres(listen=f"127.0.0.1,{made.server_ip}") as server:
            yield server, made
    finally:
        made.close()


def test_a_transaction_of_a_host_cut_off_ends_within_seconds(machine: tuple[LocalPostgres, Machine]) -> None:
    server, host = machine
    url = server.create_database("cut")
    Journal(url).close()
    proc = subprocess.Popen(
        host.command([sys.executable, "-c", HOST, server.url("cut", host=host.server_ip)]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        xid = proc.stdout.readline().strip()
        assert xid, "the host opened its transaction"
        with Journal(url) as follower, psycopg.connect(url, autocommit=True) as admin:
            follower.append(ObservationEvent(session="s", observation=UserMessage(text="x"), index=0))
            follower.flush()
            assert follower.read() == [], "held back by the host's open transaction, as designed"
            host.down()
            deadline = time.monotonic() + 20
            status = "in progress"
            while status == "in progress" and time.monotonic() < deadline:  # until the server has ended it
                status = str(admin.execute("SELECT pg_xact_status(%s::xid8)", (xid,)).fetchone()[0])  # type: ignore[index]
                time.sleep(0.05)
            assert status == "aborted", f"the server still runs the cut-off host's transaction after 20 s ({status})"
            assert [r.payload["index"] for r in follower.read()] == [0], "the follower reads on"
    finally:
        proc.kill()
        proc.communicate(timeout=30)
