"""The parent-session port: what the runtime needs from anything it watches.

A session is observable (it publishes observations through the runtime), injectable (it takes
interjections) and interruptible (an urgent interjection stops what it is doing now). Agent runs,
notebook kernels and replayed transcripts each implement it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from watcher.core.errors import SessionEndedError
from watcher.core.interjection import Interjection

__all__ = ["RecordingSession", "Session"]


class Session(ABC):
    """A parent session that watchers can speak to."""

    name: str

    @property
    @abstractmethod
    def ended(self) -> bool:
        """True once the session can take no more interjections."""

    @abstractmethod
    async def inject(self, interjection: Interjection) -> None:
        """Deliver ``interjection``: urgent ones interrupt now, others wait for the next breakpoint.

        Raises ``SessionEndedError`` when the session has ended.
        """

    async def interrupt(self, reason: str) -> None:  # noqa: B027 - optional hook, no-op by default
        """Stop what the session is doing now (an urgent interjection, a pause or an abort)."""


class RecordingSession(Session):
    """A session that keeps what it is given: replays, tests and notebooks without an agent."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.delivered: list[Interjection] = []
        self.interrupts: list[str] = []
        self._ended = False

    @property
    def ended(self) -> bool:
        return self._ended

    def end(self) -> None:
        """Mark the session ended; later interjections are undeliverable."""
        self._ended = True

    async def inject(self, interjection: Interjection) -> None:
        if self._ended:
            raise SessionEndedError(f"session {self.name!r} has ended; the interjection was not delivered")
        self.delivered.append(interjection)

    async def interrupt(self, reason: str) -> None:
        self.interrupts.append(reason)
