"""A journal that was away is not every host silent: a host is lost only for beats missing while the journal answered.

The supervisor hears task hosts only through the journal. While the journal's server is down no
beat can reach it, so that time is nobody's silence: after the server returns, each host gets a
full ``host_lost_s`` again, and one that still does not beat is lost then.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from watcher.core.errors import JournalError
from watcher.fleet import FleetConfig
from watcher.fleet.actions import Actions
from watcher.fleet.events import FleetTask, TaskHostBeat
from watcher.fleet.roster import Roster
from watcher.fleet.watch import WatchCycle
from watcher.runtime.journal import Journal
from watcher.testing import FakeClock
from watcher.testing.postgres import LocalPostgres

CONFIG = FleetConfig(name="f", host_lost_s=1.5, min_task_age_s=0.0)


async def _until_a_cycle_reads(watch: WatchCycle, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while True:
        try:
            await watch.run()
            return
        except JournalError:  # the server is still starting, or a connection from before it stopped fails once
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


async def test_a_server_away_longer_than_host_lost_s_loses_no_host_and_a_silent_one_after(
    pg_server: LocalPostgres, pg_url: str
) -> None:
    host, journal = Journal(pg_url), Journal(pg_url)  # the task host's side, and the supervisor's
    clock = FakeClock()
    roster = Roster(CONFIG.name, journal, clock=clock, timeout_s=2.0)
    watch = WatchCycle(CONFIG, Actions(journal, roster, timeout_s=2.0), roster)
    for name in ("quiet", "beating"):
        host.append(FleetTask(session=name, fleet=CONFIG.name, run=name, host=name))
        host.append(TaskHostBeat(session=f"host:{name}", fleet=CONFIG.name, run=name, host=name))
    host.flush()
    await watch.run()
    assert roster.status("quiet") == roster.status("beating") == "running"
    pg_server.stop()
    try:
        clock.advance(10 * CONFIG.host_lost_s)  # the server stays away far longer than host_lost_s
        with pytest.raises(JournalError):
            await watch.run()
        assert roster.silent(CONFIG.host_lost_s) == [], "while the journal is away no host is silent"
    finally:
        pg_server.start()
    await _until_a_cycle_reads(watch)
    assert roster.status("quiet") == "running", "its silence while the server was away is not its own"
    host.append(TaskHostBeat(session="host:beating", fleet=CONFIG.name, run="beating", host="beating"))
    host.flush(timeout=30)
    clock.advance(CONFIG.host_lost_s)
    await watch.run()
    assert roster.status("quiet") == "running", "exactly host_lost_s since the journal answered: not past it"
    clock.advance(0.1)
    await watch.run()
    assert roster.status("quiet") == "lost", "no beat for host_lost_s while the journal answered: lost"
    assert roster.status("beating") == "running", "a host that beat after the return is alive"
    host.close()
    journal.close()
