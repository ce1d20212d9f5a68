"""Supervise many concurrent agent tasks: health, escalating nudges, pause and abort, relayed learnings.

``Fleet(specs, journal=...)`` runs ``TaskSpec``s (or a TOML tasks file, ``load_tasks``) as agent
runs (watcher's own, or spawned CLI agents in worktrees: ``agent = "claude" | "gemini" |
"codex"``, ``watcher.fleet.spawned``); its watcher loop judges each task's health from the
summaries the tasks write to the journal and nudges, pauses or aborts; its syncer loop relays
what one task learns to the related tasks it would help. Tasks and loops meet only in the
journal (``Supervisor`` is the loops alone, for tasks run in another process).
"""

from __future__ import annotations

from watcher.fleet.fleet import Fleet
from watcher.fleet.ladder import Recommendation
from watcher.fleet.learnings import Learning, extract, render_sync
from watcher.fleet.snapshot import Snapshot
from watcher.fleet.supervisor import COMMAND_PREFIX, SupervisionHealth, Supervisor
from watcher.fleet.sync import related
from watcher.fleet.tasks import FleetConfig, TaskSpec, load_tasks

__all__ = [
    "COMMAND_PREFIX",
    "Fleet",
    "FleetConfig",
    "Learning",
    "Recommendation",
    "Snapshot",
    "SupervisionHealth",
    "Supervisor",
    "TaskSpec",
    "extract",
    "load_tasks",
    "related",
    "render_sync",
]

# ``watcher.fleet(tasks, ...)`` starts a fleet and, in a notebook, shows its dashboard (``_launch``);
# ``watcher.fleet.show(journal)`` shows the dashboard of a fleet running elsewhere.
from watcher.fleet._launch import install as _install
from watcher.fleet._launch import show as show  # public: the redundant alias re-exports it

_install(__name__)
