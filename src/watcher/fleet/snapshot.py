"""What the watcher loop knows of each task: a ``TaskState`` per task, fed the task's summary rows.

Each task writes a summary (``TaskTurn``) at every iteration boundary with cumulative counters,
so the loop reads only the newest one per task per cycle. Freshness runs on the monotonic clock
of the process judging: the moment a cycle *saw* progress, not the wall-clock time a row says,
so a clock change cannot make a task look fresh or stale. A completed iteration or a file change
resets the heartbeat; for the nudge counter, progress is a file change or the stuck tracker
seeing something new succeed. Recent tool calls and conversation are read from the journal only
when an evaluator asks for them (``recent``). The ``Snapshot`` a cycle judges is the ``health``
role's (``watcher.roles.health``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from watcher.core.observations import AssistantMessage, ToolCall, ToolResult, UserMessage
from watcher.core.redact import redact
from watcher.roles._health_snapshot import Freshness, Snapshot, ToolCallSummary
from watcher.roles._stuck_findings import Finding
from watcher.runtime.events import ObservationEvent
from watcher.runtime.journal import Journal

__all__ = ["Freshness", "Snapshot", "TaskState", "ToolCallSummary", "recent"]


def _finding(row: dict[str, Any]) -> Finding:
    return Finding(
        rule=row["rule"], action=row["action"], count=int(row["count"]), subject=str(row["subject"]), loop=0,
        detail=str(row.get("detail") or ""),
    )  # fmt: skip


@dataclass(slots=True)
class TaskState:
    """One task's picture in the watcher loop; ``take`` a summary, ``snapshot`` it when judged."""

    name: str
    started: float = field(default_factory=time.monotonic)
    last_progress: float = field(default_factory=time.monotonic)
    iteration: int = 0
    tokens: int = 0
    nudges: int = 0  # consecutive nudges without progress
    pending_nudge: str = ""  # the id of the last nudge sent
    answered_nudge: str = ""  # the last nudge the task answered (its summary says)
    flagged: Finding | None = None  # the loop found and not yet left
    changed: bool = False  # a summary arrived since the last judgement
    _progress: int = 0
    _files: int = 0
    _finding_seq: int = 0
    _findings: list[Finding] = field(default_factory=list)
    _file_changed: bool = False
    _progressed: bool = False
    _beat: bool = False

    @property
    def answered(self) -> bool:
        """The last nudge reached the agent and it has answered (a response came after the request carrying it)."""
        return not self.pending_nudge or self.answered_nudge == self.pending_nudge

    def sent_nudge(self, interjection_id: str) -> None:
        self.pending_nudge = interjection_id

    def prime(self, summary: dict[str, Any]) -> None:
        """Start from ``summary`` as the baseline (a restarted loop): what it reports is not news."""
        self.iteration = int(summary.get("step", 0))
        self._files, self._progress = int(summary.get("files_changed", 0)), int(summary.get("progress", 0))
        self.tokens = int(summary.get("input_tokens", 0)) + int(summary.get("output_tokens", 0))
        self.answered_nudge = str(summary.get("answered") or "")
        self._finding_seq = max((int(f.get("seq", 0)) for f in summary.get("findings") or ()), default=0)

    def take(self, summary: dict[str, Any]) -> None:
        """Take the task's newest summary row (its payload)."""
        step = int(summary.get("step", 0))
        files = int(summary.get("files_changed", 0))
        progress = int(summary.get("progress", 0))
        self._beat = self._beat or step > self.iteration
        self._file_changed = self._file_changed or files > self._files
        self._progressed = self._progressed or progress > self._progress
        self.iteration, self._files, self._progress = max(step, self.iteration), files, progress
        self.tokens = int(summary.get("input_tokens", 0)) + int(summary.get("output_tokens", 0))
        self.answered_nudge = str(summary.get("answered") or self.answered_nudge)
        for row in summary.get("findings") or ():
            if int(row.get("seq", 0)) > self._finding_seq:
                self._finding_seq = int(row["seq"])
                self._findings.append(_finding(row))
        self.changed = True

    def quiet(self, now: float, stale_after_s: float) -> bool:
        """Nothing to judge: no new summary, nothing flagged, no nudge pending, the heartbeat fresh."""
        return (
            not self.changed and self.flagged is None and not self.nudges and now - self.last_progress < stale_after_s
        )

    def routine(self, now: float, stale_after_s: float) -> bool:
        """True (and the summary consumed) when the task only moved on: nothing found, flagged or nudged, fresh."""
        if self._findings or self.flagged is not None or self.nudges:
            return False
        if self._beat or self._file_changed:
            self.last_progress = now
        if now - self.last_progress >= stale_after_s:
            return False
        self._file_changed = self._progressed = self._beat = self.changed = False
        return True

    def snapshot(
        self, now: float, stale_after_s: float, very_stale_after_s: float, *, judged: bool = False
    ) -> Snapshot:
        """The state at ``now`` (monotonic); clears what this judgement consumed.

        ``judged``: a full judgement follows, so the ladder moves first: a task that progressed
        starts a new ladder, and a loop found is flagged until the task leaves it.
        """
        if self._beat or self._file_changed:
            self.last_progress = now
        idle = now - self.last_progress
        freshness: Freshness = (
            "fresh" if idle < stale_after_s else "stale" if idle < very_stale_after_s else "very_stale"
        )
        findings, progressed, nudges = tuple(self._findings), self._progressed or self._file_changed, self.nudges
        if judged:
            if progressed:
                self.nudges, self.flagged = 0, None  # it changed approach and it worked: the ladder restarts
            if findings:
                self.flagged = findings[-1]
        snap = Snapshot(
            task=self.name,
            age_s=now - self.started,
            iteration=self.iteration,
            tokens=self.tokens,
            recent_tools=(),
            idle_s=idle,
            freshness=freshness,
            recent_conversation=(),
            findings=findings,
            file_changed=self._file_changed,
            progressed=progressed,
            nudges=nudges,
            flagged=self.flagged is not None,
            answered=self.answered,
        )
        self._findings, self._file_changed, self._progressed, self._beat, self.changed = [], False, False, False, False
        return snap


def recent(journal: Journal, task: str, limit: int = 40) -> tuple[tuple[ToolCallSummary, ...], tuple[str, ...], bool]:
    """A task's recent tool calls (real durations), conversation, and whether a call awaits its result."""
    calls: dict[str, tuple[str, float]] = {}
    tools: list[ToolCallSummary] = []
    conversation: list[str] = []
    for row in journal.tail(task, kinds=("observation",), limit=limit):
        event = row.event()
        if not isinstance(event, ObservationEvent):
            continue
        obs = event.observation
        if isinstance(obs, ToolCall):
            calls[obs.id] = (obs.name, row.ts)
        elif isinstance(obs, ToolResult):
            name, began = calls.pop(obs.tool_call_id, ("?", row.ts))
            tools.append(ToolCallSummary(name, not obs.is_error, max(row.ts - began, 0.0), redact(obs.output)[:100]))
        elif isinstance(obs, AssistantMessage | UserMessage):
            who = "assistant" if isinstance(obs, AssistantMessage) else "user"
            conversation.append(f"{who}: {redact(obs.text)[:200]}")  # redacted whole, then cut
    return tuple(tools[-10:]), tuple(conversation[-6:]), bool(calls)
