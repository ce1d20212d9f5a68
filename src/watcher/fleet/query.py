"""Reading a fleet back from the journal, from any process: status, health, diagnoses, syncs, stats.

Everything ``watcher fleet status|health|diagnoses|syncs|stats`` and the notebook dashboard show
comes from the journal's fleet events (``FleetTask``, ``TaskTurn``, ``TaskHealthCheck``,
``WatcherNudge``, ``WatcherPause``, ``WatcherAbort``, ``LearningExtracted``, ``SyncMessageSent``,
``SupervisionReport``) and the tasks' session events. A journal may hold several fleets: pass
``fleet`` to read one (by default, the most recent one).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from watcher.core.errors import MalformedEventError
from watcher.core.evaluation import Usage
from watcher.core.pricing import cost_usd
from watcher.fleet.events import (
    FleetEvent,
    FleetTask,
    LearningExtracted,
    SupervisionReport,
    SyncMessageSent,
    TaskHealthCheck,
    TaskHostBeat,
    TaskLost,
    TaskTurn,
    WatcherAbort,
    WatcherNudge,
    WatcherPause,
)
from watcher.runtime.events import Event, SessionEvent
from watcher.runtime.fates import QUEUED
from watcher.runtime.journal import Journal

__all__ = ["FleetView", "TaskRow", "read_fleet"]

_KINDS = {
    "fleet_task",
    "task_health",
    "task_turn",
    "watcher_nudge",
    "watcher_pause",
    "watcher_abort",
    "sync_message",
    "learning_extracted",
    "fleet_supervision",
    "task_lost",
    "task_host_beat",
    "session",
}


@dataclass(slots=True)
class TaskRow:
    """One line of ``watcher fleet status``."""

    task: str
    agent: str = ""
    model: str = ""
    health: str = "unknown"  # the latest check; "unchecked" when degraded loops never judged it; "lost" when lost
    status: str = "running"
    iteration: int = 0
    last_activity_s: float = 0.0  # seconds since the task last wrote anything
    nudges: int = 0  # nudges sent to it in this run (by the fleet or a person): what ``stats`` adds up
    ladder: int = 0  # its place on the escalation ladder now (0 after progress, a pause or a resume)
    tokens: int = 0
    cost_usd: float = 0.0  # estimated from the tokens and the model's list price (0 for unknown models)
    diagnosis: str = ""
    last_ts: float = 0.0
    _input: int = 0
    _output: int = 0
    _paused_for: str = ""  # the reason of the pause it is under
    _host: str = ""  # the task host whose beats say it is alive (its run, when the run has one host)


@dataclass(slots=True)
class FleetView:
    """What the journal holds about one fleet's tasks."""

    name: str
    tasks: dict[str, TaskRow]
    checks: list[TaskHealthCheck] = field(default_factory=list)
    syncs: list[SyncMessageSent] = field(default_factory=list)
    learnings: list[LearningExtracted] = field(default_factory=list)
    nudges: list[WatcherNudge] = field(default_factory=list)
    pauses: list[WatcherPause] = field(default_factory=list)
    aborts: list[WatcherAbort] = field(default_factory=list)
    supervision: SupervisionReport | None = None  # the loops' latest report

    def stats(self) -> dict[str, Any]:
        s = self.supervision
        return {
            "fleet": self.name,
            "tasks": len(self.tasks),
            "watcher_cycles": s.watcher_cycles if s else 0,
            "syncer_cycles": s.syncer_cycles if s else 0,
            "health_checks": len(self.checks),
            "nudges_sent": sum(t.nudges for t in self.tasks.values()),
            "learnings": len(self.learnings),
            "syncs_relayed": sum(1 for x in self.syncs if x.status == "sent"),
            "syncs_queued": sum(1 for x in self.syncs if x.status == QUEUED),
            "syncs_dropped": s.syncs_dropped if s else 0,
            "syncs_duplicate": s.syncs_duplicate if s else 0,
            "tasks_paused": sum(1 for p in self.pauses if not p.resumed),
            "tasks_resumed": sum(1 for p in self.pauses if p.resumed),
            "tasks_aborted": len(self.aborts),
            "tasks_lost": sum(1 for t in self.tasks.values() if t.status == "lost"),
            "tokens": sum(t.tokens for t in self.tasks.values()),
            "cost_usd": round(sum(t.cost_usd for t in self.tasks.values()), 6),
            "supervision": self.health(),
        }

    def health(self) -> dict[str, Any]:
        """The supervision loops' health as last reported (empty when no cycle has run)."""
        s = self.supervision
        if s is None:
            return {}
        return {
            "watcher_alive": s.watcher_alive,
            "syncer_alive": s.syncer_alive,
            "degraded": s.degraded,
            "restarts": {"watcher": s.watcher_restarts, "syncer": s.syncer_restarts},
            "evaluator_failures": s.evaluator_failures,
            "reported_s_ago": round(time.time() - s.ts, 1),
        }

    def rows(self) -> list[dict[str, Any]]:
        now = time.time()
        out = []
        for row in self.tasks.values():
            data = {k: v for k, v in asdict(row).items() if not k.startswith("_")}
            data["last_activity_s"] = round(now - row.last_ts, 1) if row.last_ts else None
            data["cost_usd"] = round(row.cost_usd, 6)
            del data["last_ts"]
            out.append(data)
        return out

    def health_of(self, task: str) -> dict[str, Any] | None:
        """``task``'s latest health check as it stands now (a pause's reason, a loss), None when nothing is known.

        The check's own health and diagnosis give way to what happened since: a task lost after
        its last check is ``lost`` with the reason; a task never checked shows what its row says
        (``healthy`` under running loops, ``unchecked`` under degraded ones).
        """
        row = self.tasks.get(task)
        checks = [c for c in self.checks if c.session == task]
        if row is None or (not checks and row.health == "unknown"):
            return None
        base = checks[-1].payload() if checks else {"cycle": 0, "freshness": "-", "recommendation": "continue"}
        return {
            "task": task,
            **base,
            "health": row.health,
            "status": row.status,
            "diagnosis": row.diagnosis,
            "nudges": row.nudges,
            "ladder": row.ladder,
        }


def _events(journal: Journal) -> list[Event]:
    out: list[Event] = []
    after = 0
    while True:
        rows = journal.read(after, limit=5000, kinds=_KINDS)
        if not rows:
            return out
        after = rows[-1].id
        for row in rows:
            try:
                event = row.event()
            except MalformedEventError:
                continue
            out.extend(event.each() if isinstance(event, SyncMessageSent) else (event,))


def read_fleet(journal: Journal, fleet: str | None = None) -> FleetView:
    """What the journal says about fleet ``fleet`` (default: the one that started last), in its latest run.

    A tasks file run again under the same name is a new run: its tasks and what happened to them
    since it began, not the sum of every run.
    """
    events = _events(journal)
    name = fleet if fleet is not None else next((e.fleet for e in reversed(events) if isinstance(e, FleetTask)), "")
    announced = [(i, e) for i, e in enumerate(events) if isinstance(e, FleetTask) and e.fleet == name]
    run = announced[-1][1].run if announced else ""
    events = events[next((i for i, e in announced if e.run == run), len(events)) :]
    view = FleetView(name, {})
    for event in events:
        if isinstance(event, FleetTask) and event.fleet == name and event.run == run:
            view.tasks[event.session] = TaskRow(
                event.session, agent=event.agent, model=event.model, last_ts=event.ts, _host=event.host or event.run
            )
    for event in events:
        if isinstance(event, SupervisionReport):
            view.supervision = event if event.fleet == name else view.supervision
            continue
        if isinstance(event, TaskHostBeat):  # its host beat after all (held up, not dead), as the roster takes it
            beating = event.host or event.run
            for task in view.tasks.values() if event.fleet == name and event.run == run else ():
                if task._host == beating:  # another host of a shared run says nothing of this one's tasks
                    _found(view, task)
            continue
        row = view.tasks.get(event.session)
        if row is None or (isinstance(event, FleetEvent) and event.fleet != name):
            continue
        if isinstance(event, SessionEvent):
            if event.status not in ("started", "running"):
                row.status = event.status
            continue
        if not isinstance(event, TaskHealthCheck):
            row.last_ts = max(row.last_ts, event.ts)
        _take(view, row, event)
    texts = {lrn.learning_id: lrn.text for lrn in view.learnings}
    view.syncs = [s if s.text else replace(s, text=texts.get(s.learning_id, "")) for s in view.syncs]
    checked = {c.session for c in view.checks}
    for row in view.tasks.values():
        row.cost_usd = cost_usd(row.model, Usage(input_tokens=row._input, output_tokens=row._output))
        if view.supervision is not None and row.task not in checked and row.tokens and row.health == "unknown":
            # under running loops a task found healthy at its first judgement has no check row; degraded
            # loops judge only what moved or went stale, so a quiet task there was never checked at all
            row.health = "unchecked" if view.supervision.degraded else "healthy"
    return view


def _found(view: FleetView, row: TaskRow) -> None:
    """A task taken for lost whose host was heard from again: running, with its last check's health."""
    if row.status == "lost":
        last = next((c for c in reversed(view.checks) if c.session == row.task), None)
        row.status = "running"
        row.health, row.diagnosis = (last.health, last.diagnosis) if last else ("unknown", "")


def _take(view: FleetView, row: TaskRow, event: Event) -> None:
    if isinstance(event, TaskHealthCheck):
        if event.health == "paused" and row._paused_for:  # the pause's own reason, not the word "paused" again
            event = replace(event, diagnosis=row._paused_for)
        view.checks.append(event)
        row.iteration, row.ladder = max(row.iteration, event.iteration), event.nudges
        if row.status in ("running", "paused"):
            row.health, row.diagnosis, row.status = event.health, event.diagnosis, event.status
    elif isinstance(event, TaskTurn):
        _found(view, row)  # its host was heard from again
        row._input, row._output = event.input_tokens, event.output_tokens
        row.tokens = event.input_tokens + event.output_tokens
        row.iteration = max(row.iteration, event.step)
    elif isinstance(event, WatcherNudge):
        view.nudges.append(event)
        row.nudges += 1
        if event.by == "fleet":
            row.ladder = event.count
    elif isinstance(event, WatcherPause):
        view.pauses.append(event)
        row._paused_for = "" if event.resumed else event.reason
        if row.status in ("running", "paused"):
            row.status = "running" if event.resumed else "paused"
            if not event.resumed:
                row.ladder, row.diagnosis = 0, event.reason
    elif isinstance(event, WatcherAbort):
        view.aborts.append(event)
    elif isinstance(event, TaskLost):
        if row.status in ("running", "paused"):
            row.status = row.health = "lost"  # the status and the health column say the same
            row.diagnosis = event.reason
    elif isinstance(event, SyncMessageSent):
        view.syncs.append(event)
    elif isinstance(event, LearningExtracted):
        view.learnings.append(event)
