"""The task host: runs a fleet's tasks in this process and applies what the journal addresses to them.

The host is the fleet's task side. It starts each task (announcing it with a ``FleetTask`` row),
feeds the task's observations to its ``TaskMonitor``, and at each of the task's iteration
boundaries writes the task's summary and applies what the supervision loops or a person decided:
the action rows addressed to its tasks (``WatcherNudge``, ``WatcherPause``, ``WatcherAbort``,
``SyncMessageSent``). It reads them from the journal, never from the loops' objects, both on a
short poll (a pause or an abort takes effect mid-response) and at every boundary (a message
written before a boundary rides with the very next request). The rows stay the decision every
process reads; applying one, the fleet's watcher of the task (``Runtime.speaker``, the ``health``
role) says it as an interjection with action ``nudge``, ``pause`` or ``abort``, which the engine
delivers to the task's channel and journals with its fate like any watcher's (a resume just
lets the channel go on). Syncs relayed to a paused task wait in its inbox and are recorded
``queued``, then ``delivered_on_resume`` when it resumes.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

from watcher.agents import Boundary, agent
from watcher.core.errors import JournalError
from watcher.core.interjection import Interjection, Origin, Severity
from watcher.core.logs import logger
from watcher.evaluators import RulesEvaluator
from watcher.fleet.channel import TaskChannel, TaskSession
from watcher.fleet.events import (
    FleetTask,
    LearningExtracted,
    SyncMessageSent,
    TaskHostBeat,
    WatcherAbort,
    WatcherNudge,
    WatcherPause,
)
from watcher.fleet.follow import Follower
from watcher.fleet.learnings import Extractor, Learning, render_sync
from watcher.fleet.monitor import TaskMonitor, TurnExtractor
from watcher.fleet.spawned import CLI_AGENTS, SpawnedRun
from watcher.fleet.tasks import FleetConfig, SharedRun, TaskSpec
from watcher.roles.health import HEALTH_SPEC, HealthRole
from watcher.runtime.engine import Watcher
from watcher.runtime.events import DeliveryEvent, Event, ObservationEvent
from watcher.runtime.fates import QUEUED
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Journal
from watcher.runtime.polling import poll

__all__ = ["FLEET_ORIGIN", "TaskHost"]

log = logger("watcher.fleet")

FLEET_ORIGIN = Origin.of_watcher("fleet")
ACTION_KINDS = frozenset({"watcher_nudge", "watcher_pause", "watcher_abort", "sync_message", "learning_extracted"})
_SEVERITIES: dict[str, Severity] = {"hint": "hint", "warning": "warning", "critical": "critical"}
LEARNINGS_KEPT = 50_000  # learnings remembered for the syncs that name them (oldest forgotten first)


class TaskHost:
    """Runs ``specs`` as agent runs on ``runtime`` and applies the journal's actions to them."""

    def __init__(
        self,
        specs: Mapping[str, TaskSpec],
        *,
        config: FleetConfig,
        journal: Journal,
        runtime: Runtime,
        client: Any,
        extractor: Extractor | None = None,
        turn_extractor: TurnExtractor | None = None,
        shared: SharedRun | None = None,
    ) -> None:
        self.specs = specs
        self.shared = shared
        self.config = config
        self.journal = journal
        self.runtime = runtime
        self.client = client
        self.channels: dict[str, TaskChannel] = {}
        self.monitors: dict[str, TaskMonitor] = {}
        self.voices: dict[str, Watcher] = {}  # the fleet's watcher of each task (``Runtime.speaker``)
        self._health = RulesEvaluator(HealthRole())  # the role it speaks for (judged by the supervision loops)
        self.runs: dict[str, TaskSession] = {}
        self._extractors = (extractor, turn_extractor)
        self._follower = Follower(journal, after=journal.last_id(), flush=False)
        self.host = uuid.uuid4().hex[:12]  # this process, told apart from the other hosts of a shared run
        # this run of the fleet, told apart from earlier runs of its name (a shared run: named by its hosts)
        self.run = shared.run if shared is not None else self.host
        self._group = f"{config.name}:{self.run}"
        self._reading = asyncio.Lock()
        self._learnings: OrderedDict[str, LearningExtracted] = OrderedDict()
        self._queued: dict[str, list[SyncMessageSent]] = {}  # syncs waiting for a paused task
        self._poller: asyncio.Task[None] | None = None
        self._starting: set[str] = set()  # claimed, and not yet running here: `settled` must wait for them
        # journaled as started by this host, whose answer never came: started here once the journal shows it
        self._unsure_starts: set[str] = set()

    def start(self) -> None:
        """Announce and start every task (or, in a shared run, claim some), and the poller that applies actions."""
        self.runtime.bus.subscribe("fleet-host", self._route, maxsize=1_000_000)
        if self.shared is None:  # this host runs every task; a shared run's are claimed by its poller
            for spec in self.specs.values():
                self._start_task(spec)
        self._poller = asyncio.get_running_loop().create_task(self._poll(), name="fleet-host")

    def _start_task(self, spec: TaskSpec) -> None:
        """Announce ``spec`` and start it as an agent run or a spawned CLI."""
        cfg = self.config
        self.journal.append(
            FleetTask(
                session=spec.name,
                fleet=cfg.name,
                agent=spec.agent,
                model=spec.model,
                tags=spec.tags,
                parent=spec.parent,
                directory=spec.directory,
                run=self.run,
                host=self.host if self.shared is not None else "",
            )
        )
        self.channels[spec.name] = channel = TaskChannel(spec.name)
        self.voices[spec.name] = self.runtime.speaker(HEALTH_SPEC, self._health, channel)
        self.monitors[spec.name] = TaskMonitor(
            spec,
            cfg.name,
            self.journal,
            file_tools=cfg.file_tools,
            extractor=self._extractors[0],
            turn_extractor=self._extractors[1],
        )
        if spec.agent in CLI_AGENTS:  # a spawned CLI in a worktree: the same duck interface (fleet.spawned)
            cli = SpawnedRun(spec, runtime=self.runtime, at_boundary=partial(self._boundary, spec.name), gate=channel)
            channel.run = self.runs[spec.name] = cli
            return
        channel.run = self.runs[spec.name] = agent(
            spec.prompt,
            name=spec.name,
            tools=spec.tools,
            model=spec.model,
            system=spec.system,
            client=self.client,
            runtime=self.runtime,
            max_steps=spec.max_steps,
            max_corrections_per_step=spec.max_corrections_per_step,
            at_boundary=partial(self._boundary, spec.name),
        )

    async def close(self, reason: str = "the fleet closed") -> None:
        """Stop polling; abort the tasks still running and wait for them."""
        if self._poller is not None:
            self._poller.cancel()
            await asyncio.gather(self._poller, return_exceptions=True)
        for name, channel in self.channels.items():
            if not channel.ended:
                channel.abort(reason)
                await asyncio.gather(self.runs[name].wait(), return_exceptions=True)
        for monitor in self.monitors.values():
            await monitor.close()

    # --- the task side of each boundary ------------------------------------------------------------

    def _route(self, event: Event) -> None:
        monitor = self.monitors.get(event.session)
        if monitor is None:
            return
        if isinstance(event, ObservationEvent):
            monitor.observe(event)
        elif isinstance(event, DeliveryEvent):
            monitor.delivered(event)

    async def _boundary(self, task: str, at: Boundary) -> None:
        """At ``task``'s iteration boundary: its summary, then what waits for it, then the pause gate."""
        await self.runtime.bus.drain()  # the monitor has seen everything the task published so far
        await self.monitors[task].boundary(at)
        try:
            await self.apply_new()
        except (
            JournalError
        ) as exc:  # the journal is away (a server restarting): the task goes on, the poller catches up
            log.warning("fleet host: %s's actions are read later: %s", task, exc)
        await self.channels[task].hold()

    async def _poll(self) -> None:
        beat_at = 0.0

        async def look() -> None:
            nonlocal beat_at
            if time.monotonic() >= beat_at:  # alive: the loops tell a dead host's tasks (lost) from stuck ones
                beat_at = time.monotonic() + self.config.host_beat_s
                running = sum(1 for channel in self.channels.values() if not channel.ended)
                host = self.host if self.shared is not None else ""
                self.journal.append(
                    TaskHostBeat(
                        session=f"host:{host or self.run}",
                        fleet=self.config.name,
                        run=self.run,
                        tasks=running,
                        host=host,
                    )
                )
                if self.shared is not None:
                    await asyncio.to_thread(self.journal.beat_claims, self._group, self.host)
            if self.shared is not None:
                await self._claim_more(self.shared.max_tasks)
            await self.apply_new()

        await poll(
            look,
            self.config.command_poll_s,
            log,
            failed="fleet host: applying journal actions",
            recovered="fleet host: journal actions are applied again",
            nap=self.journal.nap,
        )

    async def _claim_more(self, max_tasks: int) -> None:
        """Claim and start tasks no host started yet, until this host runs ``max_tasks`` of them."""
        running = sum(1 for channel in self.channels.values() if not channel.ended)
        if running >= max_tasks:
            return
        journal, lost_s = self.journal, self.config.host_lost_s
        started = await asyncio.to_thread(journal.started_tasks, self._group)
        for spec in self.specs.values():
            if running >= max_tasks:
                return
            if spec.name in self._unsure_starts and spec.name not in self.channels:
                self._unsure_starts.discard(spec.name)
                if spec.name in started:  # the start this host journaled did land: the task is this host's
                    self._start_task(spec)
                    running += 1
                    continue
            if spec.name in started or spec.name in self.channels or spec.name in self._starting:
                continue
            self._starting.add(spec.name)
            try:
                if await asyncio.to_thread(journal.claim_task, self._group, spec.name, self.host, lost_s):
                    try:
                        await asyncio.to_thread(journal.start_task, self._group, spec.name, self.host)
                    except JournalError:  # it may have landed (the answer lost): the next look tells
                        self._unsure_starts.add(spec.name)
                        raise
                    self._start_task(spec)
                    running += 1
            finally:
                self._starting.discard(spec.name)

    async def settled(self) -> None:
        """In a shared run: wait until some host started every task and this host's tasks ended."""
        while True:
            await asyncio.gather(*(run.wait() for run in list(self.runs.values())), return_exceptions=True)
            try:
                started = await asyncio.to_thread(self.journal.started_tasks, self._group)
            except JournalError as exc:  # the server is away: the claims poller retries meanwhile
                log.warning("fleet host: cannot read the run's claims (%s); retrying", exc)
                started = set()
            # a task this host has journaled as started may not run here yet (its start is awaited): it
            # would read as ended, and the run would close on it, aborting it ("the fleet closed")
            quiet = not self._starting and not self._unsure_starts
            if set(self.specs) <= started and quiet and all(c.ended for c in self.channels.values()):
                return
            await asyncio.sleep(self.config.command_poll_s)

    async def apply_new(self) -> None:
        """Apply the action rows written for this host's tasks since the last read."""
        async with self._reading:
            for event in await self._follower.read(None, kinds=ACTION_KINDS, expand=True):
                await self._apply(event)

    async def _apply(self, event: Event) -> None:
        if isinstance(event, LearningExtracted):
            self._learnings[event.learning_id] = event
            if len(self._learnings) > LEARNINGS_KEPT:
                self._learnings.popitem(last=False)
            return
        channel = self.channels.get(event.session)
        if channel is None or getattr(event, "fleet", "") != self.config.name:
            return  # another fleet's task, or a task of another host
        fleet = self.voices[event.session]  # the fleet's watcher of this task: it says what the loops decided
        if isinstance(event, WatcherNudge):
            severity = _SEVERITIES.get(event.severity, "warning")
            nudge = Interjection(content=event.message, severity=severity, action="nudge", id=event.interjection_id)
            self.monitors[event.session].nudged(nudge.id)
            await fleet.speak(nudge)
        elif isinstance(event, WatcherPause):
            if not event.resumed:
                await fleet.speak(Interjection(content=event.reason, action="pause"))  # (it is given an id)
            elif channel.resume():
                self._resumed(event.session)
        elif isinstance(event, WatcherAbort):
            reason = f"{event.by}: {event.reason}"
            await fleet.speak(Interjection(content=reason, severity="critical", action="abort"))
        elif isinstance(event, SyncMessageSent) and event.status == "sent":
            await self._relay(channel, event)

    async def _relay(self, channel: TaskChannel, event: SyncMessageSent) -> None:
        found = self._learnings.get(event.learning_id)
        if found is None:
            log.warning(
                "fleet host: sync %s names learning %s, not in the journal", event.interjection_id, event.learning_id
            )
            return
        learning = Learning(
            found.learning_id, found.session, found.text, found.source, found.urgency, found.observation
        )
        said = Interjection(
            content=render_sync(learning),
            action="sync",
            urgent=learning.urgency == "blocking",
            severity="critical" if learning.urgency == "blocking" else "hint",
            watcher=learning.task,
            id=event.interjection_id,
        )
        if not await channel.deliver(said, FLEET_ORIGIN, urgent=said.urgent):
            return
        if channel.paused:  # it waits in the inbox until the task resumes
            queued = replace(event, status=QUEUED)
            self._queued.setdefault(channel.name, []).append(queued)
            self.journal.append(queued)

    def _resumed(self, task: str) -> None:
        for held in self._queued.pop(task, []):
            self.journal.append(replace(held, status="delivered_on_resume"))
