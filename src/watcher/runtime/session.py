"""The parent session: what the runtime needs from anything it watches, and the rules they share.

Agent runs, notebook kernels, replayed transcripts, spawned CLI agents, hooked CLI sessions and
fleet tasks are all a ``Session``. The base class owns what they have in common:

- the **inbox**: interjections handed over that have not reached the parent yet, as ``Parcel``s;
- the **settle rules**: a parcel leaves the inbox once, journaled ``delivered`` when it reached
  the parent (``reached``: the request or output carrying it was sent, or the parent said it
  took it) or ``undeliverable`` when the session ended first (``end``);
- the **end state**: one ``EndState`` for every kind of session, journaled by the runtime.

An adapter implements only ``hand_over`` (give one interjection to its parent: ``delivered`` when
it got there at once, ``queued`` when it waits, in the inbox or in the parent's own channel)
and, where it can cut the parent off, ``interrupt``. ``inject`` raises ``SessionEndedError`` once
the session has ended; ``hand_over`` raises another ``WatcherError`` (``CorrectionCapReached``…)
when the session refuses an interjection. The engine journals the ``queued``/``delivered``
answer of ``inject``; the session journals how a queued one settles.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

from watcher.core.errors import SessionEndedError
from watcher.core.interjection import Interjection, Origin
from watcher.core.logs import logger
from watcher.runtime.events import DeliveryEvent, DeliveryOutcome, Event, InjectionOutcome
from watcher.runtime.fates import DELIVERED, UNDELIVERABLE

__all__ = ["EndState", "InjectionOutcome", "Parcel", "RecordingSession", "Session"]

log = logger("watcher.runtime")


class EndState(StrEnum):
    """How a parent session ended: one vocabulary for agent runs, spawns, hooked sessions and fleet tasks."""

    COMPLETED = "completed"  # it did its task
    FAILED = "failed"  # it broke (an error, a refused request)
    CRASHED = "crashed"  # its process died without a final answer
    ABORTED = "aborted"  # a watcher or a person stopped it for good
    PAUSED = "paused"  # a watcher or a person stopped it; it may be resumed
    INTERRUPTED = "interrupted"  # its process was stopped without a pause or an abort behind it
    CANCELLED = "cancelled"  # the task running it was cancelled from outside
    TIMEOUT = "timeout"  # it ran past its idle or total time limit
    MAX_STEPS = "max_steps"  # it ran out of steps
    PERMISSION_DENIED = "permission_denied"  # it needed a permission recovery could not give
    INTEGRATION_FAILED = "integration_failed"  # its work could not be committed or proposed
    CONFLICT = "conflict"  # its work conflicts with the branch it would be merged into
    LOST = "lost"  # the process hosting it stopped being heard from
    ENDED = "ended"  # it stopped with no verdict: a transcript's end, a notebook unloaded, a CLI's SessionEnd

    def __repr__(self) -> str:
        return repr(self.value)  # shown as the word it is (results printed in a notebook read as before)

    @classmethod
    def parse(cls, value: object) -> EndState | None:
        """The end state a journaled status names, or None (``started``, or a word it does not know)."""
        try:
            return cls(str(value))
        except ValueError:
            return None


@dataclass(frozen=True, slots=True)
class Parcel:
    """An interjection handed to a session, who said it, and the text the parent is given."""

    interjection: Interjection
    origin: Origin
    text: str  # what the parent is given (a CLI's formatted line); the journal keeps the interjection's words

    @classmethod
    def of(cls, interjection: Interjection, origin: Origin | None = None, text: str | None = None) -> Parcel:
        """A parcel of ``interjection`` (its speaker and its words unless given)."""
        return cls(interjection, origin or interjection.speaker, interjection.content if text is None else text)

    @property
    def id(self) -> str:
        return self.interjection.id


class Session(ABC):
    """A parent session that watchers can speak to; adapters implement ``hand_over``."""

    kind = "session"  # what the parent is, in messages ("agent run", "spawn session", ...)

    def __init__(self, name: str, *, publish: Callable[[Event], None] | None = None) -> None:
        self.name = name
        self.inbox: list[Parcel] = []  # handed over, waiting to reach the parent
        self.end_state: EndState | None = None
        self._publish = publish

    def bind(self, publish: Callable[[Event], None]) -> None:
        """Journal this session's settlements through ``publish`` (the runtime binds it when added)."""
        if self._publish is None:
            self._publish = publish

    @property
    def ended(self) -> bool:
        """True once the session can take no more interjections."""
        return self.end_state is not None

    async def inject(self, interjection: Interjection, *, origin: Origin) -> InjectionOutcome:
        """Hand ``interjection`` (said by ``origin``) to the parent: ``delivered`` or ``queued``.

        Raises ``SessionEndedError`` when the session has ended.
        """
        if self.ended:
            raise SessionEndedError(
                f"{self.kind} {self.name!r} has ended ({self.end_state}); "
                f"interjection {interjection.id!r} was not delivered"
            )
        return await self.hand_over(interjection, origin)

    @abstractmethod
    async def hand_over(self, interjection: Interjection, origin: Origin) -> InjectionOutcome:
        """Give one interjection to the parent (the session has not ended): delivered now, or queued."""

    async def interrupt(self) -> None:  # noqa: B027 - optional: a parent that cannot be cut off ignores it
        """Cut off what the parent is doing now, so a queued urgent interjection lands at once."""

    # --- the inbox and its settle rules ------------------------------------------------------

    def take(self) -> list[Parcel]:
        """Everything in the inbox, emptying it; each taken parcel is later ``reached`` or put back."""
        taken, self.inbox = self.inbox, []
        return taken

    def put_back(self, parcels: Iterable[Parcel]) -> None:
        """Parcels that could not go yet wait again, ahead of later ones and in their order."""
        self.inbox[:0] = list(parcels)

    def reached(self, parcels: Iterable[Parcel], detail: str) -> None:
        """Journal ``parcels`` delivered: what carries them has reached the parent."""
        self._settle(parcels, DELIVERED, detail)

    def undeliverable(self, parcels: Iterable[Parcel], detail: str) -> None:
        """Journal ``parcels`` undeliverable: the session ended before they reached the parent."""
        parcels = list(parcels)
        for parcel in parcels:
            log.warning("%s %r: interjection %s undeliverable: %s", self.kind, self.name, parcel.id, detail)
        self._settle(parcels, UNDELIVERABLE, detail)

    def end(self, state: EndState = EndState.ENDED, leftover: str = "") -> None:
        """Mark the session ended (once); what is still in the inbox is journaled undeliverable."""
        if self.end_state is None:
            self.end_state = state
        waiting = self.take()
        if waiting:
            self.undeliverable(waiting, leftover or f"the {self.kind} ended ({self.end_state}) before it reached it")

    def _settle(self, parcels: Iterable[Parcel], outcome: DeliveryOutcome, detail: str) -> None:
        if self._publish is None:
            return
        for parcel in parcels:
            said = parcel.interjection
            self._publish(
                DeliveryEvent(
                    session=self.name,
                    watcher=said.watcher,
                    interjection_id=said.id,
                    outcome=outcome,
                    detail=detail,
                    content=said.content,  # the words (a person's edit included), not the wire format
                    origin=parcel.origin.render(),
                )
            )


class RecordingSession(Session):
    """A session that keeps what it is given: replays, tests and notebooks without an agent."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.delivered: list[Interjection] = []
        self.origins: list[Origin] = []
        self.interrupts = 0

    async def hand_over(self, interjection: Interjection, origin: Origin) -> InjectionOutcome:
        self.delivered.append(interjection)
        self.origins.append(origin)
        return DELIVERED

    async def interrupt(self) -> None:
        self.interrupts += 1
