"""A fleet's roster: its tasks as the journal tells them — announced, paused, resumed, ended.

The supervision loops and the command poller learn which tasks exist (``FleetTask`` rows, with
the tags, parent and directory that make tasks related) and where each stands (``WatcherPause``,
``WatcherAbort`` and session rows) from the journal, never from the task host's objects, so
tasks run anywhere the journal reaches. Each task's age counts from the moment the roster saw it,
on the monotonic clock of the process that reads.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass, field

from watcher.core.errors import JournalError
from watcher.fleet.events import FleetTask, TaskHostBeat, TaskLost, WatcherAbort, WatcherPause
from watcher.fleet.follow import Follower
from watcher.fleet.tasks import TaskSpec
from watcher.runtime.clock import SYSTEM_CLOCK, Clock
from watcher.runtime.events import SessionEvent
from watcher.runtime.journal import Journal

__all__ = ["Member", "Roster"]

_KINDS = frozenset({"fleet_task", "session", "watcher_pause", "watcher_abort", "task_host_beat", "task_lost"})
_LIVE = ("started", "running")


@dataclass(slots=True)
class Member:
    """One task of the fleet: what relates it to others, and its status (running, paused or how it ended)."""

    spec: TaskSpec
    seen: float = field(default_factory=time.monotonic)  # on the roster's clock
    status: str = "running"
    announced: float = 0.0  # wall-clock time of its FleetTask row (commands older than that are not for it)
    run: str = ""  # the fleet run that announced it
    host: str = ""  # the task host whose beats say it is alive (its run, when the run has one host)

    @property
    def ended(self) -> bool:
        return self.status not in ("running", "paused")

    @property
    def paused(self) -> bool:
        return self.status == "paused"


class Roster:
    """The tasks of fleet ``fleet`` in ``journal``, refreshed from the rows written since the last look.

    A refresh first commits this process's pending rows (the task host's announcements); when
    that takes longer than ``timeout_s`` it raises ``JournalError`` and the cycle fails.
    """

    def __init__(
        self,
        fleet: str,
        journal: Journal,
        *,
        after: int = 0,
        timeout_s: float | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.fleet = fleet
        self.clock = clock  # the supervision loops read time from it (a test moves a fake one on)
        self.after = after  # the journal id the fleet started after: older rows belong to earlier fleets
        self.members: dict[str, Member] = {}
        self.version = 0  # bumped when a task joins (the syncer re-indexes who is related to whom)
        self.beats: dict[str, float] = {}  # task host -> when it was last heard from (this clock)
        self.reachable = True  # the last refresh read the journal (False while its server is away)
        self._back = -math.inf  # when the journal answered again after it was away (this clock)
        self._follower = Follower(journal, after=after, flush_timeout_s=timeout_s)
        self._lock = asyncio.Lock()

    async def refresh(self) -> None:
        """Read what changed since the last refresh."""
        async with self._lock:
            try:
                events = await self._follower.read(None, kinds=_KINDS)
            except JournalError:
                self.reachable = False  # no host can be heard meanwhile: its silence is not the host's
                raise
            if not self.reachable:
                self.reachable = True
                self._back = self.clock.monotonic()
            for event in events:
                if isinstance(event, TaskHostBeat):
                    if event.fleet == self.fleet:
                        self._heard(event.host or event.run)
                    continue
                if isinstance(event, FleetTask):
                    known = self.members.get(event.session)
                    if event.fleet == self.fleet and (known is None or known.run != event.run):  # new, or run again
                        spec = TaskSpec(
                            event.session,
                            "",
                            agent=event.agent,
                            model=event.model,
                            tags=event.tags,
                            parent=event.parent,
                            directory=event.directory,
                        )
                        self.members[event.session] = Member(
                            spec,
                            seen=self.clock.monotonic(),
                            announced=event.ts,
                            run=event.run,
                            host=event.host or event.run,
                        )
                        self.version += 1
                    continue
                member = self.members.get(event.session)
                if member is None or member.ended:
                    continue
                if isinstance(event, SessionEvent) and event.status not in _LIVE:
                    member.status = event.status
                elif isinstance(event, WatcherPause) and event.fleet == self.fleet:
                    member.status = "running" if event.resumed else "paused"
                elif isinstance(event, WatcherAbort) and event.fleet == self.fleet:
                    member.status = "aborted"
                elif isinstance(event, TaskLost) and event.fleet == self.fleet and event.run == member.run:
                    member.status = "lost"

    def _heard(self, host: str) -> None:
        """A beat of ``host`` (read now: a supervisor started late gives every host a full grace)."""
        self.beats[host] = self.clock.monotonic()
        for member in self.members.values():
            if member.host == host and member.status == "lost":
                member.status = "running"  # its host was alive after all (it was held up, not dead)

    def silent(self, after_s: float) -> list[str]:
        """Running or paused tasks whose host beat before and has been silent for over ``after_s`` seconds.

        Only silence while this process could read the journal counts: after the journal was away
        (its server down, the network to it cut), every host gets a full ``after_s`` from the moment
        it answered again, since no beat could reach the journal meanwhile. While it is away, no
        host is silent.
        """
        if not self.reachable:
            return []
        now = self.clock.monotonic()
        since = {host: max(heard, self._back) for host, heard in self.beats.items()}
        if all(now - heard <= after_s for heard in since.values()):
            return []  # every host spoke lately (the usual case: no walk over thousands of tasks)
        return [
            name
            for name, member in self.members.items()
            if not member.ended and member.host in since and now - since[member.host] > after_s
        ]

    def status(self, task: str) -> str:
        member = self.members.get(task)
        return "unknown" if member is None else member.status

    def mark(self, task: str, status: str) -> None:
        """Record a status this process just decided (before its row is read back)."""
        member = self.members.get(task)
        if member is not None and not member.ended:
            member.status = status
