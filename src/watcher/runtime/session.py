"""The parent-session port: what the runtime needs from anything it watches.

A session is observable (it publishes observations through the runtime), injectable (it takes
interjections) and interruptible (an urgent interjection cuts off what it is doing now). Agent
runs, notebook kernels, replayed transcripts, spawned CLI agents and hooked sessions implement it.

The contract of ``inject``:

- it answers ``"delivered"`` when the interjection has reached the parent by the time it returns
  (a recording, a notebook panel that shows it at once): the engine journals the delivery;
- it answers ``"queued"`` when the interjection has not reached the parent yet (it waits for
  the parent's next breakpoint, or for the parent to acknowledge it): the engine journals it as
  queued, and the *session* later publishes the ``DeliveryEvent`` that settles it
  (``delivered`` when the request or output carrying it reaches the parent, or the parent says
  it took it; ``undeliverable`` when the session ends first);
- it raises ``SessionEndedError`` when the session has ended, and another ``WatcherError``
  (``CorrectionCapReached``…) when it refuses the interjection.

The engine calls ``interrupt`` after injecting an urgent interjection that was only queued; a
session that already cut the parent off for it ignores the call.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Literal, TypeAlias

from watcher.core.errors import SessionEndedError
from watcher.core.interjection import Interjection, Origin

__all__ = ["InjectionOutcome", "RecordingSession", "Session"]

InjectionOutcome: TypeAlias = Literal["queued", "delivered"]


class Session(ABC):
    """A parent session that watchers can speak to."""

    name: str

    @property
    @abstractmethod
    def ended(self) -> bool:
        """True once the session can take no more interjections."""

    @abstractmethod
    async def inject(self, interjection: Interjection, *, origin: Origin) -> InjectionOutcome:
        """Hand ``interjection`` (said by ``origin``) to the parent: ``"delivered"`` or ``"queued"``.

        Raises ``SessionEndedError`` when the session has ended.
        """

    async def interrupt(self) -> None:  # noqa: B027 - optional: a parent that cannot be cut off ignores it
        """Cut off what the parent is doing now, so a queued urgent interjection lands at once."""


class RecordingSession(Session):
    """A session that keeps what it is given: replays, tests and notebooks without an agent."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.delivered: list[Interjection] = []
        self.origins: list[Origin] = []
        self.interrupts = 0
        self._ended = False

    @property
    def ended(self) -> bool:
        return self._ended

    def end(self) -> None:
        """Mark the session ended; later interjections are undeliverable."""
        self._ended = True

    async def inject(self, interjection: Interjection, *, origin: Origin) -> InjectionOutcome:
        if self._ended:
            raise SessionEndedError(
                f"session {self.name!r} has ended; interjection {interjection.id!r} was not delivered"
            )
        self.delivered.append(interjection)
        self.origins.append(origin)
        return "delivered"

    async def interrupt(self) -> None:
        self.interrupts += 1
