"""A person's command is applied once, even when the journal's server goes away between applying it and marking it.

The supervisor claims a command, applies it (a nudge is written for the task), then marks it
applied. Before, a mark that failed for longer than the journal's retries left the command
``claimed``; once its lease ran out it was released and applied again: the task got the person's
nudge twice. Here the link to a real PostgreSQL server goes down exactly when the mark is sent,
stays down past the lease, and comes back.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import psycopg
import pytest

from pg_proxy import Link, PgProxy
from watcher.fleet import FleetConfig, Supervisor
from watcher.fleet.events import FleetTask
from watcher.runtime import Journal, _pg_store
from watcher.testing import wait_until
from watcher.testing.postgres import LocalPostgres

CONFIG = FleetConfig(name="once", command_poll_s=0.05, command_lease_s=0.5)


class Outage(PgProxy):
    """A loopback proxy to the server that goes down (every link closed, new ones refused) when a
    client sends a message holding ``arm``'s text, before the server sees it, until ``up()``."""

    def __init__(self, server_port: int) -> None:
        super().__init__(server_port)
        self.trigger: bytes | None = None

    def arm(self, containing: bytes) -> None:
        self.trigger = containing

    def forward(self, link: Link, message: bytes, *, startup: bool) -> bool:
        if self.trigger and not startup and self.trigger in message:
            self.trigger = None
            self.cut_all()
            return False
        link.server.sendall(message)
        return True


@pytest.fixture
def outage(pg_server: LocalPostgres) -> Iterator[tuple[Outage, str, str]]:
    """The proxy, a fresh journal's URL through it, and the same journal's direct URL."""
    proxy = Outage(pg_server.port)
    name = "once_" + str(proxy.port)
    direct = pg_server.create_database(name)
    Journal(direct).close()
    with proxy:
        yield proxy, proxy.url(name), direct


async def test_a_command_whose_mark_is_lost_with_the_server_is_not_applied_again(
    outage: tuple[Outage, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy, through, direct = outage
    monkeypatch.setattr(_pg_store, "RETRY_S", 0.3)  # how long the mark retries a server gone away (5 s in use)
    person = Journal(direct)  # another machine, whose link stays up
    journal = Journal(through, batch_interval=0.001)
    supervisor = Supervisor(replace(CONFIG), journal)
    try:
        journal.append(FleetTask(session="t1", fleet=CONFIG.name, run="r1"))
        journal.flush()
        await supervisor.start(loops=False)
        proxy.arm(b"FROM unnest(")  # the mark: the link goes down as it is sent
        cid = person.submit_command("fleet:t1", "nudge", payload={"message": "look at the failing test"})
        await wait_until(proxy.down.is_set, 20, what="the supervisor applied the nudge and sent its mark")
        # down for longer than the lease: a claim that old is released as a dead process's
        with psycopg.connect(direct, autocommit=True) as admin:  # judged on the server's clock, as the lease is
            # (applied already: its effect and the state were one transaction; only the supervisor's own mark was lost)
            old = "SELECT 1 FROM commands WHERE id = %s AND claimed_at < now() - interval '1s'"
            await wait_until(lambda: admin.execute(old, [cid]).fetchone(), 20, what="the claim outlived its lease")
        proxy.up()
        command = await wait_until(
            lambda: next(
                (c for c in person.commands(status=None) if c.id == cid and c.detail.startswith("queued as")), None
            ),
            20,
            what="the command marked once the server is back",
        )
        assert command.status == "applied" and command.detail.startswith("queued as nudge-"), command
        nudges = [r for r in person.read(0, kinds=("watcher_nudge",)) if r.session == "t1"]
        assert len(nudges) == 1, f"the person's nudge was given {len(nudges)} times"
    finally:
        await supervisor.close()
        journal.close(timeout=5)
        person.close()


async def test_a_supervisor_closed_with_a_mark_lost_marks_it_as_it_closes(
    outage: tuple[Outage, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Left claimed, the next supervisor (a restart, a new leader) applied it again once its lease ran out."""
    proxy, through, direct = outage
    monkeypatch.setattr(_pg_store, "RETRY_S", 0.3)
    person = Journal(direct)
    journal = Journal(through, batch_interval=0.001)
    supervisor = Supervisor(replace(CONFIG, command_poll_s=60.0, command_lease_s=60.0), journal)
    try:
        journal.append(FleetTask(session="t1", fleet=CONFIG.name, run="r1"))
        journal.flush()
        await supervisor.start(loops=False)
        proxy.arm(b"FROM unnest(")
        cid = person.submit_command("fleet:t1", "pause", payload={"reason": "a person looks"})
        await wait_until(proxy.down.is_set, 20, what="the supervisor applied the pause and sent its mark")
        await wait_until(lambda: len(person.read(0, kinds=("watcher_pause",))) == 1, 20, what="the pause")
        proxy.up()
        await supervisor.close()  # its poller sleeps for a minute: only closing can mark it now
        (command,) = [c for c in person.commands(status=None) if c.id == cid]
        assert command.status == "applied" and command.detail == "paused at its next boundary", command
    finally:
        await supervisor.close()
        journal.close(timeout=5)
        person.close()
