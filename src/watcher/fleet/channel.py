"""A fleet task's channel: its agent run, and whether the fleet holds it at its iteration boundaries.

Nudges and syncs are interjections handed to the run (``AgentRun.inject``): the run keeps them in
its inbox and sends them with its next request, never between a ``tool_use`` and its result.
Pause holds the run at its next boundary (``hold``, awaited by the task host there): the
conversation stays as it was, and what is handed over meanwhile waits in the inbox. Resume lets it
go on from where it stopped, with what waited. Abort stops the run.
"""

from __future__ import annotations

import asyncio
from typing import TypeAlias

from watcher.agents import AgentRun
from watcher.core.errors import WatcherError
from watcher.core.interjection import Interjection, Origin
from watcher.fleet.spawned import SpawnedRun

__all__ = ["TaskChannel", "TaskSession"]

TaskSession: TypeAlias = AgentRun | SpawnedRun  # the session a fleet task runs: an agent run or a spawned CLI


class TaskChannel:
    """The task host's hold on one task: deliver, pause, resume, abort; ``status`` says where it is."""

    def __init__(self, name: str) -> None:
        self.name = name
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
        return self.run is None or self.run.ended

    @property
    def status(self) -> str:
        if self.run is None:
            return "pending"
        if self.run.ended:
            return self.run.status
        return "paused" if self.paused else "running"

    async def deliver(self, interjection: Interjection, origin: Origin, *, urgent: bool = False) -> bool:
        """Queue ``interjection`` for the run's next request (cutting off the response in flight if ``urgent``)."""
        if self.run is None or self.run.ended:
            return False
        try:
            await self.run.inject(interjection, origin=origin)
        except WatcherError:
            return False
        if urgent and not self.paused:
            await self.run.interrupt()
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
