"""What a shell command changed in the worktree, as Write observations the security role can read.

Codex writes files through shell commands (heredocs, ``apply_patch``), so its stream shows a
command, never the code. After each command the probe asks git which files changed and reports
each new content once as a ``Write`` tool call (marked ``synthesized``), so the watchers judge
the code itself. Files over 256 KiB and binary files are skipped.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from watcher.core.observations import ToolCall
from watcher.spawn import _gitproc

__all__ = ["WORKTREE_CHANGE", "WorktreeProbe"]

WORKTREE_CHANGE = "worktree change"  # the ``synthesized`` mark of a Write the probe reports

_MAX_BYTES = 256 * 1024


class WorktreeProbe:
    """Reports each changed file's content once per distinct content."""

    def __init__(self, worktree: Path) -> None:
        self.worktree = worktree
        self._seen: dict[str, str] = {}

    def changes(self) -> list[ToolCall]:
        done = subprocess.run(
            ["git", "-C", str(self.worktree), "status", "--porcelain", "-uall", "-z"],
            capture_output=True,
            timeout=30,
            env=_gitproc.environ(),
        )
        out = []
        for entry in done.stdout.decode("utf-8", "replace").split("\0"):
            if len(entry) < 4 or entry[:2].strip() == "D":
                continue
            path = entry[3:]
            file = self.worktree / path
            try:
                if not file.is_file() or file.stat().st_size > _MAX_BYTES:
                    continue
                data = file.read_bytes()
            except OSError:
                continue
            digest = hashlib.sha256(data).hexdigest()
            if b"\0" in data or self._seen.get(path) == digest:
                continue
            self._seen[path] = digest
            text = data.decode("utf-8", "replace")
            out.append(
                ToolCall(
                    id=f"probe-{digest[:12]}",
                    name="Write",
                    input={"file_path": path, "content": text},
                    extra={"synthesized": WORKTREE_CHANGE},
                )
            )
        return out
