"""The inbox of an ``AgentRun``: interjections waiting for the next boundary, and their fate.

``inject`` admits an interjection here (or refuses it: the run has ended, it has no content, or
the run already answered ``max_corrections_per_step`` watcher interjections in a row — the cap
on corrective turns; a person's guidance and a ``pause``/``abort`` are never capped). On the
run's loop it is queued, or turned into a stop if it is a ``pause``/``abort``. At a boundary the
run takes the inbox: each interjection is formatted by ``_delivery`` (a watcher's in its
authority's format, a person's as ``Supervisor:Guidance:``, as its ``Origin`` says), observed as
a ``UserMessage`` and shown to the sinks; it is journaled ``delivered`` when the request that
carries it is sent. What is still queued (or taken but never sent) when the run ends is
journaled as undeliverable, so no interjection vanishes silently.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from watcher.agents._delivery import format_injection
from watcher.agents._sinks import RunEvent
from watcher.core.errors import CorrectionCapReached, EmptyInterjectionError, SessionEndedError
from watcher.core.interjection import Interjection, Origin
from watcher.core.observations import UserMessage
from watcher.runtime.events import DeliveryEvent, DeliveryOutcome

if TYPE_CHECKING:
    from watcher.agents._run_loop import RunLoop
    from watcher.agents.run import AgentRun

__all__ = ["Inbox", "InboxItem"]

log = logging.getLogger("watcher.agents")

_STOPS = {"pause": "paused", "abort": "aborted"}  # actions that stop the run instead of being delivered


@dataclass(frozen=True, slots=True)
class InboxItem:
    """A queued interjection and who said it."""

    interjection: Interjection
    origin: Origin


class Inbox:
    """The interjections queued for one run's next boundary."""

    def __init__(self, run: AgentRun, turns: RunLoop) -> None:
        self.run = run
        self.turns = turns
        self.items: list[InboxItem] = []
        self.guided = False  # a person has given guidance: the run is supervised from now on

    def admit(self, interjection: Interjection, origin: Origin) -> InboxItem:
        """Check that ``interjection`` may be queued (any thread)."""
        run = self.run
        if run.ended:
            raise SessionEndedError(
                f"agent run {run.name!r} has ended ({run.status}); interjection {interjection.id!r} was not delivered"
            )
        if not interjection.content.strip() and interjection.action not in _STOPS:
            raise EmptyInterjectionError(
                f"agent run {run.name!r}: interjection {interjection.id!r} has no content; give it the text to say"
            )
        if not origin.by_person and interjection.action not in _STOPS and self.turns.at_cap():
            raise CorrectionCapReached(
                f"agent run {run.name!r} already answered {run.max_corrections_per_step} interjections in a row "
                "(max_corrections_per_step); this one was not delivered"
            )
        return InboxItem(replace(interjection, origin=origin), origin)

    def put(self, item: InboxItem) -> None:
        """Queue an admitted item (on the run's loop); a pause or an abort stops the run instead."""
        run, i = self.run, item.interjection
        if run.ended:
            self.undeliverable([item], "the run ended before the interjection arrived")
            return
        if i.action in _STOPS:
            stop = run.pause if i.action == "pause" else run.abort
            who = "a person" if item.origin.by_person else item.origin.watcher
            stop(f"{who}: {i.content}".strip())
            return
        if item.origin.by_person:
            self.guided = True
        self.items.append(item)

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
            by_person = item.origin.by_person
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
            log.warning("agent run %r: interjection %s undeliverable: %s", self.run.name, item.interjection.id, detail)
        self._publish(items, "undeliverable", detail)

    def _publish(self, items: list[InboxItem], outcome: DeliveryOutcome, detail: str) -> None:
        for item in items:
            i = item.interjection
            self.run.runtime.publish(
                DeliveryEvent(
                    session=self.run.name,
                    watcher=i.watcher,
                    interjection_id=i.id,
                    outcome=outcome,
                    detail=detail,
                    content=i.content,
                    origin=item.origin.render(),
                )
            )
