"""The events of a spawn (seed 002): a real agent CLI in a worktree, phase by phase.

Declared here, with the spawn; the runtime's codec journals them and reads them back field by
field, and declaring one registers its ``kind``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from watcher.runtime.events import Event

__all__ = [
    "LLMCompleted",
    "LLMStarted",
    "PRCreated",
    "PermissionDenied",
    "ProgressUpdate",
    "RecoveryAttempt",
    "SandboxCreated",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxCreated(Event):
    """Emitted when a spawn's branch and worktree are ready (``provision_ms`` it took)."""

    kind: ClassVar[str] = "sandbox_created"
    critical: ClassVar[bool] = True
    spawn_id: str
    branch: str
    worktree: str
    base: str
    agent: str
    provision_ms: float = 0.0
    notes: tuple[str, ...] = ()  # what provisioning could not do (a submodule left empty)


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMStarted(Event):
    """Emitted when the agent CLI process starts (a first run, a resume or a recovery run)."""

    kind: ClassVar[str] = "llm_started"
    critical: ClassVar[bool] = True
    spawn_id: str
    agent: str
    pid: int
    attempt: int = 0
    resume: str = ""  # the CLI session resumed, if any
    argv: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ProgressUpdate(Event):
    """Emitted while the agent CLI works: a snapshot of files, commands, output and cost."""

    kind: ClassVar[str] = "progress"
    spawn_id: str
    elapsed_s: float
    files_read: tuple[str, ...] = ()
    files_written: tuple[str, ...] = ()
    output_lines: int = 0
    last_tool: str = ""
    cost_usd: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionDenied(Event):
    """Emitted when the agent CLI was refused a tool or command; ``fix`` is the widening computed, if any."""

    kind: ClassVar[str] = "permission_error"
    critical: ClassVar[bool] = True
    spawn_id: str
    tool: str
    detail: str = ""
    fix: str = ""
    objection: str = ""  # why the widening cannot be made automatically (the security role objects)


@dataclass(frozen=True, slots=True, kw_only=True)
class RecoveryAttempt(Event):
    """Emitted when a fix was applied to the manifest (or refused) and the run is resumed (or not)."""

    kind: ClassVar[str] = "recovery"
    critical: ClassVar[bool] = True
    spawn_id: str
    strategy: str
    attempt: int
    fix: str
    outcome: str  # "resumed" | "refused" | "declined"
    detail: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMCompleted(Event):
    """Emitted when the agent CLI process ended: its status, exit code and the agent's summary."""

    kind: ClassVar[str] = "llm_completed"
    critical: ClassVar[bool] = True
    spawn_id: str
    status: str  # "success" | "failed" | "timeout" | "interrupted" | "crashed"
    exit_code: int | None = None
    cli_session: str = ""
    summary: str = ""
    cost_usd: float = 0.0
    detail: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class PRCreated(Event):
    """Emitted when the spawn's branch was pushed and its pull request opened."""

    kind: ClassVar[str] = "pr_created"
    critical: ClassVar[bool] = True
    spawn_id: str
    number: int
    url: str
    head: str
    base: str
