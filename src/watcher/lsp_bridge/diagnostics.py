"""Findings as push diagnostics: where they go, what they say, and what was last published.

Each location of a finding becomes one diagnostic: on a file (a relative ``path`` is taken from
the project root of the journal; an absolute one as is) or on a notebook cell (see
``notebooks``). Lines are 1-based in the journal and 0-based in LSP; columns are counted in the
position encoding negotiated with the client. ``DiagnosticSet`` keeps the published set per URI,
because each ``publishDiagnostics`` replaces everything the client holds for that URI.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from urllib.parse import unquote

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace import Workspace

from watcher.core.interjection import Location
from watcher.core.logs import logger
from watcher.lsp_bridge.findings import Finding, FindingBook
from watcher.lsp_bridge.notebooks import cell_uris_for
from watcher.runtime.fates import DELIVERED, EDITED, FAILED, PENDING, REQUESTED, UNDELIVERABLE, FateStatus
from watcher.runtime.journal import journal_label

__all__ = ["SEVERITY", "DiagnosticSet", "Lines", "diagnostics_for", "location_uris", "message_for", "range_for"]

log = logger("watcher.lsp")

SEVERITY = {
    "critical": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "hint": types.DiagnosticSeverity.Information,
}

_STATUS_NOTE: dict[FateStatus, str] = {
    PENDING: "pending: inject or dismiss",
    REQUESTED: "injection requested",
    DELIVERED: "delivered to {session}",
    EDITED: "delivered to {session}, edited",
    UNDELIVERABLE: "not delivered: {detail}",
    FAILED: "delivery failed: {detail}",
}


MAX_MESSAGE_CHARS = 4000  # a diagnostic's text; 1,000 findings of 1 MB each were a 1 GB publish


def message_for(finding: Finding) -> str:
    """``watcher: content (status)``: what the watcher said and what became of it."""
    note = _STATUS_NOTE.get(finding.status, "").format(session=finding.session, detail=finding.detail or "unknown")
    content = finding.interjection.content
    if len(content) > MAX_MESSAGE_CHARS:  # an editor shows a few lines; watcher.history holds the whole text
        content = f"{content[:MAX_MESSAGE_CHARS]}… (cut: {len(content):,} characters in all)"
    text = f"{finding.watcher}: {content}" if finding.watcher else content
    return f"{text} ({note.rstrip(': ')})" if note else text


def location_uris(workspace: Workspace, book: FindingBook, finding: Finding, location: Location) -> list[str]:
    """The document URIs a location names (none while its cell is not known to the editor)."""
    if location.path is not None:
        path = Path(location.path).expanduser()
        if not path.is_absolute():
            path = book.root / path
        return [Path(os.path.normpath(path)).as_uri()]
    if location.cell_id is None:  # a cell named only by its execution count: no editor document
        return []
    return cell_uris_for(workspace, location.cell_id, book.source_of(finding, location.cell_id))


MAX_READ_BYTES = 20_000_000  # a file on disk read for its line lengths; past this, whole lines will do


def _readable(uri: str) -> bool:
    """Whether the file ``uri`` names may be read on the server's loop: a regular file, not too large.

    A location's path comes from the journal (an agent's tool call): a FIFO or ``/dev/stdin`` would
    block the server for ever, ``/dev/zero`` would fill its memory.
    """
    path = to_fs_path(uri)
    try:
        found = os.stat(path) if path else None
    except (OSError, ValueError):
        return False
    return found is not None and stat.S_ISREG(found.st_mode) and found.st_size <= MAX_READ_BYTES


class Lines:
    """The documents' lines, and the widths of the lines findings are on, each read or measured once for a
    whole refresh: a file read per finding took minutes for 2,000 findings on a 5 MB file, a width measured
    per finding as long for 1,000 findings on a 2 MB line."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str] | None] = {}
        self._widths: dict[tuple[str, int], tuple[int, int]] = {}

    def of(self, workspace: Workspace, uri: str) -> list[str] | None:
        """The document's lines (None: its text is unknown)."""
        if uri not in self._lines:
            self._lines[uri] = _read_lines(workspace, uri)
        return self._lines[uri]

    def width(self, workspace: Workspace, uri: str, lines: list[str], n: int) -> tuple[int, int]:
        """Line ``n``'s indent and length, in the client's units (UTF-16 unless it chose another)."""
        key = (uri, n)
        if key not in self._widths:
            codec, text = workspace.position_codec, lines[n]
            indent = codec.client_num_units(text[: len(text) - len(text.lstrip())])
            self._widths[key] = (indent, codec.client_num_units(text))
        return self._widths[key]


