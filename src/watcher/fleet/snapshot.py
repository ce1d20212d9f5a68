"""What the watcher loop knows of each task, rebuilt from the journal: a ``TaskState`` per task.

Every cycle the loop reads the journal rows written since the last one and feeds each task's
observations and heartbeats (``TaskTurn``) to its state: iterations, tokens, recent tool calls
with their real durations (call and result timestamps) and success, recent conversation, and the
stuck role's loop tracker. Freshness runs on the monotonic clock of the process judging: the
moment a cycle *saw* progress, not the wall-clock time a row says, so a clock change cannot make
a task look fresh or stale. Progress is a completed iteration (for the heartbeat) or a file
change; for the nudge counter it is a file change or the tracker seeing something new succeed.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Literal

from watcher.core.observations import AssistantMessage, Done, Observation, ToolCall, ToolResult, UserMessage
from watcher.roles._stuck_config import StuckConfig
from watcher.roles._stuck_findings import Finding
from watcher.roles._stuck_tracker import LoopTracker
from watcher.runtime.events import DeliveryEvent, ObservationEvent, TaskTurn

__all__ = ["Freshness", "Snapshot", "TaskState", "ToolCallSummary"]

Freshness = Literal["fresh", "stale", "very_stale", "unknown"]


@dataclass(frozen=True, slots=True)
class ToolCallSummary:
    """One tool call as the snapshot shows it: name, success, real duration, the start of its result."""

    name: str
    success: bool
    duration_s: float
    result: str


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A task at one cycle: what the rules (or an LLM evaluator) judge."""

    task: str
    age_s: float
    iteration: int
    tokens: int
    recent_tools: tuple[ToolCallSummary, ...]
    idle_s: float
    freshness: Freshness
    recent_conversation: tuple[str, ...]
    findings: tuple[Finding, ...]
    file_changed: bool
    progressed: bool
    nudges: int
    in_tool_call: bool = False  # a tool call has no result yet: the task is not at a boundary


@dataclass(slots=True)
class TaskState:
    """One task's running picture; ``feed`` it journal events, ``snapshot`` it each cycle."""

    name: str
    file_tools: frozenset[str] = frozenset({"Write", "Edit", "write_file", "edit_file", "MultiEdit"})
    started: float = field(default_factory=time.monotonic)
    last_progress: float = field(default_factory=time.monotonic)
    iteration: int = 0
    tokens: int = 0
    nudges: int = 0  # consecutive nudges without progress
    pending_nudge: str = ""  # the id of the last nudge sent
    delivered_at: int = -1  # the iteration count when a request carried it (-1: not yet)
    flagged: Finding | None = None  # the loop found and not yet left
    observations: int = 0
    ended: bool = False
    tools: deque[ToolCallSummary] = field(default_factory=lambda: deque(maxlen=10))
    conversation: deque[str] = field(default_factory=lambda: deque(maxlen=6))
    _tracker: LoopTracker = field(default_factory=lambda: LoopTracker(StuckConfig()))
    _calls: dict[str, tuple[str, float]] = field(default_factory=dict)
    _findings: list[Finding] = field(default_factory=list)
    _file_changed: bool = False
    _progressed: bool = False
    _saw_iteration: bool = False
    _in_turn: bool = False

    @property
    def answered(self) -> bool:
        """The last nudge reached the agent and it has answered (a response after the request carrying it)."""
        return not self.pending_nudge or (self.delivered_at >= 0 and self.iteration > self.delivered_at)

    def sent_nudge(self, interjection_id: str) -> None:
        self.pending_nudge, self.delivered_at = interjection_id, -1

    def feed(self, event: ObservationEvent | TaskTurn | DeliveryEvent) -> None:
        """Take one journal event of this task."""
        if isinstance(event, DeliveryEvent):
            if event.interjection_id == self.pending_nudge and event.outcome == "delivered":
                self.delivered_at = self.iteration
            return
        if isinstance(event, TaskTurn):
            self.tokens = event.input_tokens + event.output_tokens
            return
        obs = event.observation
        self.observations += 1
        self._count_iteration(obs)
        if isinstance(obs, ToolCall):
            self._calls[obs.id] = (obs.name, event.ts)
        elif isinstance(obs, ToolResult):
            name, began = self._calls.pop(obs.tool_call_id, ("?", event.ts))
            self.tools.append(ToolCallSummary(name, not obs.is_error, max(event.ts - began, 0.0), obs.output[:100]))
            if not obs.is_error and name in self.file_tools:
                self._file_changed = True
        elif isinstance(obs, AssistantMessage | UserMessage):
            who = "assistant" if isinstance(obs, AssistantMessage) else "user"
            self.conversation.append(f"{who}: {obs.text[:200]}")
        self._findings += self._tracker.feed(obs)
        if self._tracker.progressed:
            self._tracker.progressed = False
            self._progressed = True

    def _count_iteration(self, obs: Observation) -> None:
        # an assistant turn begins with its text or its first tool call
        if isinstance(obs, AssistantMessage | ToolCall):
            if not self._in_turn:
                self.iteration += 1
                self._saw_iteration = True
            self._in_turn = True
        elif isinstance(obs, ToolResult | UserMessage | Done):
            self._in_turn = False

    def snapshot(self, now: float, stale_after_s: float, very_stale_after_s: float) -> Snapshot:
        """The state at ``now`` (monotonic); clears what this cycle has consumed."""
        if self._saw_iteration or self._file_changed:
            self.last_progress = now
        idle = now - self.last_progress
        freshness: Freshness = (
            "fresh" if idle < stale_after_s else "stale" if idle < very_stale_after_s else "very_stale"
        )
        snap = Snapshot(
            task=self.name,
            age_s=now - self.started,
            iteration=self.iteration,
            tokens=self.tokens,
            recent_tools=tuple(self.tools),
            idle_s=idle,
            freshness=freshness,
            recent_conversation=tuple(self.conversation),
            findings=tuple(self._findings),
            file_changed=self._file_changed,
            progressed=self._progressed or self._file_changed,
            nudges=self.nudges,
            in_tool_call=bool(self._calls),
        )
        self._findings, self._file_changed, self._progressed, self._saw_iteration = [], False, False, False
        return snap
