"""A supervisor that comes to lead while the journal will not answer it stands by and tries again.

Taking over is when the journal is least likely to answer (the server that lost the old leader
restarting, a migration holding its tables); the process must not end then.
"""

from __future__ import annotations

import asyncio
import logging
import threading

import psycopg
import pytest

from watcher.fleet import FleetConfig, Supervisor
from watcher.fleet.leader import supervise_while_leading
from watcher.runtime import _pg_store
from watcher.runtime.journal import Journal
from watcher.testing.waiting import wait_until


async def test_a_leader_whose_journal_is_locked_at_takeover_leads_once_it_is_free(
    pg_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_pg_store, "LOCK_TIMEOUT_S", 0.3)  # reads give up on a lock in 0.3 s, not 10
    config = FleetConfig(name="f", host_lost_s=1.5)
    said: list[str] = []
    free = threading.Event()
    locked = threading.Event()

    def hold_events_locked() -> None:  # as a VACUUM FULL or a long migration would
        with psycopg.connect(pg_url) as admin:
            admin.execute("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
            locked.set()
            free.wait(30)

    with Journal(pg_url) as journal:
        holder = threading.Thread(target=hold_events_locked, daemon=True)
        holder.start()
        await asyncio.to_thread(locked.wait, 10)
        caplog.set_level(logging.WARNING, logger="watcher.fleet")
        leading = asyncio.create_task(
            supervise_while_leading(
                config, journal, lambda: Supervisor(config, journal), duration_s=30, say=said.append
            )
        )
        try:
            await wait_until(lambda: "cannot start supervising" in caplog.text, within=15, what="a failed takeover")
            assert not leading.done(), "the process goes on standing by"
            free.set()
            await wait_until(lambda: any(s.startswith("leading the supervision") for s in said), within=15)
        finally:
            free.set()
            leading.cancel()
            await asyncio.gather(leading, return_exceptions=True)
            holder.join(10)
