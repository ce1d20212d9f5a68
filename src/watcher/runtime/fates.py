"""The fate of each interjection, folded from events: the one projection every display reads.

An interjection moves through these statuses (``FateStatus``)::

    proposed ──► pending ──► queued ──► delivered | edited | undeliverable | failed
        │           │          ▲
        │           └──────────┘ (a person accepts)         any ──► dismissed
        └──► capped (a cap held it back: never sent)

``proposed``: a watcher's evaluation said it (``EvaluationEvent``); ``pending``: a manual
watcher holds it for a person; ``queued``: on its way, waiting for the parent's next breakpoint;
``delivered``: it reached the parent (``edited`` when a person changed the words first);
``undeliverable``: the parent ended first; ``failed``: the parent refused it; ``dismissed``: a
person dropped it. A person's own words (no evaluation) enter at their first delivery event.

The engine's counters, the notebook panel, the language server's findings, ``history()`` and
the demos all fold the same events through ``Fates``, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias, get_args

from watcher.core.interjection import Interjection, Origin
from watcher.runtime.events import DeliveryEvent, EvaluationEvent, Event, InterjectionEvent

__all__ = ["FATE_STATUSES", "Fate", "FateStatus", "Fates"]

FateStatus: TypeAlias = Literal[
    "proposed", "pending", "queued", "delivered", "dismissed", "edited", "capped", "undeliverable", "failed"
]
FATE_STATUSES: tuple[FateStatus, ...] = get_args(FateStatus)

#: statuses that later events (other than a dismissal) no longer change
SETTLED: frozenset[FateStatus] = frozenset({"delivered", "edited", "capped", "undeliverable", "failed", "dismissed"})


@dataclass(frozen=True, slots=True)
class Fate:
    """One interjection and what has become of it so far."""

    session: str
    watcher: str
    interjection: Interjection
    status: FateStatus
    index: int = -1
    detail: str = ""
    ts: float = 0.0
    edited: bool = False  # a person changed the words before it was handed on

    @property
    def id(self) -> str:
        """The interjection id (unique within a journal)."""
        return self.interjection.id

    @property
    def origin(self) -> Origin:
        """Who spoke: the watcher, or a person through a panel, an editor, a magic or Python."""
        return self.interjection.speaker

    @property
    def counted(self) -> bool:
        """True for a watcher's interjection that was not capped: what "N interjections" counts."""
        return self.status != "capped" and not self.origin.by_person


class Fates:
    """Folds events, in the order they were published, into one ``Fate`` per interjection."""

    def __init__(self) -> None:
        self._fates: dict[str, Fate] = {}

    def apply(self, event: Event) -> Fate | None:
        """Fold one event in; returns the fate it changed (None when it changed none)."""
        if isinstance(event, EvaluationEvent):
            return self._evaluation(event)
        if isinstance(event, InterjectionEvent):
            return self._announced(event)
        if isinstance(event, DeliveryEvent):
            return self._delivery(event)
        return None

    def _evaluation(self, event: EvaluationEvent) -> Fate | None:
        said = event.interjection
        if said is None or not said.id or said.id in self._fates:
            return None
        status: FateStatus = "capped" if event.capped else "proposed"
        detail = event.capped or ""
        return self._set(Fate(event.session, event.watcher, said, status, event.index, detail, event.ts))

    def _announced(self, event: InterjectionEvent) -> Fate | None:
        said = event.interjection
        known = self._fates.get(said.id)
        if known is not None and known.status not in ("proposed", "pending", "queued"):
            return None  # its fate came first (rows read out of order): keep it
        status: FateStatus = event.status
        watcher = event.watcher or said.watcher
        return self._set(Fate(event.session, watcher, said, status, event.index, "", event.ts))

    def _delivery(self, event: DeliveryEvent) -> Fate | None:
        known = self._fates.get(event.interjection_id)
        if known is None:  # a person's words, or an interjection whose announcement was not read
            origin = Origin.parse(event.origin)
            said = Interjection(
                content=event.content or "", watcher=event.watcher, id=event.interjection_id, origin=origin
            )
            known = Fate(event.session, event.watcher, said, "queued", ts=event.ts)
        elif known.status == "dismissed" or (known.status in SETTLED and event.outcome != "dismissed"):
            return None
        said = known.interjection
        changed = event.content is not None and event.content != said.content
        if changed and event.content is not None:
            said = replace(said, content=event.content)
        edited = known.edited or changed
        status: FateStatus = "edited" if event.outcome == "delivered" and edited else event.outcome
        return self._set(
            replace(known, interjection=said, status=status, detail=event.detail, edited=edited, ts=event.ts)
        )

    def _set(self, fate: Fate) -> Fate:
        self._fates[fate.id] = fate
        return fate

    def get(self, interjection_id: str) -> Fate | None:
        """The fate of ``interjection_id``, if an event named it."""
        return self._fates.get(interjection_id)

    def __iter__(self) -> Iterator[Fate]:
        return iter(list(self._fates.values()))

    def __len__(self) -> int:
        return len(self._fates)

    def count(self, *, watcher: str | None = None, session: str | None = None) -> int:
        """How many interjections watchers made (capped ones and a person's words not counted)."""
        return sum(
            1
            for f in self._fates.values()
            if f.counted and (watcher is None or f.watcher == watcher) and (session is None or f.session == session)
        )

    def with_status(self, *statuses: FateStatus, watcher: str | None = None) -> list[Fate]:
        """The fates in one of ``statuses`` (oldest first), of one watcher if given."""
        return [f for f in self._fates.values() if f.status in statuses and (watcher is None or f.watcher == watcher)]
