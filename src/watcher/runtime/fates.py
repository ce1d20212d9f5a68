"""The fate of each interjection and of each person's command, folded: the one projection every display reads.

An interjection moves through these statuses (``FateStatus``)::

    proposed ──► pending ────────────► queued ──► delivered | edited | undeliverable | failed
        │           │  (a person accepts)    ▲
        │           └──► requested ──────────┘ (its owner applied a person's command)
        │                    └──► failed (its owner could not)          any ──► dismissed
        └──► capped (a cap held it back: never sent)

``proposed``: a watcher's evaluation said it (``EvaluationEvent``); ``pending``: a manual
watcher holds it for a person; ``requested``: a person asked its owner to deliver it (a command
in the journal) and the owner has not answered yet; ``queued``: on its way, waiting for the
parent's next breakpoint; ``delivered``: it reached the parent (``edited`` when a person changed
the words first); ``undeliverable``: the parent ended first; ``failed``: the parent refused it,
or the owner could not apply the person's request; ``dismissed``: a person dropped it. A person's
own words (no evaluation) enter at their first delivery event.

A person's command (``Command``: inject, accept, edit, dismiss, or a fleet task's nudge, pause,
resume, abort) moves through ``requested ──► applied | failed`` (``CommandState``): requested
while the journal row is new or claimed, then what its owner marked. ``Fates.command`` folds a
command row: it records the command's own fate and, for an interjection's command, the request
or the dismissal it makes of that interjection.

The engine's counters, the notebook panel, the language server's findings, the hooks' resume and
status, the fleet's command answers, ``history()`` and the demos all fold through ``Fates``, so
they cannot disagree. The status words are declared here once (the constants below); everything
else compares against the constants, never against the words.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Final, Literal, TypeAlias, get_args

from watcher.core.interjection import Interjection, Origin
from watcher.runtime._coordination import Command
from watcher.runtime.events import DeliveryEvent, EvaluationEvent, Event, InterjectionEvent

__all__ = [
    "APPLIED",
    "CAPPED",
    "COMMAND_STATES",
    "DELIVERED",
    "DISMISSED",
    "EDITED",
    "FAILED",
    "FATE_STATUSES",
    "NEW",
    "PENDING",
    "PROPOSED",
    "QUEUED",
    "REQUESTED",
    "UNDELIVERABLE",
    "CommandFate",
    "CommandState",
    "Fate",
    "FateStatus",
    "Fates",
    "answer",
]

PROPOSED: Final = "proposed"
PENDING: Final = "pending"
REQUESTED: Final = "requested"
QUEUED: Final = "queued"
DELIVERED: Final = "delivered"
EDITED: Final = "edited"
DISMISSED: Final = "dismissed"
CAPPED: Final = "capped"
UNDELIVERABLE: Final = "undeliverable"
FAILED: Final = "failed"  # an interjection the parent refused, or a command its owner could not apply
APPLIED: Final = "applied"
NEW: Final = "new"  # a command row nobody has taken yet (the journal's ``commands.status``)

FateStatus: TypeAlias = Literal[
    "proposed",
    "pending",
    "requested",
    "queued",
    "delivered",
    "dismissed",
    "edited",
    "capped",
    "undeliverable",
    "failed",
]
FATE_STATUSES: tuple[FateStatus, ...] = get_args(FateStatus)
CommandState: TypeAlias = Literal["requested", "applied", "failed"]
COMMAND_STATES: tuple[CommandState, ...] = get_args(CommandState)

#: statuses that later events (other than a dismissal) no longer change
SETTLED: frozenset[FateStatus] = frozenset({DELIVERED, EDITED, CAPPED, UNDELIVERABLE, FAILED, DISMISSED})
#: statuses an interjection's announcement may still set (it came after its evaluation, or late)
UNANNOUNCED: frozenset[FateStatus] = frozenset({PROPOSED, PENDING, QUEUED})
#: command kinds that ask an interjection's owner to deliver it
REQUESTS = frozenset({"inject", "accept", "edit"})


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
        return self.status != CAPPED and not self.origin.by_person


@dataclass(frozen=True, slots=True)
class CommandFate:
    """One person's command and what became of it: ``requested`` until its owner applied it or could not."""

    id: int
    kind: str
    session: str
    interjection_id: str
    state: CommandState
    detail: str = ""

    @property
    def answered(self) -> bool:
        """True once the owner marked it applied or failed."""
        return self.state != REQUESTED


