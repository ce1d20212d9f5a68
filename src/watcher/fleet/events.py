"""The events of a fleet: its tasks, their turns and health, nudges, pauses, aborts, learnings and syncs.

Declared here, with the fleet; the runtime's codec journals them and reads them back field by
field, and declaring one registers its ``kind``. ``session`` is the task (or ``fleet:<name>``,
``host:<run>``), ``fleet`` the fleet's name.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from watcher.runtime.events import Event

__all__ = [
    "FleetEvent",
    "FleetSettings",
    "FleetTask",
    "LearningExtracted",
    "SupervisionReport",
    "SyncMessageSent",
    "TaskHealthCheck",
    "TaskHostBeat",
    "TaskLost",
    "TaskTurn",
    "WatcherAbort",
    "WatcherNudge",
    "WatcherPause",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetEvent(Event):
    """Base of the fleet events: ``session`` is the task, ``fleet`` the fleet's name; the payload is the event's own fields."""

    fleet: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetTask(FleetEvent):
    """Emitted when a fleet starts a task: what the supervision loops need to know of it, from any process.

    ``run`` tells one run of a fleet from another run of the same name in the same journal (a tasks
    file run again): readers show the latest run, and a task announced again starts afresh.
    """

    kind: ClassVar[str] = "fleet_task"
    critical: ClassVar[bool] = True
    agent: str = "anthropic"
    model: str = ""
    tags: tuple[str, ...] = ()
    parent: str = ""
    directory: str = ""
    run: str = ""
    host: str = ""  # the task host running it when several hosts share one run (else the run is the host)


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetSettings(FleetEvent):
    """Emitted when a fleet run starts (``session`` is ``fleet:<name>``): its ``FleetConfig``, field by field.

    A supervisor started elsewhere (``watcher fleet supervise``) supervises with the settings the
    run was started with, read from here, not with defaults.
    """

    kind: ClassVar[str] = "fleet_settings"
    critical: ClassVar[bool] = True
    run: str
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskTurn(FleetEvent):
    """Emitted by a fleet task at each iteration boundary: its summary for the watcher loop.

    Written on the task's side (where its observations are), so the watcher loop reads one row per
    task instead of every observation. Counters are cumulative (a reader that skips rows misses
    nothing); ``findings`` are the stuck detectors' latest findings, each with its ``seq``;
    ``answered`` is the last interjection a response came after.
    """

    kind: ClassVar[str] = "task_turn"
    step: int
    input_tokens: int = 0
    output_tokens: int = 0
    progress: int = 0  # file changes plus new successes the stuck tracker saw
    files_changed: int = 0
    finding_count: int = 0
    findings: tuple[dict[str, Any], ...] = ()  # the latest few: seq, rule, subject, count, action, detail
    tools: tuple[tuple[str, bool, float, str], ...] = ()  # the latest calls: name, success, seconds, result head
    conversation: tuple[str, ...] = ()  # the latest messages, clipped
    answered: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskHealthCheck(FleetEvent):
    """Emitted per task and watcher cycle: health, freshness, counters, diagnosis (droppable)."""

    kind: ClassVar[str] = "task_health"
    cycle: int
    health: str  # healthy | stuck | stale | very_stale | paused | degraded
    status: str  # running | paused
    freshness: str
    iteration: int = 0
    tokens: int = 0
    nudges: int = 0
    idle_s: float = 0.0
    recommendation: str = "continue"
    diagnosis: str = ""
    degraded: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class WatcherNudge(FleetEvent):
    """Emitted when a nudge is persisted, before it is handed to the task (``by``: fleet or a person)."""

    kind: ClassVar[str] = "watcher_nudge"
    critical: ClassVar[bool] = True
    interjection_id: str
    severity: str
    message: str
    count: int = 0
    by: str = "fleet"


@dataclass(frozen=True, slots=True, kw_only=True)
class WatcherPause(FleetEvent):
    """Emitted when a task is paused at its next boundary, or resumed (``resumed``)."""

    kind: ClassVar[str] = "watcher_pause"
    critical: ClassVar[bool] = True
    reason: str
    by: str = "fleet"
    resumed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class WatcherAbort(FleetEvent):
    """Emitted when a task is aborted by the fleet's watcher loop or a person."""

    kind: ClassVar[str] = "watcher_abort"
    critical: ClassVar[bool] = True
    reason: str
    by: str = "fleet"


@dataclass(frozen=True, slots=True, kw_only=True)
class LearningExtracted(FleetEvent):
    """Emitted when the syncer extracts a learning from a task's observation (the knowledge store)."""

    kind: ClassVar[str] = "learning_extracted"
    critical: ClassVar[bool] = True
    learning_id: str
    text: str
    source: str  # tool_result | assistant_text | llm
    urgency: str  # blocking | helpful | fyi
    observation: int = -1  # index of the observation it came from
    tags: tuple[str, ...] = ()
    directories: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncMessageSent(FleetEvent):
    """Emitted when a learning is persisted for a recipient (``session``), before delivery or queued while paused."""

    kind: ClassVar[str] = "sync_message"
    critical: ClassVar[bool] = True
    interjection_id: str
    learning_id: str
    source_task: str
    urgency: str
    text: str
    status: str = "sent"  # sent | queued (the recipient is paused) | delivered_on_resume | undeliverable
    observation: int = -1
    recipients: tuple[str, ...] = ()  # one row for the same sync to several tasks (``session`` is the first)

    def each(self) -> tuple[SyncMessageSent, ...]:
        """One event per recipient (a batched row expanded; interjection ids are ``sync-<learning>-<task>``)."""
        if not self.recipients:
            return (self,)
        return tuple(
            replace(self, session=r, interjection_id=f"sync-{self.learning_id}-{r}", recipients=())
            for r in self.recipients
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class SupervisionReport(FleetEvent):
    """Emitted after each supervision cycle (``session`` is ``fleet:<name>``): the loops' health and counters."""

    kind: ClassVar[str] = "fleet_supervision"
    watcher_alive: bool = False
    syncer_alive: bool = False
    last_watcher_cycle: float | None = None
    last_syncer_cycle: float | None = None
    degraded: bool = False
    watcher_restarts: int = 0
    syncer_restarts: int = 0
    watcher_cycles: int = 0
    syncer_cycles: int = 0
    evaluator_failures: int = 0
    syncs_dropped: int = 0  # over a recipient's rate limit
    syncs_duplicate: int = 0  # the same learning again within the TTL


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskHostBeat(FleetEvent):
    """Emitted every few seconds by a fleet's task host while it runs (``session`` is ``host:<run>``).

    The supervision loops tell a live host from a dead one by it: a host that stopped beating
    took its tasks with it (they are ``lost``, not stuck).
    """

    kind: ClassVar[str] = "task_host_beat"
    critical: ClassVar[bool] = True
    run: str
    tasks: int = 0  # how many of its tasks are still running
    host: str = ""  # which of the hosts sharing ``run`` beats (empty: the run has one host)


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskLost(FleetEvent):
    """Emitted by the supervisor when a task's host stopped beating: nothing runs the task any more."""

    kind: ClassVar[str] = "task_lost"
    critical: ClassVar[bool] = True
    run: str
    reason: str
