"""The inbox of an ``AgentRun``: interjections waiting for the next boundary, and their fate.

The run's loop admits an interjection here once it has checked the run's own rules (ended, the
cap on corrective turns, a ``pause``/``abort`` that stops the run instead); the inbox only checks
that it has something to say. At a boundary the loop takes the inbox: each interjection is
formatted by ``_delivery`` (a watcher's in its authority's format, a person's as
``Supervisor:Guidance:``, as its ``Origin`` says), observed as a ``UserMessage`` and shown to the
sinks; it is journaled ``delivered`` when the request that carries it is sent. What is still queued (or taken but never sent) when the run ends is
journaled as undeliverable, so no interjection vanishes silently.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from watcher.agents._delivery import format_injection
from watcher.agents._sinks import OutputSinks, RunEvent
from watcher.core.errors import EmptyInterjectionError
from watcher.core.interjection import Interjection, Origin
from watcher.core.logs import logger
from watcher.core.observations import UserMessage
from watcher.runtime.events import DeliveryEvent, DeliveryOutcome
from watcher.runtime.hub import Runtime

__all__ = ["STOPS", "Inbox", "InboxItem"]

log = logger("watcher.agents")

STOPS = {"pause": "paused", "abort": "aborted"}  # actions that stop the run instead of being delivered


@dataclass(frozen=True, slots=True)
class InboxItem:
    """A queued interjection and who said it."""

    interjection: Interjection
    origin: Origin


class Inbox:
    """The interjections queued for one run's next boundary; it knows nothing of the run's turns."""

    def __init__(self, session: str, runtime: Runtime, sinks: OutputSinks) -> None:
        self.session = session
        self.runtime = runtime
        self.sinks = sinks
        self.items: list[InboxItem] = []
        self.guided = False  # a person has given guidance: the run is supervised from now on

    def admit(self, interjection: Interjection, origin: Origin) -> InboxItem:
        """Check that ``interjection`` has something to say (any thread); stamps its origin."""
        if not interjection.content.strip() and interjection.action not in STOPS:
            raise EmptyInterjectionError(
                f"agent run {self.session!r}: interjection {interjection.id!r} has no content; give it the text to say"
            )
        return InboxItem(replace(interjection, origin=origin), origin)

    def put(self, item: InboxItem) -> None:
        """Queue an admitted item (on the run's loop)."""
        if item.origin.by_person:
            self.guided = True
        self.items.append(item)

    def urgent(self) -> bool:
        """True when a queued interjection should not wait for the watchers to settle."""
        return any(item.interjection.urgent for item in self.items)

    def take(self) -> list[tuple[InboxItem, str]]:
        """Empty the inbox: each item with the text it is delivered as, observed and shown."""
        items, self.items = self.items, []
        out = []
        for item in items:
            i = item.interjection
            by_person = item.origin.by_person
            watcher = self.runtime.watchers.get((self.session, i.watcher))
            authority = watcher.spec.authority if watcher is not None else "supervisor"
            text = format_injection(i, authority=authority, by_person=by_person)
            if by_person:
                self.guided = True
            observed = UserMessage(text=text, extra={"interjection_id": i.id, "watcher": i.watcher})
            self.runtime.observe(self.session, observed)
            data = {"id": i.id, "watcher": i.watcher, "urgent": i.urgent}
            self.sinks.emit(RunEvent("interjection", text, data, self.session))
            out.append((item, text))
        return out

    def delivered(self, items: list[InboxItem]) -> None:
        """Journal ``items`` as delivered: the request that carries them is being sent."""
        self._publish(items, "delivered", "")

    def close(self, detail: str) -> None:
        """Journal whatever is still queued as undeliverable (the run has ended)."""
        leftover, self.items = self.items, []
        self.undeliverable(leftover, detail)

    def undeliverable(self, items: list[InboxItem], detail: str) -> None:
        """Journal ``items`` as undeliverable: the run ended before a request carried them."""
        for item in items:
            log.warning("agent run %r: interjection %s undeliverable: %s", self.session, item.interjection.id, detail)
        self._publish(items, "undeliverable", detail)

    def _publish(self, items: list[InboxItem], outcome: DeliveryOutcome, detail: str) -> None:
        for item in items:
            i = item.interjection
            self.runtime.publish(
                DeliveryEvent(
                    session=self.session,
                    watcher=i.watcher,
                    interjection_id=i.id,
                    outcome=outcome,
                    detail=detail,
                    content=i.content,
                    origin=item.origin.render(),
                )
            )
