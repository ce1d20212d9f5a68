"""Keeping a local-scope install out of git: ``.claude/settings.local.json`` is this checkout's own.

Claude Code's local settings file must never be committed by accident, and neither must the
install record and the backup watcher keeps beside it. ``hooks install --scope local`` therefore
adds them to the repository's ``.git/info/exclude`` (local to the checkout, never committed), and
``uninstall`` takes exactly those lines out again, leaving the file as it was (or gone, when the
install created it).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

__all__ = ["keep_out_of_git", "let_back"]

_HEADER = "# watcher hooks, --scope local (watcher hooks uninstall removes these lines)\n"


def _git_folder(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / ".git").is_dir():
            return folder
    return None


def keep_out_of_git(files: list[Path]) -> dict[str, Any] | None:
    """Add ``files`` to the checkout's ``.git/info/exclude``; what was added (for ``let_back``), or None."""
    top = _git_folder(files[0].parent)
    if top is None:
        return None
    exclude = top / ".git" / "info" / "exclude"
    created = [str(p) for p in (exclude.parent, exclude) if not p.exists()]
    before = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    added = ("\n" if before and not before.endswith("\n") else "") + _HEADER
    added += "".join(f"/{f.relative_to(top).as_posix()}\n" for f in files)
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with exclude.open("a", encoding="utf-8") as out:
        out.write(added)
    return {"file": str(exclude), "added": added, "created": created}


def let_back(record: dict[str, Any] | None) -> None:
    """Take out the lines ``keep_out_of_git`` added, removing what it created when nothing else is left."""
    if not record:
        return
    exclude = Path(str(record.get("file")))
    added, created = str(record.get("added") or ""), [str(p) for p in record.get("created") or ()]
    with contextlib.suppress(OSError):
        text = exclude.read_text(encoding="utf-8")
        if added and added in text:
            at = text.rindex(added)
            text = text[:at] + text[at + len(added) :]
            if text or str(exclude) not in created:
                exclude.write_text(text, encoding="utf-8")
            else:
                exclude.unlink()
        if str(exclude.parent) in created:
            exclude.parent.rmdir()  # only when empty: OSError otherwise, and it stays
