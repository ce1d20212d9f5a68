"""The fleet's hands: nudge, pause, resume, abort and relay, each written to the journal and committed.

An action is a journal row (``WatcherNudge``, ``WatcherPause``, ``WatcherAbort``,
``SyncMessageSent``), flushed before the call returns: the task host applies it at the task's
next boundary (``watcher.fleet.host``), a crash after the commit loses nothing, and any process
can read what was decided. The loops and the commands from other processes (``watcher fleet
nudge|pause|resume|abort``) all act through here; ``Stats`` counts what was done.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, replace

from watcher.core.interjection import Severity
from watcher.fleet.events import SyncMessageSent, TaskLost, WatcherAbort, WatcherNudge, WatcherPause
from watcher.fleet.roster import Roster
from watcher.runtime.events import Event
from watcher.runtime.journal import Journal

__all__ = ["Actions", "Stats"]


@dataclass(slots=True)
class Stats:
    """What the fleet decided since it started."""

    watcher_cycles: int = 0
    syncer_cycles: int = 0
    nudges_sent: int = 0
    syncs_relayed: int = 0
    learnings: int = 0
    tasks_paused: int = 0
    tasks_resumed: int = 0
    tasks_aborted: int = 0
    tasks_lost: int = 0


class Actions:
    """Writes one fleet's decisions to the journal; refuses those the roster says cannot apply."""

    def __init__(self, journal: Journal, roster: Roster, *, timeout_s: float | None = None) -> None:
        self.journal = journal
        self.timeout_s = timeout_s
        self.roster = roster
        self.fleet = roster.fleet
        self.stats = Stats()

    async def persist(self, *events: Event, commit: bool = True) -> None:
        """Append ``events`` and wait until they are committed (``JournalError`` after ``timeout_s``).

        ``commit=False`` leaves the commit to a later ``commit()``: a cycle deciding for many
        tasks commits its decisions once (a task host applies only committed rows anyway).
        """
        for event in events:
            self.journal.append(event)
        if commit:
            await self.commit()

    async def commit(self) -> None:
        """Wait until everything appended is committed (``JournalError`` after ``timeout_s``)."""
        await asyncio.to_thread(self.journal.flush, self.timeout_s)

    def _live(self, task: str) -> bool:
        member = self.roster.members.get(task)
        return member is not None and not member.ended

    async def nudge(
        self, task: str, message: str, severity: Severity, *, count: int = 0, by: str = "fleet", commit: bool = True
    ) -> str:
        """Persist a ``WatcherNudge`` (the task gets ``<system-nudge>`` with its next request); its id, "" if ended.

        The task's ``DeliveryEvent`` says when a request carried it, its summary when it answered.
        """
        if not self._live(task):
            return ""
        iid = f"nudge-{uuid.uuid4().hex[:10]}"
        await self.persist(
            WatcherNudge(
                session=task,
                fleet=self.fleet,
                interjection_id=iid,
                severity=severity,
                message=message,
                count=count,
                by=by,
            ),
            commit=commit,
        )
        self.stats.nudges_sent += 1
        return iid

    async def pause(self, task: str, reason: str, *, by: str = "fleet", commit: bool = True) -> bool:
        """Hold the task at its next boundary; False when it is paused already or ended."""
        if not self._live(task) or self.roster.status(task) == "paused":
            return False
        await self.persist(WatcherPause(session=task, fleet=self.fleet, reason=reason, by=by), commit=commit)
        self.roster.mark(task, "paused")
        self.stats.tasks_paused += 1
        return True

    async def resume(self, task: str, *, by: str = "person") -> bool:
        """Let a paused task go on, with what was relayed to it meanwhile; False when it is not paused."""
        if self.roster.status(task) != "paused":
            return False
        await self.persist(WatcherPause(session=task, fleet=self.fleet, reason="resumed", by=by, resumed=True))
        self.roster.mark(task, "running")
        self.stats.tasks_resumed += 1
        return True

    async def abort(self, task: str, reason: str, *, by: str = "fleet", commit: bool = True) -> bool:
        if not self._live(task):
            return False
        await self.persist(WatcherAbort(session=task, fleet=self.fleet, reason=reason, by=by), commit=commit)
        self.roster.mark(task, "aborted")
        self.stats.tasks_aborted += 1
        return True

    async def lose(self, task: str, silent_s: float, *, commit: bool = True) -> bool:
        """Record that ``task``'s host stopped beating: nothing runs it now; False when it had ended."""
        member = self.roster.members.get(task)
        if member is None or member.ended:
            return False
        reason = (
            f"its task host has not been heard from for over {silent_s:g}s: the process running it stopped; "
            "what was decided stays in the journal (run the tasks again to go on)"
        )
        await self.persist(TaskLost(session=task, fleet=self.fleet, run=member.run, reason=reason), commit=commit)
        self.roster.mark(task, "lost")
        self.stats.tasks_lost += 1
        return True

    async def relay(self, syncs: list[SyncMessageSent]) -> int:
        """Persist syncs (one row per learning for all its recipients, one commit); how many recipients."""
        live = [s for s in syncs if self._live(s.session)]
        if live:
            await self.persist(*_batched(live))
        self.stats.syncs_relayed += len(live)
        return len(live)


def _batched(events: list[SyncMessageSent]) -> list[SyncMessageSent]:
    """One row per learning for all its recipients (``SyncMessageSent.each`` expands it).

    A learning relayed to ten related tasks is one journal row, encoded once, not ten.
    """
    groups: dict[tuple[str, str], list[SyncMessageSent]] = {}
    for event in events:
        groups.setdefault((event.learning_id, event.status), []).append(event)
    return [
        group[0] if len(group) == 1 else replace(group[0], recipients=tuple(e.session for e in group))
        for group in groups.values()
    ]
