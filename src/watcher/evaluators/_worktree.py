"""Reading the parent's files from its worktree, so an edit the session did not show is still numbered as its file reads."""

from __future__ import annotations

from pathlib import Path

from watcher.core.edits import Lookup

__all__ = ["MAX_FILE_BYTES", "worktree_lookup"]

MAX_FILE_BYTES = 1_000_000  # a larger file is not read: the edit is shown with relative line numbers


def worktree_lookup(root: Path) -> Lookup:
    """A lookup that reads a path (relative to ``root``, or absolute inside it) as UTF-8 text.

    Anything outside ``root``, missing, too large or not text is None: the prompt then says the
    line numbers are relative.
    """
    base = root.resolve()

    def read(path: str) -> str | None:
        try:
            target = (base / path).resolve()
            if not target.is_relative_to(base) or not target.is_file() or target.stat().st_size > MAX_FILE_BYTES:
                return None
            return target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            return None

    return read
