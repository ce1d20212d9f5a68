"""Monitor: the spawn's progress state, built from the observations of the CLI's stream (seed 002).

Files read and written (from the tool calls of every CLI's tool names), output lines, the last
tool, last activity, permission and other errors, cost, and the steps and tokens the CLI reported. ``snapshot()`` is the
``ProgressUpdate`` event; ``line()`` is one plain progress line for a terminal.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watcher.agents import Boundary
from watcher.core.observations import HarnessError, Observation, ToolCall, ToolResult
from watcher.spawn.events import ProgressUpdate

__all__ = ["ProgressState"]

_WRITES = {"Write", "Edit", "MultiEdit", "NotebookEdit", "write_file", "replace", "apply_patch"}
_READS = {"Read", "read_file", "read_many_files", "NotebookRead"}
_PATH_KEYS = ("file_path", "path", "absolute_path", "notebook_path")


@dataclass(slots=True)
class ProgressState:
    """What the spawned agent has done so far."""

    spawn_id: str
    worktree: Path
    phase: str = "evaluate"
    files_read: dict[str, None] = field(default_factory=dict)
    files_written: dict[str, None] = field(default_factory=dict)
    output_lines: int = 0
    last_tool: str = ""
    tool_errors: int = 0
    other_errors: list[str] = field(default_factory=list)
    permission_errors: list[str] = field(default_factory=list)
    interjections: int = 0
    cost_usd: float = 0.0
    steps: int = 0  # model responses (Claude Code) or headless runs (Gemini CLI, Codex) that reported usage
    input_tokens: int = 0
    output_tokens: int = 0
    start: float = field(default_factory=time.monotonic)
    last_activity: float = field(default_factory=time.monotonic)

    def update(self, obs: Observation) -> bool:
        """Take one observation; True when the files changed (worth a progress event)."""
        self.last_activity = time.monotonic()
        if isinstance(obs, ToolCall):
            self.last_tool = obs.name
            paths = self._paths(obs.input)
            target = self.files_written if obs.name in _WRITES else self.files_read if obs.name in _READS else None
            if target is not None and any(p not in target for p in paths):
                target.update(dict.fromkeys(paths))
                return True
        elif isinstance(obs, ToolResult) and obs.is_error:
            self.tool_errors += 1
        elif isinstance(obs, HarnessError):
            self.other_errors.append(obs.text[:200])
        return False

    def count(self, usage: tuple[int, int, int] | None) -> None:
        """Take the (steps, input, output tokens) a record added, as the adapter read them."""
        if usage is not None:
            self.steps += usage[0]
            self.input_tokens += usage[1]
            self.output_tokens += usage[2]

    def boundary(self) -> Boundary:
        """Where the run stands at an iteration boundary: steps and tokens so far."""
        return Boundary(self.steps, self.input_tokens, self.output_tokens)

    def _paths(self, data: Mapping[str, Any]) -> list[str]:
        found = [str(data[key]) for key in _PATH_KEYS if isinstance(data.get(key), str)]
        for change in data.get("changes") or []:
            if isinstance(change, Mapping) and isinstance(change.get("path"), str):
                found.append(change["path"])
        return [self._relative(p) for p in found]

    def _relative(self, path: str) -> str:
        try:
            return str(Path(path).resolve().relative_to(self.worktree.resolve()))
        except ValueError:
            return path

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.start

    def snapshot(self, session: str) -> ProgressUpdate:
        return ProgressUpdate(
            session=session,
            spawn_id=self.spawn_id,
            elapsed_s=round(self.elapsed_s, 3),
            files_read=tuple(self.files_read),
            files_written=tuple(self.files_written),
            output_lines=self.output_lines,
            last_tool=self.last_tool,
            cost_usd=self.cost_usd,
        )

    def line(self) -> str:
        """``[12.3s] execute: 2 written, 1 read, 40 lines, last Bash, 1 interjection``."""
        parts = [
            f"{len(self.files_written)} written",
            f"{len(self.files_read)} read",
            f"{self.output_lines} lines",
        ]
        if self.last_tool:
            parts.append(f"last {self.last_tool}")
        if self.interjections:
            parts.append(f"{self.interjections} interjection{'s' if self.interjections != 1 else ''}")
        if self.permission_errors:
            parts.append(f"{len(self.permission_errors)} denied")
        return f"[{self.elapsed_s:6.1f}s] {self.phase}: " + ", ".join(parts)
