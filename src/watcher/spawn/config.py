"""What one spawn is asked to do: the task, the agent, the watchers, recovery and integration options."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from watcher.agents import Boundary
from watcher.core.errors import ConfigurationError
from watcher.core.spec import WatcherSpec
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Journal
from watcher.settings import Settings
from watcher.spawn.manifest import SandboxManifest
from watcher.spawn.monitor import ProgressState
from watcher.spawn.report import SpawnResult

__all__ = ["SpawnConfig"]


@dataclass(slots=True)
class SpawnConfig:
    """Everything one spawn needs; only ``task`` is required.

    A fleet runs a spawn as one of its tasks with ``runtime`` (the fleet's: the spawn publishes
    there and leaves it open), ``session_name`` (the task's name instead of ``spawn-<id>``) and
    ``at_boundary`` (awaited at the CLI's iteration boundaries: a live CLI's tool-use responses
    and turn ends, a headless CLI's run ends before a resume).

    ``env`` is the environment the spawn runs in (default: this process's, read when it starts):
    the CLI gets a filtered copy, and the planner, the pull-request token and the forge come from it.
    """

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
    runtime: Runtime | None = None
    session_name: str | None = None
    at_boundary: Callable[[Boundary], Awaitable[None]] | None = None
    # the report, however the spawn ends: at its end, or what happened so far when it is interrupted
    on_end: Callable[[SpawnResult], None] | None = None

    def __post_init__(self) -> None:
        """Refuse a task that is no text, and limits that would never fire or fire at once (``-5``, ``nan``)."""
        _check_task(self.task)
        for name in ("idle_timeout_s", "total_timeout_s"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ConfigurationError(f"{name} must be a finite number of seconds above 0 (or None), got {value!r}")
        if type(self.max_escalations) is not int or self.max_escalations < 0:  # (True is an int, and no count)
            raise ConfigurationError(
                f"max_escalations must be a whole number of at least 0 (0: never widen), got {self.max_escalations!r}"
            )

    def settings(self) -> Settings:
        """What ``env`` (or, without one, this process's environment read now) configures."""
        return Settings.from_env(self.env)


def _check_task(task: object) -> None:
    """A task is text with words in it: not empty, no NUL, no bytes that were not UTF-8 (a file pasted whole)."""
    if not isinstance(task, str) or not task.strip():
        raise ConfigurationError(
            f'a spawn needs a task, in words: watcher spawn "fix the failing test" (got {task!r:.40})'
        )
    try:
        task.encode("utf-8")
    except UnicodeEncodeError:  # a byte that is not UTF-8 reaches Python's argv as a lone surrogate
        raise ConfigurationError(
            "the task holds bytes that are not UTF-8 text (a binary file?); write the task in words"
        ) from None
    if "\0" in task:
        raise ConfigurationError("the task holds a NUL character (a binary file?); write the task in words")