def _read_lines(workspace: Workspace, uri: str) -> list[str] | None:
    """The document's lines: the editor's copy when synced, else the file on disk, else None."""
    synced = workspace.text_documents
    document = synced.get(uri) or synced.get(unquote(uri))
    try:
        if document is None and uri.startswith("file:"):
            if not _readable(uri):
                return None
            document = workspace.get_text_document(uri)
        if document is not None:
            return [line.rstrip("\r\n") for line in document.lines]
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        log.debug("cannot read %s for line lengths: %s", uri, exc)
    return None


def range_for(workspace: Workspace, uri: str, location: Location, known: Lines | None = None) -> types.Range:
    """The lines of ``location``, from the first non-blank character to the end of the last line.

    ``known``: the lines read and measured so far in this refresh.
    """
    first, last = location.start_line - 1, location.last_line - 1
    known = known if known is not None else Lines()
    lines = known.of(workspace, uri)
    if lines is None or last >= len(lines):  # unknown text: whole lines, ending where the next begins
        return types.Range(types.Position(first, 0), types.Position(last + 1, 0))
    indent, _ = known.width(workspace, uri, lines, first)
    _, end = known.width(workspace, uri, lines, last)
    return types.Range(types.Position(first, indent), types.Position(last, end))


def diagnostics_for(
    workspace: Workspace, book: FindingBook, finding: Finding, known: Lines | None = None
) -> dict[str, list[types.Diagnostic]]:
    """The diagnostics of one finding, by URI (empty when it is not shown or cannot be placed).

    ``known``: the documents' lines read so far in this refresh (each document is read once).
    """
    out: dict[str, list[types.Diagnostic]] = {}
    if not finding.shown:
        return out
    data = {
        "interjection_id": finding.id,
        "session": finding.session,
        "watcher": finding.watcher,
        "journal": journal_label(finding.journal),
        "status": finding.status,
    }
    for location in finding.interjection.locations:
        for uri in location_uris(workspace, book, finding, location):
            diagnostic = types.Diagnostic(
                range=range_for(workspace, uri, location, known),
                message=message_for(finding),
                severity=SEVERITY.get(finding.interjection.severity, types.DiagnosticSeverity.Warning),
                source="watcher",
                code=finding.interjection.action,
                data=data,
            )
            out.setdefault(uri, []).append(diagnostic)
    return out


Key = tuple[str, str]  # (journal path, interjection id)


class DiagnosticSet:
    """The diagnostics last published, per URI and per finding."""

    def __init__(self) -> None:
        self.by_uri: dict[str, dict[Key, list[types.Diagnostic]]] = {}
        self.uris_of: dict[Key, set[str]] = {}

    def place(self, key: Key, placed: dict[str, list[types.Diagnostic]]) -> set[str]:
        """Replace the diagnostics of one finding; returns the URIs whose set changed."""
        dirty = self.remove(key)
        for uri, diagnostics in placed.items():
            self.by_uri.setdefault(uri, {})[key] = diagnostics
            dirty.add(uri)
        if placed:
            self.uris_of[key] = set(placed)
        return dirty

    def remove(self, key: Key) -> set[str]:
        """Forget one finding's diagnostics; returns the URIs it was on."""
        uris = self.uris_of.pop(key, set())
        for uri in uris:
            self.by_uri.get(uri, {}).pop(key, None)
        return set(uris)

    def params(self, uri: str) -> types.PublishDiagnosticsParams:
        """The full set for ``uri``, ready to publish (an empty list clears it)."""
        found = self.by_uri.get(uri, {})
        diagnostics = [d for group in found.values() for d in group]
        if not found:
            self.by_uri.pop(uri, None)
        return types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
