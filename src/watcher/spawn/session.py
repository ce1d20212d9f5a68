"""A spawned agent CLI as a parent session: watchers' interjections reach the running process.

For a CLI with a live channel (Claude Code's stream-json input) a queued interjection is written
as a user message, which the CLI takes as a new turn when the current one ends; an urgent one is
preceded by an interrupt request, so the in-flight response is dropped and the next request
carries the message. For a CLI without one (Gemini CLI, Codex) the message waits for the run's
next breakpoint (the end of the headless run) and continues the same CLI session with
``--resume``/``resume``. ``pause`` and ``abort`` stop the process and are not delivered as text.
"""

from __future__ import annotations

import itertools

from watcher.agents._delivery import format_injection
from watcher.core.errors import SessionEndedError
from watcher.core.interjection import Interjection, Origin
from watcher.runtime.session import InjectionOutcome, Session
from watcher.spawn._adapter import AgentCLI
from watcher.spawn.process import AgentProcess

__all__ = ["SpawnSession"]

_requests = itertools.count(1)


class SpawnSession(Session):
    """The parent session of one spawn; ``process`` is the CLI run currently attached (or None)."""

    def __init__(self, name: str, adapter: AgentCLI) -> None:
        self.name = name
        self.adapter = adapter
        self.process: AgentProcess | None = None
        self.turns_sent = 0  # user lines written to the current process
        self.queued: list[str] = []  # messages for the next resume (no live channel, or it closed)
        self.delivered: list[tuple[Interjection, str]] = []  # (interjection, how: "live" | "resume")
        self.stopped_by: str = ""  # a pause/abort interjection ended the run
        self._ended = False

    @property
    def ended(self) -> bool:
        return self._ended

    def end(self) -> None:
        self._ended = True

    def attach(self, process: AgentProcess) -> None:
        self.process = process
        self.turns_sent = 0

    @property
    def _live(self) -> bool:
        proc = self.process
        return self.adapter.live and proc is not None and proc.returncode is None and not proc.stop_reason

    async def send(self, text: str) -> bool:
        """Write one user message to the running CLI; False when it cannot take it now."""
        if not self._live or self.process is None:
            return False
        if await self.process.write(self.adapter.message(text)):
            self.turns_sent += 1
            return True
        return False

    async def inject(self, interjection: Interjection, *, origin: Origin) -> InjectionOutcome:
        if self._ended:
            raise SessionEndedError(f"spawn session {self.name!r} has ended; the interjection was not delivered")
        if interjection.action in ("pause", "abort"):
            self.stopped_by = f"{interjection.action} by watcher {interjection.watcher or '?'}: {interjection.content}"
            if self.process is not None:
                await self.process.stop(self.stopped_by)
            return "delivered"
        text = format_injection(interjection)
        if interjection.urgent:
            await self.interrupt()
        if await self.send(text):
            self.delivered.append((interjection, "live"))
            return "delivered"
        self.queued.append(text)
        self.delivered.append((interjection, "resume"))
        return "queued"

    async def interrupt(self) -> None:
        """Stop the current turn of a live CLI; a CLI without a live channel runs on to its breakpoint.

        Killing a headless Gemini or Codex run mid-turn can lose the session it would resume, so
        its queued message waits for the run's end (its next breakpoint) instead.
        """
        if self._live and self.process is not None:
            await self.process.write(self.adapter.interrupt(f"watcher_{next(_requests)}"))
