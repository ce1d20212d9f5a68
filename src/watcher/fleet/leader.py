"""One leading supervisor per fleet: ``watcher fleet supervise`` may run on several machines at once.

The supervisors share a lease in the journal (``leases``, judged on the journal's clock: a
server's, so machines whose clocks disagree still agree on who leads). The leader renews it every
third of its term; a standby tries to take it as often. When the leader dies its lease runs out
and a standby leads within a term and a third — the term is half of ``host_lost_s``, so a new
leader is in place before any host could be judged lost. The new leader's ``Supervisor`` picks
the fleet up from the journal (the roster, each task's baseline, the nudge ladder, the relayed
learnings) as a restarted one does. A leader that cannot renew for a whole term (the journal is
unreachable) steps down: another may lead meanwhile.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from collections.abc import Callable
from typing import Any

from watcher.core.errors import JournalError
from watcher.core.logs import logger
from watcher.fleet.supervisor import Supervisor
from watcher.fleet.tasks import FleetConfig
from watcher.runtime.journal import Journal

__all__ = ["Leadership", "supervise_while_leading"]

log = logger("watcher.fleet")


class Leadership:
    """This process's claim to lead the supervision of one fleet."""

    def __init__(self, journal: Journal, fleet: str, term_s: float) -> None:
        self.journal = journal
        self.lease = f"fleet-supervisor:{fleet}"
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.term_s = term_s
        self.leading = False
        self._renewed = 0.0  # monotonic time of the last renewal this process saw succeed

    async def renew(self) -> bool:
        """Take or keep the lease; whether this process leads now."""
        started = time.monotonic()
        try:  # a renewal stuck on a dead link must not keep a partitioned leader leading
            held = await asyncio.wait_for(
                asyncio.to_thread(self.journal.hold_lease, self.lease, self.holder, self.term_s), self.term_s / 3
            )
        except (JournalError, TimeoutError) as exc:
            held = self.leading and started - self._renewed < self.term_s
            cause = str(exc) or "no answer in time"
            log.warning(
                "fleet: cannot renew the supervision lease (%s); %s", cause, "leading" if held else "standing by"
            )
        else:
            if held:
                self._renewed = started  # the term counts from the request: the server may have taken it late
        self.leading = held
        return held

    async def release(self) -> None:
        """Hand the lease over at once (a clean exit)."""
        if self.leading:
            try:
                await asyncio.to_thread(self.journal.drop_lease, self.lease, self.holder)
            except JournalError as exc:
                log.warning("fleet: cannot release the supervision lease (%s); it runs out by itself", exc)
            self.leading = False


async def supervise_while_leading(
    config: FleetConfig,
    journal: Journal,
    make: Callable[[], Supervisor],
    *,
    duration_s: float | None,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Supervise ``config.name`` whenever this process leads, until ``duration_s`` (None: until cancelled)."""
    leadership = Leadership(journal, config.name, term_s=config.host_lost_s / 2)
    supervisor: Supervisor | None = None
    totals: dict[str, Any] = {}
    ends = time.monotonic() + duration_s if duration_s is not None else float("inf")
    try:
        while time.monotonic() < ends:
            leading = await leadership.renew()
            if leading and supervisor is None:
                supervisor = await _started(make, leadership)
                if supervisor is not None:
                    say(f"leading the supervision of fleet {config.name} ({leadership.holder})")
            elif not leading and (supervisor is not None or not totals):
                if supervisor is not None:
                    await supervisor.close()
                    totals = _add(totals, supervisor)
                    supervisor = None
                totals = totals or {"standby": True}
                say(f"standing by: another supervisor leads fleet {config.name}")
            await asyncio.sleep(min(leadership.term_s / 3, max(0.0, ends - time.monotonic())))
    finally:
        if supervisor is not None:
            await supervisor.close()
            totals = _add(totals, supervisor)
        await leadership.release()
    return totals


async def _started(make: Callable[[], Supervisor], leadership: Leadership) -> Supervisor | None:
    """A started ``Supervisor``, or None (the lease handed back, to try again) when the journal will not let it start.

    Taking over is when the journal is least likely to answer (the server that lost the old leader
    may be restarting, a migration may hold its tables): a supervisor that cannot read its roster
    yet must not end the process that was standing by for this very moment.
    """
    supervisor: Supervisor | None = None
    try:
        supervisor = make()
        await supervisor.start()
    except JournalError as exc:
        if supervisor is not None:
            await supervisor.close()
        log.warning("fleet: cannot start supervising (%s); handing the lease back and trying again", exc)
        await leadership.release()
        return None
    return supervisor


def _add(totals: dict[str, Any], supervisor: Supervisor) -> dict[str, Any]:
    from dataclasses import asdict

    out = {k: v for k, v in totals.items() if k != "standby"}
    for key, value in asdict(supervisor.stats).items():
        out[key] = out.get(key, 0) + value if isinstance(value, int | float) else value
    return out
