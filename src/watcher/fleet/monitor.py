"""The task side of supervision: a ``TaskMonitor`` per task, fed where the task's observations happen.

It runs the stuck role's loop tracker and the learning extraction on every observation the task
publishes, and at each iteration boundary it writes the task's summary (``TaskTurn``: cumulative
counters, the latest findings, the last nudge the task answered) and the learnings it found
(``LearningExtracted``) to the journal. The supervision loops read only those rows: their cost
grows with the number of tasks, not with what each task does, and a task on another machine
would need nothing but the journal.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from watcher.agents import Boundary
from watcher.core.logs import logger
from watcher.core.observations import Observation, ToolCall, ToolResult
from watcher.fleet.events import LearningExtracted, TaskTurn
from watcher.fleet.learnings import Extractor, Learning, extract
from watcher.fleet.tasks import TaskSpec
from watcher.roles._stuck_config import StuckConfig
from watcher.roles._stuck_findings import Finding
from watcher.roles._stuck_tracker import LoopTracker
from watcher.runtime.events import DeliveryEvent, ObservationEvent
from watcher.runtime.fates import DELIVERED
from watcher.runtime.journal import Journal
from watcher.spawn._worktree_probe import WORKTREE_CHANGE

__all__ = ["TaskMonitor", "TurnExtractor", "finding_row"]

log = logger("watcher.fleet")

# an LLM extractor: called once per turn with (observation index, observation, tool name) of the turn
TurnExtractor = Callable[[str, Sequence[tuple[int, Observation, str]]], Awaitable[list[Learning]]]
FINDINGS_KEPT = 3


def finding_row(seq: int, f: Finding) -> dict[str, Any]:
    """A finding as the summary row carries it."""
    return {"seq": seq, "rule": f.rule, "action": f.action, "count": f.count, "subject": f.subject, "detail": f.detail}


class TaskMonitor:
    """One task's running summary, built from its observations and deliveries as they are published."""

    def __init__(
        self,
        spec: TaskSpec,
        fleet: str,
        journal: Journal,
        *,
        file_tools: Sequence[str],
        extractor: Extractor | None = None,
        turn_extractor: TurnExtractor | None = None,
    ) -> None:
        self.spec = spec
        self.fleet = fleet
        self.journal = journal
        self.file_tools = frozenset(file_tools)
        self.extractor = extractor or extract
        self.turn_extractor = turn_extractor
        self.progress = 0
        self.files_changed = 0
        self.finding_count = 0
        self.findings: deque[dict[str, Any]] = deque(maxlen=FINDINGS_KEPT)
        self.answered = ""
        self.learned = 0
        self._waiting_answer = ""  # a nudge a request carried; answered once a response follows
        self._nudges: set[str] = set()  # ids of the nudges handed to the task (its ``WatcherNudge`` rows)
        self._tracker = LoopTracker(StuckConfig())
        self._tools: dict[str, str] = {}  # tool call id -> name
        self._turn: list[tuple[int, Observation, str]] = []
        self._known: set[str] = set()
        self._extracting: set[asyncio.Task[None]] = set()  # LLM extractions of past turns, still running

    def observe(self, event: ObservationEvent) -> None:
        """Take one observation of the task: detectors, progress, learnings (rules)."""
        obs = event.observation
        tool = ""
        if isinstance(obs, ToolCall):
            self._tools[obs.id] = obs.name
            if obs.extra.get("synthesized") == WORKTREE_CHANGE:  # seen in the worktree (Codex writes by shell)
                self.files_changed += 1
                self.progress += 1
        elif isinstance(obs, ToolResult):
            tool = self._tools.pop(obs.tool_call_id, "")
            if not obs.is_error and tool in self.file_tools:
                self.files_changed += 1
                self.progress += 1
        for finding in self._tracker.feed(obs):
            self.finding_count += 1
            self.findings.append(finding_row(self.finding_count, finding))
        if self._tracker.progressed:
            self._tracker.progressed = False
            self.progress += 1
        try:
            self._store(self.extractor(self.spec.name, event.index, obs, tool))
        except Exception:
            log.exception("fleet task %s: extracting learnings failed", self.spec.name)
        if self.turn_extractor is not None:
            self._turn.append((event.index, obs, tool))

    def nudged(self, interjection_id: str) -> None:
        """The fleet handed the task nudge ``interjection_id`` (its delivery is awaited)."""
        self._nudges.add(interjection_id)

    def delivered(self, event: DeliveryEvent) -> None:
        """A request carried an interjection: a nudge counts as answered once a response follows."""
        if event.outcome == DELIVERED and event.interjection_id in self._nudges:
            self._nudges.discard(event.interjection_id)
            self._waiting_answer = event.interjection_id

    async def boundary(self, at: Boundary) -> None:
        """Write the task's summary; with an LLM extractor, start reading the turn for learnings.

        The extraction runs beside the task, never in its way: the task goes on at once and the
        learnings are stored when the model answers.
        """
        if self._waiting_answer and at.step > 0:
            self.answered, self._waiting_answer = self._waiting_answer, ""
        if self.turn_extractor is not None and self._turn:
            turn, self._turn = self._turn, []
            job = asyncio.get_running_loop().create_task(
                self._extract_turn(self.turn_extractor, turn), name=f"fleet-extract-{self.spec.name}"
            )
            self._extracting.add(job)
            job.add_done_callback(self._extracting.discard)
        self.journal.append(
            TaskTurn(
                session=self.spec.name,
                fleet=self.fleet,
                step=at.step,
                input_tokens=at.input_tokens,
                output_tokens=at.output_tokens,
                progress=self.progress,
                files_changed=self.files_changed,
                finding_count=self.finding_count,
                findings=tuple(self.findings),
                answered=self.answered,
            )
        )

    async def _extract_turn(self, extractor: TurnExtractor, turn: list[tuple[int, Observation, str]]) -> None:
        try:
            self._store(await extractor(self.spec.name, turn))
        except Exception:
            log.exception("fleet task %s: the LLM extractor failed", self.spec.name)

    async def close(self, grace_s: float = 5.0) -> None:
        """Let the running extractions finish (up to ``grace_s``), then cancel what is left."""
        if not self._extracting:
            return
        _, late = await asyncio.wait(set(self._extracting), timeout=grace_s)
        for job in late:
            job.cancel()
        await asyncio.gather(*late, return_exceptions=True)

    def _store(self, learnings: list[Learning]) -> None:
        for learning in learnings:
            if learning.id in self._known:
                continue
            self._known.add(learning.id)
            self.learned += 1
            self.journal.append(
                LearningExtracted(
                    session=learning.task,
                    fleet=self.fleet,
                    learning_id=learning.id,
                    text=learning.text,
                    source=learning.source,
                    urgency=learning.urgency,
                    observation=learning.observation,
                    tags=self.spec.tags,
                    directories=learning.directories,
                )
            )
