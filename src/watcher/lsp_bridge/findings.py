"""What the language server knows about one journal: interjections and their fate.

``FindingBook`` folds journal rows (and the journal's ``commands``) into ``Finding`` records, one
per interjection, each with its current status. It knows nothing of LSP: the server asks it what
changed and turns findings into diagnostics and messages. Rows written by other processes are
untrusted input, so a row that does not have the expected shape is logged and skipped.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watcher.core.errors import MalformedEventError
from watcher.core.interjection import Interjection
from watcher.runtime.journal import Command, JournalRow

__all__ = ["Finding", "FindingBook", "Update"]

log = logging.getLogger("watcher.lsp")

#: statuses under which a finding is still shown as a diagnostic
SHOWN = frozenset({"pending", "queued", "requested", "delivered", "undeliverable", "failed"})


@dataclass(slots=True)
class Finding:
    """One interjection as the editor sees it: where it came from and what became of it.

    ``status``: ``pending`` (a manual watcher waits for a person), ``queued`` (autonomous, on its
    way), ``requested`` (this server asked the owner to inject it), ``delivered``,
    ``undeliverable``, ``failed``, or ``dismissed`` (no longer shown).
    """

    journal: Path
    root: Path
    session: str
    watcher: str
    interjection: Interjection
    status: str
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
        return self.status == "pending" and self.mode in ("", "manual")

    def to_json(self) -> dict[str, Any]:
        """The ``watcher/interjection`` notification body and the diagnostics' ``data``."""
        return {
            "interjection": self.interjection.to_dict(),
            "session": self.session,
            "watcher": self.watcher,
            "status": self.status,
            "index": self.index,
            "journal": str(self.journal),
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

    def __init__(self, journal: Path, root: Path) -> None:
        self.journal = journal
        self.root = root
        self.findings: dict[str, Finding] = {}
        self.cell_sources: dict[tuple[str, str], str] = {}
        self.index_sources: dict[tuple[str, int], str] = {}
        self.modes: dict[tuple[str, str], str] = {}
        self.cursor = 0
        self.command_cursor = 0
        self.awaiting: set[int] = set()  # ids of inject commands this server sent, not yet settled

    @property
    def commands_after(self) -> int:
        """Where to read ``commands`` from: re-read the ones whose outcome is still awaited."""
        return min(self.command_cursor, min(self.awaiting) - 1) if self.awaiting else self.command_cursor

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
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                log.warning("skipping journal row %d of %s (%s): %s", row.id, self.journal, row.kind, exc)
                continue
            if finding is None:
                continue
            if finding.interjection.locations:
                update.changed.append(finding)
            if row.kind == "interjection" and row.id > live_after:
                update.live.append(finding)
        return update

    def _apply(self, row: JournalRow) -> Finding | None:
        payload = row.payload
        if row.kind == "observation":
            obs = payload["observation"]
            if isinstance(obs, dict) and obs.get("kind") == "cell_executed":
                source = str(obs.get("source") or "")
                self.index_sources[(row.session, int(payload["index"]))] = source
                if obs.get("cell_id"):
                    self.cell_sources[(row.session, str(obs["cell_id"]))] = source
            return None
        if row.kind == "watcher":
            if payload.get("mode"):
                self.modes[(row.session, row.watcher)] = str(payload["mode"])
            return None
        if row.kind == "interjection":
            interjection = Interjection.from_dict(payload["interjection"])
            if not interjection.id:
                raise MalformedEventError(f"an interjection row of session {row.session!r} has no id")
            watcher = row.watcher or interjection.watcher
            finding = Finding(
                journal=self.journal,
                root=self.root,
                session=row.session,
                watcher=watcher,
                interjection=interjection,
                status=str(payload.get("status") or "queued"),
                index=int(payload.get("index", -1)),
                mode=self.modes.get((row.session, watcher), ""),
            )
            previous = self.findings.get(interjection.id)
            if previous is not None and previous.status not in ("pending", "queued"):
                finding.status, finding.detail = previous.status, previous.detail  # its fate came first
            self.findings[interjection.id] = finding
            return finding
        if row.kind == "delivery":
            known = self.findings.get(str(payload["interjection_id"]))
            if known is None or known.status == "dismissed":
                return None
            outcome = str(payload["outcome"])
            known.status = (
                outcome if outcome in ("queued", "delivered", "undeliverable", "failed", "dismissed") else "failed"
            )
            known.detail = str(payload.get("detail") or "")
            return known
        return None

    def apply_commands(self, commands: list[Command]) -> list[Finding]:
        """Dismissals recorded by any client (this one included) hide their findings for good."""
        changed: list[Finding] = []
        for command in commands:
            self.command_cursor = max(self.command_cursor, command.id)
            finding = self.findings.get(command.interjection_id)
            if finding is None:
                continue
            if command.kind == "dismiss" and command.status != "failed" and finding.status != "dismissed":
                finding.status = "dismissed"
                changed.append(finding)
            elif command.id in self.awaiting and command.status != "new":
                self.awaiting.discard(command.id)
                if command.status == "failed" and finding.status == "requested":
                    finding.status, finding.detail = "failed", command.detail
                    changed.append(finding)
        return changed
