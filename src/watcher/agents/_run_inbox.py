"""The inbox of an ``AgentRun``: interjections waiting for the next boundary, and their fate.

The run's loop admits an interjection here once it has checked the run's own rules (ended, the
cap on corrective turns, a ``pause``/``abort`` that stops the run instead); the inbox only checks
that it has something to say. At a boundary the loop takes the inbox: each interjection is
formatted by ``_delivery`` (a watcher's in its authority's format, a person's as
``Supervisor:Guidance:``, as its ``Origin`` says), observed as a ``UserMessage`` and shown to the
sinks. The run's ``Session`` base settles each: ``delivered`` when the request that carries it is
sent, ``undeliverable`` when the run ends first (still queued, or taken but never sent).
"""

from __future__ import annotations

from dataclasses import replace

from watcher.agents._delivery import format_injection
from watcher.agents._sinks import OutputSinks, RunEvent
from watcher.core.errors import EmptyInterjectionError
from watcher.core.interjection import Interjection, Origin
from watcher.core.observations import UserMessage
from watcher.runtime.hub import Runtime
from watcher.runtime.session import EndState, Parcel, Session

__all__ = ["STOPS", "Inbox"]

STOPS = {"pause": EndState.PAUSED, "abort": EndState.ABORTED}  # actions that stop the run instead of being delivered


class Inbox:
    """What one run's next boundary delivers, kept in the run's ``Session`` inbox; it knows nothing of turns."""

    def __init__(self, session: Session, runtime: Runtime, sinks: OutputSinks) -> None:
        self.session = session
        self.runtime = runtime
        self.sinks = sinks
        self.guided = False  # a person has given guidance: the run is supervised from now on

    def admit(self, interjection: Interjection, origin: Origin) -> Parcel:
        """Check that ``interjection`` has something to say (any thread); stamps its origin."""
        if not interjection.content.strip() and interjection.action not in STOPS:
            raise EmptyInterjectionError(
                f"agent run {self.session.name!r}: interjection {interjection.id!r} has no content; "
                "give it the text to say"
            )
        return Parcel.of(replace(interjection, origin=origin), origin)

    def put(self, parcel: Parcel) -> None:
        """Queue an admitted parcel (on the run's loop)."""
        if parcel.origin.by_person:
            self.guided = True
        self.session.inbox.append(parcel)

    def urgent(self) -> bool:
        """True when a queued interjection should not wait for the watchers to settle."""
        return any(parcel.interjection.urgent for parcel in self.session.inbox)

    def take(self) -> list[tuple[Parcel, str]]:
        """Empty the inbox: each parcel with the text it is delivered as, observed and shown."""
        name = self.session.name
        out = []
        for parcel in self.session.take():
            i = parcel.interjection
            by_person = parcel.origin.by_person
            watcher = self.runtime.watchers.get((name, i.watcher))
            authority = watcher.spec.authority if watcher is not None else "supervisor"
            text = format_injection(i, authority=authority, by_person=by_person)
            if by_person:
                self.guided = True
            observed = UserMessage(text=text, extra={"interjection_id": i.id, "watcher": i.watcher})
            self.runtime.observe(name, observed)
            data = {"id": i.id, "watcher": i.watcher, "urgent": i.urgent}
            self.sinks.emit(RunEvent("interjection", text, data, name))
            out.append((parcel, text))
        return out
