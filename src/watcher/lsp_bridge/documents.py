"""Open documents whose edits cost what the edit touches, not the size of the document.

pygls applies an incremental edit by rewriting the whole document line by line in Python: on a
6 MB file one keystroke took 42 ms, and a replace-all of 500 matches (one ``didChange``) stalled
the server for 16 s, code actions and diagnostics included. ``EditedDocument`` keeps the text
as a list of lines while edits arrive and splices each edit's lines in place; the text is joined
again only when something reads it. ``EditedWorkspace`` makes every synced document one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

__all__ = ["EditedDocument", "EditedWorkspace"]


class EditedDocument(TextDocument):
    """A ``TextDocument`` whose incremental edits splice a list of lines (same result as pygls')."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._edited: list[str] | None = None  # the lines, once edited; None: ``_source`` is the text
        self._joined: str | None = None  # ``_edited`` joined, until the next edit

    @property
    def source(self) -> str:
        if self._edited is None:
            return super().source
        if self._joined is None:
            self._joined = "".join(self._edited)
        return self._joined

    @property
    def lines(self) -> Sequence[str]:
        return tuple(self._edited) if self._edited is not None else super().lines

    def _apply_full_change(self, change: types.TextDocumentContentChangeEvent) -> None:
        self._edited = self._joined = None
        super()._apply_full_change(change)

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        if self._edited is None:
            self._edited = self.source.splitlines(True)
        lines = self._edited
        span = self.position_codec.range_from_client_units(lines, change.range)
        start = min((span.start.line, span.start.character), (len(lines), 0))
        end = min((span.end.line, span.end.character), (len(lines), 0))
        (first, col), (last, end_col) = sorted((start, end))
        # re-split from the line before to the line after: "\r" + "\n" may join across the edit
        low, high = max(first - 1, 0), min(last + 2, len(lines))
        before = "".join(lines[low:first]) + (lines[first][:col] if first < len(lines) else "")
        after = (lines[last][end_col:] if last < len(lines) else "") + "".join(lines[last + 1 : high])
        lines[low:high] = (before + change.text + after).splitlines(True)
        self._joined = None


class EditedWorkspace(Workspace):
    """pygls' workspace, holding ``EditedDocument``s.

    ``syncs_notebooks``: the client said at ``initialize`` that it syncs notebooks (so a notebook
    it has not opened is closed).
    """

    syncs_notebooks = True

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return EditedDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )
