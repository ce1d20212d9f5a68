"""Reading a fleet back from the journal, from any process: status, health, diagnoses, syncs, stats.

Everything ``watcher fleet status|health|diagnoses|syncs|stats`` shows comes from the journal's
fleet events (``TaskHealthCheck``, ``WatcherNudge``, ``WatcherPause``, ``WatcherAbort``,
``LearningExtracted``, ``SyncMessageSent``, ``TaskTurn``) and the tasks' session events.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace
from typing import Any

from watcher.core.errors import MalformedEventError
from watcher.runtime.events import (
    Event,
    LearningExtracted,
    SessionEvent,
    SyncMessageSent,
    TaskHealthCheck,
    TaskTurn,
    WatcherAbort,
    WatcherNudge,
    WatcherPause,
)
from watcher.runtime.journal import Journal

__all__ = ["FleetView", "TaskRow", "read_fleet"]

_KINDS = {
    "task_health",
    "task_turn",
    "watcher_nudge",
    "watcher_pause",
    "watcher_abort",
    "sync_message",
    "learning_extracted",
}


@dataclass(slots=True)
class TaskRow:
    """One line of ``watcher fleet status``."""

    task: str
    health: str = "unknown"
    status: str = "running"
    iteration: int = 0
    last_activity_s: float = 0.0  # seconds since the task last wrote anything
    nudges: int = 0
    tokens: int = 0
    diagnosis: str = ""
    last_ts: float = 0.0


@dataclass(slots=True)
class FleetView:
    """What the journal holds about the fleet's tasks."""

    tasks: dict[str, TaskRow]
    checks: list[TaskHealthCheck]
    syncs: list[SyncMessageSent]
    learnings: list[LearningExtracted]
    nudges: list[WatcherNudge]
    pauses: list[WatcherPause]
    aborts: list[WatcherAbort]

    def stats(self) -> dict[str, int]:
        return {
            "watcher_cycles": max((c.cycle for c in self.checks), default=0),
            "health_checks": len(self.checks),
            "nudges_sent": len(self.nudges),
            "learnings": len(self.learnings),
            "syncs_relayed": sum(1 for s in self.syncs if s.status in ("sent", "delivered_on_resume")),
            "syncs_queued": sum(1 for s in self.syncs if s.status == "queued"),
            "tasks_paused": sum(1 for p in self.pauses if not p.resumed),
            "tasks_resumed": sum(1 for p in self.pauses if p.resumed),
            "tasks_aborted": len(self.aborts),
        }

    def rows(self) -> list[dict[str, Any]]:
        now = time.time()
        out = []
        for row in self.tasks.values():
            data = asdict(row)
            data["last_activity_s"] = round(now - row.last_ts, 1) if row.last_ts else None
            del data["last_ts"]
            out.append(data)
        return out


def _events(journal: Journal) -> list[Event]:
    out: list[Event] = []
    after = 0
    while True:
        rows = journal.read(after, limit=5000)
        if not rows:
            return out
        after = rows[-1].id
        for row in rows:
            if row.kind in _KINDS or row.kind == "session":
                try:
                    out.append(row.event())
                except MalformedEventError:
                    continue


def _expand(event: Event) -> tuple[Event, ...]:
    return event.each() if isinstance(event, SyncMessageSent) else (event,)


def read_fleet(journal: Journal) -> FleetView:
    """Everything the journal says about fleet tasks (the sessions that have fleet events)."""
    view = FleetView({}, [], [], [], [], [], [])
    sessions: list[SessionEvent] = []
    for event in (one for ev in _events(journal) for one in _expand(ev)):
        if isinstance(event, SessionEvent):
            sessions.append(event)
            continue
        row = view.tasks.setdefault(event.session, TaskRow(event.session))
        row.last_ts = max(row.last_ts, event.ts) if not isinstance(event, TaskHealthCheck) else row.last_ts
        if isinstance(event, TaskHealthCheck):
            view.checks.append(event)
            row.health, row.status, row.iteration = event.health, event.status, event.iteration
            row.nudges, row.diagnosis = event.nudges, event.diagnosis
            row.tokens = max(row.tokens, event.tokens)
        elif isinstance(event, TaskTurn):
            row.tokens = event.input_tokens + event.output_tokens
            row.iteration = max(row.iteration, event.step)
        elif isinstance(event, WatcherNudge):
            view.nudges.append(event)
            row.nudges = max(row.nudges, event.count)
        elif isinstance(event, WatcherPause):
            view.pauses.append(event)
            row.status = "running" if event.resumed else "paused"
        elif isinstance(event, WatcherAbort):
            view.aborts.append(event)
        elif isinstance(event, SyncMessageSent):
            view.syncs.append(event)
        elif isinstance(event, LearningExtracted):
            view.learnings.append(event)
    texts = {lrn.learning_id: lrn.text for lrn in view.learnings}
    view.syncs = [s if s.text else replace(s, text=texts.get(s.learning_id, "")) for s in view.syncs]
    for event in sessions:
        ended = view.tasks.get(event.session)
        if ended is not None and event.status not in ("started", "running"):
            ended.status = event.status
    return view
