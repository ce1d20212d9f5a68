"""``watcher spawn``: a real agent CLI in its own git worktree, supervised live, through to a pull request.

Seed 002's lifecycle — Evaluate (``manifest``), Provision (``provision``), Execute and Monitor
(``execute``, ``process``, ``monitor``, with the CLI as a parent session in ``session``),
Recover (``recover``), Integrate (``integrate``, ``finish``) and Report (``report``) — with one
adapter per CLI (``claude``, ``gemini``, ``codex``). ``spawn(task, ...)`` is the awaitable
entry point for Python and notebooks; ``watcher spawn`` the command.
"""

from __future__ import annotations

from typing import Any

from watcher.spawn.config import SpawnConfig
from watcher.spawn.manifest import SandboxManifest, infer_manifest
from watcher.spawn.provision import Sandbox, cleanup, provision
from watcher.spawn.recover import Recovery
from watcher.spawn.report import SpawnResult
from watcher.spawn.run import adapter_for, run_spawn

__all__ = [
    "Recovery",
    "Sandbox",
    "SandboxManifest",
    "SpawnConfig",
    "SpawnResult",
    "adapter_for",
    "cleanup",
    "infer_manifest",
    "provision",
    "run_spawn",
    "spawn",
]


async def spawn(task: str, **options: Any) -> SpawnResult:
    """Run ``task`` with an agent CLI in a new worktree, supervised, through to a pull request.

    ``options`` are ``SpawnConfig``'s fields (``agent="claude"``, ``repo=``, ``watchers=``,
    ``recovery=``, ``pr=``...). ``result = await watcher.spawn.spawn("fix the login bug")``.
    """
    return await run_spawn(SpawnConfig(task, **options))
