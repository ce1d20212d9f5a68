"""The fleet's hands: nudge, pause, resume, abort and relay, each persisted before it acts.

Every action is appended to the journal and flushed before the task is touched, so a crash
between the two loses nothing (the record says what was meant) and another process can read it.
The loops and the commands from other processes (``watcher fleet nudge|pause|resume|abort``)
all act through here; ``Stats`` counts what was done.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field, replace

from watcher.core.interjection import Interjection, Origin, Severity
from watcher.fleet.channel import TaskChannel
from watcher.runtime.events import Event, SyncMessageSent, WatcherAbort, WatcherNudge, WatcherPause
from watcher.runtime.journal import Journal

__all__ = ["Actions", "Stats"]

FLEET_ORIGIN = Origin.of_watcher("fleet")


@dataclass(slots=True)
class Stats:
    """What the fleet did since it started."""

    watcher_cycles: int = 0
    syncer_cycles: int = 0
    nudges_sent: int = 0
    syncs_relayed: int = 0
    syncs_queued: int = 0
    learnings: int = 0
    tasks_paused: int = 0
    tasks_aborted: int = 0
    by_task: dict[str, int] = field(default_factory=dict)


class Actions:
    """Acts on the fleet's task channels, journaling first."""

    def __init__(self, journal: Journal, channels: dict[str, TaskChannel]) -> None:
        self.journal = journal
        self.channels = channels
        self.stats = Stats()

    async def persist(self, *events: Event) -> None:
        """Append ``events`` and wait until they are committed."""
        for event in events:
            self.journal.append(event)
        await asyncio.to_thread(self.journal.flush)

    async def nudge(self, task: str, message: str, severity: Severity, *, count: int = 0, by: str = "fleet") -> str:
        """Persist a ``WatcherNudge``, then queue ``<system-nudge>`` for the task's next boundary.

        Returns the nudge's interjection id ("" when the task has ended); its ``DeliveryEvent``
        says when a request carried it.
        """
        channel = self.channels.get(task)
        if channel is None or channel.ended:
            return ""
        iid = f"nudge-{uuid.uuid4().hex[:10]}"
        await self.persist(
            WatcherNudge(session=task, interjection_id=iid, severity=severity, message=message, count=count, by=by)
        )
        said = Interjection(content=message, severity=severity, action="nudge", watcher="fleet", id=iid)
        if await channel.deliver(said, FLEET_ORIGIN) == "queued":
            self.stats.nudges_sent += 1
            return iid
        return ""

    async def pause(self, task: str, reason: str, *, by: str = "fleet") -> bool:
        channel = self.channels.get(task)
        if channel is None or channel.ended or channel.paused:
            return False
        await self.persist(WatcherPause(session=task, reason=reason, by=by))
        channel.pause()
        self.stats.tasks_paused += 1
        return True

    async def resume(self, task: str, *, by: str = "person") -> int:
        """Resume a paused task with the syncs held for it; returns how many it received."""
        channel = self.channels.get(task)
        if channel is None or channel.ended or not channel.paused:
            return -1
        held = list(channel.held)
        await self.persist(
            WatcherPause(session=task, reason=f"resumed with {len(held)} queued sync(s)", by=by, resumed=True)
        )
        handed = await channel.resume()
        for item in held:
            i = item.interjection
            self.journal.append(
                SyncMessageSent(
                    session=task,
                    interjection_id=i.id,
                    learning_id=i.id.removeprefix("sync-").removesuffix(f"-{task}"),
                    source_task=i.watcher,
                    urgency="",
                    text="",
                    status="delivered_on_resume",
                )
            )
        self.stats.syncs_relayed += handed
        return handed

    async def abort(self, task: str, reason: str, *, by: str = "fleet") -> bool:
        channel = self.channels.get(task)
        if channel is None or channel.ended:
            return False
        await self.persist(WatcherAbort(session=task, reason=reason, by=by))
        channel.abort(f"{by}: {reason}")
        self.stats.tasks_aborted += 1
        return True

    async def relay(self, batch: list[tuple[SyncMessageSent, Interjection]]) -> list[str]:
        """Persist syncs for their recipients (one commit for the batch), then hand each over.

        A sync for a paused recipient is recorded ``queued`` and held until it resumes.
        """
        live = [(e, s) for e, s in batch if (c := self.channels.get(e.session)) is not None and not c.ended]
        stamped = [(replace(e, status="queued") if self.channels[e.session].paused else e, s) for e, s in live]
        if stamped:
            await self.persist(*_batched([e for e, _ in stamped]))
        outcomes = []
        for event, said in stamped:
            channel = self.channels[event.session]
            outcome = await channel.deliver(said, FLEET_ORIGIN)
            if outcome == "queued":
                self.stats.syncs_relayed += 1
                if said.urgent and channel.run is not None:  # blocking: cut off the response in flight
                    await channel.run.interrupt()
            elif outcome == "held":
                self.stats.syncs_queued += 1
            outcomes.append(outcome)
        return outcomes


def _batched(events: list[SyncMessageSent]) -> list[SyncMessageSent]:
    """One row per learning and status for all its recipients (``SyncMessageSent.each`` expands it).

    A learning relayed to ten related tasks is one journal row, encoded and redacted once, not ten.
    """
    groups: dict[tuple[str, str], list[SyncMessageSent]] = {}
    for event in events:
        groups.setdefault((event.learning_id, event.status), []).append(event)
    return [
        group[0] if len(group) == 1 else replace(group[0], recipients=tuple(e.session for e in group))
        for group in groups.values()
    ]
