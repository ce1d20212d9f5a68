"""What one spawn is asked to do: the task, the agent, the watchers, recovery and integration options."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from watcher.core.spec import WatcherSpec
from watcher.runtime.journal import Journal
from watcher.spawn.manifest import SandboxManifest
from watcher.spawn.monitor import ProgressState

__all__ = ["SpawnConfig"]


@dataclass(slots=True)
class SpawnConfig:
    """Everything one spawn needs; only ``task`` is required."""

    task: str
    agent: str = "claude"
    repo: Path = field(default_factory=Path.cwd)
    base: str | None = None
    watchers: Sequence[str | WatcherSpec] = ("security", "stuck", "errors")  # "role" or "role:manual"
    evaluator: str = "rules"
    recovery: str = "moderate"
    max_escalations: int = 3
    ask: Callable[[str], bool] | None = None
    pr: bool = True
    remote: str = "origin"
    forge_api: str | None = None
    forge_repo: str | None = None
    token: str | None = None
    cli_path: str | None = None
    manifest: SandboxManifest | None = None
    planner: str | None = None  # "anthropic" | "openai": an LLM plans the manifest (else the rules)
    idle_timeout_s: float | None = None
    total_timeout_s: float | None = None
    spawn_id: str | None = None
    journal: Journal | None = None
    env: Mapping[str, str] | None = None
    on_progress: Callable[[ProgressState], None] | None = None