def answer(commands: Iterable[Command], command_id: int) -> CommandFate | None:
    """Command ``command_id``'s fate once its owner answered (applied or failed), folding ``commands``; else None."""
    fates = Fates()
    for command in commands:
        fates.command(command)
    found = fates.command_fate(command_id)
    return found if found is not None and found.answered else None


def command_state(command: Command) -> CommandState:
    """A command row's fate: what its owner marked, else ``requested`` (new, or claimed and not applied yet)."""
    if command.status == APPLIED:
        return APPLIED
    if command.status == FAILED:
        return FAILED
    return REQUESTED


class Fates:
    """Folds events, in the order they were published, into one ``Fate`` per interjection.

    Command rows fold in through ``command``: readers that follow ``commands`` (the language
    server, the fleet's dashboard and CLI) see a person's request and its answer here too.
    """

    def __init__(self) -> None:
        self._fates: dict[str, Fate] = {}
        self._commands: dict[int, CommandFate] = {}

    def apply(self, event: Event) -> Fate | None:
        """Fold one event in; returns the fate it changed (None when it changed none)."""
        if isinstance(event, EvaluationEvent):
            return self._evaluation(event)
        if isinstance(event, InterjectionEvent):
            return self._announced(event)
        if isinstance(event, DeliveryEvent):
            return self._delivery(event)
        return None

    def command(self, command: Command) -> Fate | None:
        """Fold one command row in (again, each time it is read); returns the interjection fate it changed.

        A request (inject, accept, edit) still open makes a pending interjection ``requested``
        (one already on its way stays so: a row read again, or after the owner's delivery, never
        sets it back); its failure makes a requested one ``failed`` with the owner's reason; its
        application changes nothing here (the owner's delivery event says what happened). A
        dismissal that did not fail makes the interjection ``dismissed`` at once, whoever reads it.
        """
        state = command_state(command)
        self._commands[command.id] = CommandFate(
            command.id, command.kind, command.session, command.interjection_id, state, command.detail
        )
        known = self._fates.get(command.interjection_id) if command.interjection_id else None
        if known is None:
            return None
        if command.kind == "dismiss":
            if state == FAILED or known.status == DISMISSED:
                return None
            return self._set(replace(known, status=DISMISSED, detail=command.detail, ts=command.ts))
        if command.kind not in REQUESTS:
            return None
        if state == REQUESTED and known.status == PENDING:
            return self._set(replace(known, status=REQUESTED, detail="", ts=command.ts))
        if state == FAILED and known.status == REQUESTED:
            return self._set(replace(known, status=FAILED, detail=command.detail, ts=command.ts))
        return None

    def _evaluation(self, event: EvaluationEvent) -> Fate | None:
        said = event.interjection
        if said is None or not said.id or said.id in self._fates:
            return None
        status: FateStatus = CAPPED if event.capped else PROPOSED
        detail = event.capped or ""
        return self._set(Fate(event.session, event.watcher, said, status, event.index, detail, event.ts))

    def _announced(self, event: InterjectionEvent) -> Fate | None:
        said = event.interjection
        known = self._fates.get(said.id)
        if known is not None and known.status not in UNANNOUNCED:
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
            known = Fate(event.session, event.watcher, said, QUEUED, ts=event.ts)
        elif known.status == DISMISSED or (known.status in SETTLED and event.outcome != DISMISSED):
            return None
        said = known.interjection
        changed = event.content is not None and event.content != said.content
        if changed and event.content is not None:
            said = replace(said, content=event.content)
        edited = known.edited or changed
        status: FateStatus = EDITED if event.outcome == DELIVERED and edited else event.outcome
        return self._set(
            replace(known, interjection=said, status=status, detail=event.detail, edited=edited, ts=event.ts)
        )

    def _set(self, fate: Fate) -> Fate:
        self._fates[fate.id] = fate
        return fate

    def get(self, interjection_id: str) -> Fate | None:
        """The fate of ``interjection_id``, if an event named it."""
        return self._fates.get(interjection_id)

    def command_fate(self, command_id: int) -> CommandFate | None:
        """What became of command ``command_id``, if its row was folded in."""
        return self._commands.get(command_id)

    def open_requests(self) -> list[int]:
        """The ids of requests still open that changed an interjection (a reader reads them again until answered)."""
        return [
            c.id
            for c in self._commands.values()
            if c.state == REQUESTED
            and c.kind in REQUESTS
            and (f := self._fates.get(c.interjection_id)) is not None
            and f.status == REQUESTED
        ]

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
