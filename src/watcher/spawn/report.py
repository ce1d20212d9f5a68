"""Report: what a spawn did, as the seed's markdown summary and as JSON with the same fields.

The JSON adds every interjection (who, what, how it reached the agent) and every recovery.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from watcher.runtime.session import EndState
from watcher.spawn.integrate import FileChange, PullRequest

__all__ = ["LISTED_FILES", "SpawnResult"]

LISTED_FILES = 100  # changed files the markdown report lists one by one


@dataclass(slots=True)
class SpawnResult:
    """The outcome of one spawn."""

    id: str
    task: str
    agent: str
    status: EndState  # completed, failed, timeout, permission_denied, crashed, paused, aborted, conflict, ...
    duration_s: float
    branch: str
    base: str
    worktree: str
    logs: str
    pr: PullRequest | None = None
    files: list[FileChange] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    summary: str = ""
    detail: str = ""
    cost_usd: float = 0.0
    cli_session: str = ""
    interjections: list[dict[str, Any]] = field(default_factory=list)
    recoveries: list[dict[str, Any]] = field(default_factory=list)
    permission_errors: list[dict[str, Any]] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)  # conflicting files a repair run resolved
    runs: int = 0
    notes: list[str] = field(default_factory=list)  # what went wrong beside the run: a submodule left empty, ...
    plan: dict[str, Any] = field(default_factory=dict)  # the manifest used, where it came from, any note

    @property
    def ok(self) -> bool:
        return self.status == EndState.COMPLETED

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["pr"] = asdict(self.pr) if self.pr else None
        return data

    def markdown(self, *, proposal: bool = False) -> str:
        """The seed's report: status and duration, PR, changes, the agent's summary, the logs.

        ``proposal``: the pull request's own description, written before the spawn has ended
        (no duration yet, and the branch is the one proposed).
        """
        minutes, seconds = divmod(round(self.duration_s), 60)
        took = f"{minutes}m {seconds}s, " if minutes else f"{self.duration_s:.1f}s, "
        title = self.task.strip().splitlines()[0][:60] if self.task.strip() else "spawn"
        lines = [f"## Spawn {'Complete' if self.ok else 'Ended'}: {title} (spawn-id: {self.id})", ""]
        status = self.status.replace("_", " ").capitalize()
        lines.append(f"**Status:** {status} ({'' if proposal else took}{self.agent})")
        if self.pr:
            lines.append(f"**PR:** #{self.pr.number} - {self.pr.url}")
        elif proposal:
            lines.append(f"**Branch:** `{self.branch}` into `{self.base}`")
        else:
            lines.append(f"**Branch:** `{self.branch}` (no pull request)")
        if self.detail:
            lines.append(f"**Detail:** {self.detail}")
        lines += [f"**Note:** {note}" for note in self.notes]
        lines += ["", "### Changes"]
        listed, rest = self.files[:LISTED_FILES], self.files[LISTED_FILES:]
        lines += [f"- `{f.path}` (+{f.added}, -{f.removed}) - {f.summary or 'changed'}" for f in listed] or ["- none"]
        if rest:  # the JSON has them all; a terminal or a pull request holds a readable list
            lines.append(
                f"- ... and {len(rest)} more file(s) (+{sum(f.added for f in rest)}, -{sum(f.removed for f in rest)}): "
                f"`git diff --stat {self.base}...{self.branch}` lists them all"
            )
        if self.conflicts:
            lines += ["", "### Conflicts with the base", *[f"- `{path}`" for path in self.conflicts]]
        if self.repaired:
            lines += ["", "### Conflicts resolved by a repair run", *[f"- `{path}`" for path in self.repaired]]
        if self.interjections or self.recoveries:
            lines += ["", "### Supervision"]
            lines += [
                f"- {i['watcher']} ({'urgent' if i['urgent'] else 'queued'}, {i['via']}): {self._said(i['content'])}"
                for i in self.interjections
            ]
            lines += [f"- recovery ({r['strategy']}): {r['fix']} - {r['outcome']}" for r in self.recoveries]
        lines += ["", "### Summary", self.summary.strip() or "(the agent gave no summary)"]
        lines += ["", "### Logs", f"Debug logs: `{self._relative(self.logs)}/`"]
        return "\n".join(lines) + "\n"

    def _relative(self, path: str) -> str:
        """``path`` from the repository's root (the logs live at ``.watcher/spawns/ID`` in it)."""
        logs = Path(self.logs)
        root = logs.parents[2] if len(logs.parents) > 2 and logs.parent.name == "spawns" else None
        try:
            return str(Path(path).relative_to(root)) if root else path
        except ValueError:
            return path

    def _said(self, content: str, limit: int = 400) -> str:
        """An interjection for the report: on one line, worktree paths made relative, cut at a word."""
        text = " ".join(content.replace(self.worktree.rstrip("/") + "/", "").split())
        if len(text) <= limit:
            return text
        return text[:limit].rsplit(" ", 1)[0] + " …"
