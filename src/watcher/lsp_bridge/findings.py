"""What the language server knows about one journal: interjections and their fate.

``FindingBook`` reads journal rows as typed events, folds them through ``Fates`` (the runtime's
one projection of an interjection's fate) and keeps a ``Finding`` per interjection a watcher said,
with its current status. The journal's ``commands`` fold in through the same ``Fates``: a
person's request shows as ``requested`` until its owner answers, a dismissal hides the finding.
It knows nothing of LSP: the server asks it what changed and turns findings into diagnostics and
messages. Rows written by other processes are
untrusted input, so a row that does not have the expected shape is logged and skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from watcher.core.errors import MalformedEventError
from watcher.core.interjection import Interjection, InterjectionDict
from watcher.core.logs import logger
from watcher.core.observations import CellExecuted
from watcher.runtime.events import InterjectionEvent, ObservationEvent, WatcherEvent
from watcher.runtime.fates import (
    CAPPED,
    DELIVERED,
    DISMISSED,
    EDITED,
    FAILED,
    PENDING,
    PROPOSED,
    QUEUED,
    REQUESTED,
    UNDELIVERABLE,
    Fate,
    Fates,
    FateStatus,
)
from watcher.runtime.journal import Command, JournalRow, journal_label

__all__ = ["Finding", "FindingBook", "FindingJson", "Update"]

log = logger("watcher.lsp")

#: statuses under which a finding is still shown as a diagnostic
SHOWN: frozenset[FateStatus] = frozenset({PENDING, QUEUED, REQUESTED, DELIVERED, EDITED, UNDELIVERABLE, FAILED})


class FindingJson(TypedDict):
    """The ``watcher/interjection`` notification body and the diagnostics' ``data``."""

    interjection: InterjectionDict
    session: str
    watcher: str
    status: FateStatus
    index: int
    journal: str


@dataclass(slots=True)
class Finding:
    """One interjection as the editor sees it: where it came from and what became of it.

    ``status``: the interjection's fate (``watcher.runtime.fates``): pending, requested (a
    person asked the owner to deliver it), queued, delivered, edited, undeliverable, failed, or
    dismissed (no longer shown).
    """

    journal: Path | str
    root: Path
    session: str
    watcher: str
    interjection: Interjection
    status: FateStatus
    index: int = -1
    detail: str = ""
    mode: str = ""

    @property
    def id(self) -> str:
        """The interjection id (unique within a journal)."""
        return self.interjection.id

    @property
    def shown(self) -> bool:
        """True while the finding should appear in the editor."""
        return self.status in SHOWN

    @property
    def injectable(self) -> bool:
        """A pending interjection of a manual watcher: a person may inject it into the session."""
        return self.status == PENDING and self.mode in ("", "manual")

    def to_json(self) -> FindingJson:
        """The ``watcher/interjection`` notification body and the diagnostics' ``data``."""
        return {
            "interjection": self.interjection.to_dict(),
            "session": self.session,
            "watcher": self.watcher,
            "status": self.status,
            "index": self.index,
            "journal": journal_label(self.journal),
        }


@dataclass(slots=True)
class Update:
    """What one batch of rows changed: located findings to (re)publish, and live interjections.

    ``live`` holds interjections committed after the server started following (history is not
    announced again); those without a location are shown as messages.
    """

    changed: list[Finding] = field(default_factory=list)
    live: list[Finding] = field(default_factory=list)


class FindingBook:
    """Findings, observed cell sources and watcher modes of one journal."""

    def __init__(self, journal: Path | str, root: Path) -> None:
        self.journal = journal
        self.root = root
        self.findings: dict[str, Finding] = {}
        self.fates = Fates()
        self.cell_sources: dict[tuple[str, str], str] = {}
        self.index_sources: dict[tuple[str, int], str] = {}
        self.modes: dict[tuple[str, str], str] = {}
        self.watchers: dict[tuple[str, str], str] = {}  # (session, watcher) -> its last status
        self.cursor = 0
        self.command_cursor = 0  # the position (commit order) new commands were read up to

    @property
    def awaited(self) -> set[int]:
        """Ids of the requests whose answer is still awaited: read again by id until each is answered."""
        return set(self.fates.open_requests())

    def source_of(self, finding: Finding, cell_id: str) -> str | None:
        """The source of the cell an interjection points at, as the kernel observed it."""
        found = self.cell_sources.get((finding.session, cell_id))
        return found if found is not None else self.index_sources.get((finding.session, finding.index))

    def apply_rows(self, rows: list[JournalRow], *, live_after: int) -> Update:
        """Fold events into the book; interjections with id > ``live_after`` count as live news."""
        update = Update()
        for row in rows:
            self.cursor = max(self.cursor, row.id)
            try:
                finding = self._apply(row)
            except MalformedEventError as exc:
                log.warning("skipping journal row %d of %s (%s): %s", row.id, self.journal, row.kind, exc)
                continue
            if finding is None:
                continue
            if finding.interjection.locations:
                update.changed.append(finding)
            if row.kind == InterjectionEvent.kind and row.id > live_after:
                update.live.append(finding)
        return update

    def _apply(self, row: JournalRow) -> Finding | None:
        event = row.event()
        if isinstance(event, ObservationEvent):
            obs = event.observation
            if isinstance(obs, CellExecuted):
                self.index_sources[(row.session, event.index)] = obs.source
                if obs.cell_id:
                    self.cell_sources[(row.session, obs.cell_id)] = obs.source
            return None
        if isinstance(event, WatcherEvent):
            self.watchers[(row.session, row.watcher)] = event.status
            if event.mode:
                self.modes[(row.session, row.watcher)] = event.mode
            return None
        if isinstance(event, InterjectionEvent) and not event.interjection.id:
            raise MalformedEventError(f"an interjection row of session {row.session!r} has no id")
        return self._show(self.fates.apply(event))

    def _show(self, fate: Fate | None) -> Finding | None:
        """The finding of a changed fate, created or brought up to date (None: nothing to show)."""
        if fate is None or fate.status in (PROPOSED, CAPPED) or fate.origin.by_person:
            return None  # not said to the parent (yet), or a person's own words: nothing to show
        known = self.findings.get(fate.id)
        if known is None:
            known = Finding(
                journal=self.journal,
                root=self.root,
                session=fate.session,
                watcher=fate.watcher,
                interjection=fate.interjection,
                status=fate.status,
                index=fate.index,
                mode=self.modes.get((fate.session, fate.watcher), ""),
            )
            self.findings[fate.id] = known
        elif known.status == DISMISSED:
            return None  # dismissed here or by another client: hidden for good
        known.status, known.detail = fate.status, fate.detail
        return known

    def apply_commands(self, commands: list[Command]) -> list[Finding]:
        """Fold commands through the fates — read from the journal (any client's: requests, their answers,
        dismissals) or this server's own as it wrote them; the findings they changed."""
        changed = [self._show(self.fates.command(command)) for command in commands]
        return [finding for finding in changed if finding is not None]
