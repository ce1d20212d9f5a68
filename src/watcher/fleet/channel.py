"""A fleet task's channel: the task as the fleet's watcher speaks to it, and whether the fleet holds it.

The channel is the task's ``Session`` for the fleet's watcher (``Runtime.speaker``): what the
fleet decides is an interjection the engine delivers here and journals with its fate. A
``nudge`` (and a sync) is handed to the run (``AgentRun.inject``, ``SpawnedRun.inject``), which keeps it in
its inbox and sends it with its next request, never between a ``tool_use`` and its result, and
journals it delivered then. A ``pause`` holds the run at its next boundary (``hold``, awaited by
the task host there): the conversation stays as it was, and what is handed over meanwhile waits
in the inbox; ``resume`` lets it go on from where it stopped, with what waited. An ``abort``
stops the run. A pause or an abort is delivered when the channel takes it: the hold or the stop
is the fleet's own, not a message to the agent.
"""

from __future__ import annotations

import asyncio
from typing import TypeAlias

from watcher.agents import AgentRun
from watcher.core.errors import SessionEndedError, WatcherError
from watcher.core.interjection import Interjection, Origin
from watcher.fleet.spawned import SpawnedRun
from watcher.runtime.fates import DELIVERED
from watcher.runtime.session import InjectionOutcome, Session

__all__ = ["TaskChannel", "TaskSession"]

TaskSession: TypeAlias = AgentRun | SpawnedRun  # the session a fleet task runs: an agent run or a spawned CLI


class TaskChannel(Session):
    """The task host's hold on one task: deliver, pause, resume, abort; ``status`` says where it is."""

    kind = "fleet task"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.run: TaskSession | None = None
        self._going = asyncio.Event()
        self._going.set()
        self.held = False  # True while the run waits at a boundary for its resume
        self.aborted = False  # once asked to stop, nothing holds it again

    @property
    def paused(self) -> bool:
        return not self._going.is_set()

    @property
    def ended(self) -> bool:
        """True once the run has ended (or before it is there): the task takes nothing more."""
        return self.run is None or self.run.ended

    async def hand_over(self, interjection: Interjection, origin: Origin) -> InjectionOutcome:
        """The fleet's decision reaches the task: a pause holds it, an abort stops it, anything else goes to the run."""
        if interjection.action == "pause":
            self.pause()
            return DELIVERED
        if interjection.action == "abort":
            self.abort(interjection.content)
            return DELIVERED
        if self.run is None:  # (``inject`` refused it already: a channel without its run has not begun)
            raise SessionEndedError(
                f"fleet task {self.name!r} has no run; interjection {interjection.id!r} was not delivered"
            )
        return await self.run.inject(interjection, origin=origin)

    async def interrupt(self) -> None:
        """Cut off the run's response in flight, unless the fleet holds it (what waits goes on resume)."""
        if self.run is not None and not self.paused:
            await self.run.interrupt()

    async def deliver(self, interjection: Interjection, origin: Origin, *, urgent: bool = False) -> bool:
        """Queue ``interjection`` for the run's next request (cutting off the response in flight if ``urgent``).

        False when the task did not take it (it has ended, or refused it); a sync relayed between
        tasks comes this way, recorded by its own ``SyncMessageSent`` rows.
        """
        try:
            await self.inject(interjection, origin=origin)
        except WatcherError:
            return False
        if urgent:
            await self.interrupt()
        return True

    async def hold(self) -> None:
        """Wait here while the task is paused (the task host awaits it at each boundary)."""
        if self._going.is_set():
            return
        self.held = True
        try:
            await self._going.wait()
        finally:
            self.held = False

    def pause(self) -> bool:
        """Hold the run at its next boundary; False when it already is, or has ended."""
        if self.paused or self.ended or self.aborted:
            return False
        self._going.clear()
        return True

    def resume(self) -> bool:
        """Let a paused run go on; False when it was not paused."""
        if not self.paused:
            return False
        self._going.set()
        return True

    def abort(self, reason: str) -> None:
        """Stop the run at once with status ``aborted``."""
        self.aborted = True
        self._going.set()
        if self.run is not None and not self.run.ended:
            self.run.abort(reason)
