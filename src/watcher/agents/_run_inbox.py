"""The inbox of an ``AgentRun``: interjections waiting for the next boundary, and their fate.

``inject`` admits an interjection here (or refuses it: the run has ended, it has no content, or
the run already answered ``max_corrections_per_step`` watcher interjections in a row — seed 003's
cap; a person's guidance and a ``pause``/``abort`` are never capped). On the run's loop it is
queued, or turned into a stop if it is a ``pause``/``abort``; an urgent one cancels the response
being streamed. At a boundary the run takes the inbox: each interjection is formatted by
``_delivery`` (a watcher's in its authority's format, a person's as ``Supervisor:Guidance:``),
observed as a ``UserMessage`` and shown to the sinks. What is still queued when the run ends is
journaled as undeliverable, so no interjection vanishes silently.

Whose an interjection is decides its format. A string is a person's. An ``Interjection`` object
is a watcher's when a watcher announced it on the bus first (the engine publishes the
``InterjectionEvent`` before it calls ``inject``), else a person's guidance written through the
journal or a magic; the run waits for announcements before it classifies (``_run_loop``).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from watcher.agents._delivery import format_injection
from watcher.agents._sinks import RunEvent
from watcher.core.errors import CorrectionCapReached, SessionEndedError
from watcher.core.interjection import Interjection
from watcher.core.observations import UserMessage
from watcher.runtime.events import DeliveryEvent, Event, InterjectionEvent

if TYPE_CHECKING:
    from watcher.agents._run_loop import RunLoop
    from watcher.agents.run import AgentRun

__all__ = ["CorrectionCapReached", "Inbox", "InboxItem", "Queued"]

log = logging.getLogger("watcher.agents")

_STOPS = {"pause": "paused", "abort": "aborted"}  # actions that stop the run instead of being delivered


class Queued:
    """What ``inject`` returns: the interjection is already queued; awaiting this is optional."""

    __slots__ = ("interjection",)

    def __init__(self, interjection: Interjection) -> None:
        self.interjection = interjection

    def __await__(self) -> Iterator[Any]:
        return iter(())  # nothing to wait for: delivery happened when inject() was called

    def __repr__(self) -> str:
        return f"<queued interjection {self.interjection.id}>"


@dataclass(slots=True)
class InboxItem:
    """A queued interjection and whether a person sent it (None: decided at delivery)."""

    interjection: Interjection
    by_person: bool | None


class Inbox:
    """The interjections queued for one run's next boundary."""

    def __init__(self, run: AgentRun, turns: RunLoop) -> None:
        self.run = run
        self.turns = turns
        self.items: list[InboxItem] = []
        self.guided = False  # a person has given guidance: the run is supervised from now on (seed 004)
        self._announced: set[str] = set()  # ids of interjections a watcher announced on the bus

    def admit(self, interjection: Interjection | str, urgent: bool) -> InboxItem:
        """Check that ``interjection`` may be queued (any thread); a string is a person's guidance."""
        run = self.run
        by_person: bool | None = None
        if isinstance(interjection, str):
            interjection = Interjection(content=interjection.strip(), urgent=urgent, id=f"hand-{uuid.uuid4().hex[:8]}")
            by_person = True
        if run.ended:
            raise SessionEndedError(
                f"agent run {run.name!r} has ended ({run.status}); the interjection was not delivered"
            )
        if not interjection.content.strip() and interjection.action not in _STOPS:
            raise ValueError("an interjection needs content")
        if by_person is None and interjection.action not in _STOPS and self.turns.at_cap():
            raise CorrectionCapReached(
                f"agent run {run.name!r} already answered {run.max_corrections_per_step} interjections in a row "
                "(max_corrections_per_step); this one was not delivered"
            )
        return InboxItem(interjection, by_person)

    def put(self, item: InboxItem) -> None:
        """Queue an admitted item (on the run's loop); a pause or an abort stops the run instead."""
        run, i = self.run, item.interjection
        if run.ended:
            self.undeliverable([item], "the run ended before the interjection arrived")
            return
        if i.action in _STOPS:
            stop = run.pause if i.action == "pause" else run.abort
            stop(f"{i.watcher or 'a person'}: {i.content}".strip())
            return
        if item.by_person:
            self.guided = True
        self.items.append(item)
        if i.urgent:
            self.turns.interrupt()

    def on_event(self, event: Event) -> None:
        """Remember the interjections watchers announce for this run (they are not a person's)."""
        if isinstance(event, InterjectionEvent) and event.session == self.run.name:
            self._announced.add(event.interjection.id)

    def urgent(self) -> bool:
        """True when a queued interjection should not wait for the watchers to settle."""
        return any(item.interjection.urgent for item in self.items)

    def take(self) -> list[tuple[InboxItem, str]]:
        """Empty the inbox: each item with the text it is delivered as, observed and shown."""
        run = self.run
        items, self.items = self.items, []
        out = []
        for item in items:
            i = item.interjection
            by_person = item.by_person
            if by_person is None:  # a watcher's own interjections were announced on the bus first
                by_person = i.id not in self._announced and i.action == "guidance"
            watcher = run.runtime.watchers.get((run.name, i.watcher))
            authority = watcher.spec.authority if watcher is not None else "supervisor"
            text = format_injection(i, authority=authority, by_person=by_person)
            if by_person:
                self.guided = True
            run.runtime.observe(run.name, UserMessage(text=text, extra={"interjection_id": i.id, "watcher": i.watcher}))
            run.sinks.emit(
                RunEvent("interjection", text, {"id": i.id, "watcher": i.watcher, "urgent": i.urgent}, run.name)
            )
            out.append((item, text))
        return out

    def close(self, detail: str) -> None:
        """Journal whatever is still queued as undeliverable (the run has ended)."""
        leftover, self.items = self.items, []
        self.undeliverable(leftover, detail)

    def undeliverable(self, items: list[InboxItem], detail: str) -> None:
        """Publish an ``undeliverable`` ``DeliveryEvent`` for each item."""
        for item in items:
            i = item.interjection
            log.warning("agent run %r: interjection %s undeliverable: %s", self.run.name, i.id, detail)
            self.run.runtime.publish(
                DeliveryEvent(
                    session=self.run.name,
                    watcher=i.watcher,
                    interjection_id=i.id,
                    outcome="undeliverable",
                    detail=detail,
                    content=i.content,
                )
            )
