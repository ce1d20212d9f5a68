"""The watcher loop's cycle: snapshot every task from the journal, judge it, act, record the check.

A task younger than ``min_task_age_s`` is not judged; one that ended or vanished since the last
cycle is skipped. If the cycle fails (a rule or the configured evaluator raises) the loop says so,
falls back to the mechanical freshness checks (``judge.degraded``) for this cycle, and reports
degraded mode until a full cycle succeeds again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from watcher.fleet.actions import Actions
from watcher.fleet.follow import Follower
from watcher.fleet.judge import Recommendation, degraded, escalate, evaluate
from watcher.fleet.snapshot import Snapshot, TaskState
from watcher.fleet.tasks import FleetConfig
from watcher.runtime.events import DeliveryEvent, ObservationEvent, SessionEvent, TaskHealthCheck, TaskTurn

__all__ = ["Evaluator", "WatchCycle"]

log = logging.getLogger("watcher.fleet")

Evaluator = Callable[[Snapshot], Recommendation]
RECORD_EVERY = 10  # cycles between health checks of a task whose picture did not change
_ENDED = {"completed", "paused", "aborted", "failed", "cancelled", "max_steps", "ended"}


class WatchCycle:
    """One fleet's watcher: its task states and the cycle that judges them."""

    def __init__(
        self, config: FleetConfig, actions: Actions, follower: Follower, evaluator: Evaluator | None = None
    ) -> None:
        self.config = config
        self.actions = actions
        self.follower = follower
        self.evaluator = evaluator
        self.states: dict[str, TaskState] = {}
        self.degraded = False
        self.cycles = 0
        self.last_ok: float | None = None  # wall-clock time of the last full cycle (for people)
        self._last: dict[str, tuple[object, ...]] = {}  # what the last recorded check said, per task

    def track(self, task: str) -> None:
        """Start following ``task`` (its age counts from now, on the monotonic clock)."""
        self.states.setdefault(task, TaskState(task, file_tools=frozenset(self.config.file_tools)))

    async def run(self) -> None:
        """One cycle; a failure switches to degraded mode for this cycle (and is re-raised if that fails too)."""
        self.cycles += 1
        self.actions.stats.watcher_cycles = self.cycles
        await self._read()
        try:
            await self._judge_all(full=True)
        except Exception as exc:  # noqa: BLE001 - a failed cycle degrades, it does not stop supervision
            log.warning("fleet watcher cycle %d failed (%s: %s); degraded mode", self.cycles, type(exc).__name__, exc)
            self.degraded = True
            await self._judge_all(full=False)
            return
        self.degraded = False
        self.last_ok = time.time()

    async def _read(self) -> None:
        events = await self.follower.read(set(self.states), kinds={"observation", "task_turn", "session", "delivery"})
        for event in events:
            state = self.states.get(event.session)
            if state is None:
                continue
            if isinstance(event, SessionEvent):
                state.ended = state.ended or event.status in _ENDED
            elif isinstance(event, ObservationEvent | TaskTurn | DeliveryEvent):
                state.feed(event)

    async def _judge_all(self, *, full: bool) -> None:
        now = time.monotonic()
        cfg = self.config
        for name, state in list(self.states.items()):
            channel = self.actions.channels.get(name)
            if channel is None or channel.ended or state.ended:
                continue  # finished or vanished during the cycle: skipped, not an error
            if now - state.started < cfg.min_task_age_s:
                continue
            snap = state.snapshot(now, cfg.stale_after_s, cfg.very_stale_after_s)
            if channel.paused:
                self._record(snap, Recommendation("continue", "paused"), "paused", not full)
                continue
            if full:
                await self._act(state, snap, self._evaluate(snap, state), degraded=False)
                continue
            mechanical = degraded(snap)  # no ladder: a hint at most once per answered nudge, pause when very stale
            if mechanical.action == "nudge" and not state.answered:
                mechanical = Recommendation("continue", "degraded mode: the last nudge is not answered yet")
            await self._act(state, snap, mechanical, degraded=True)

    def _evaluate(self, snap: Snapshot, state: TaskState) -> Recommendation:
        if snap.progressed:
            state.nudges, state.flagged = 0, None  # it changed approach and it worked: the ladder restarts
        if snap.findings:
            state.flagged = snap.findings[-1]
        if self.evaluator is not None:
            return self.evaluator(snap)
        return evaluate(snap, flagged=state.flagged is not None, answered=state.answered)

    async def _act(self, state: TaskState, snap: Snapshot, recommendation: Recommendation, *, degraded: bool) -> None:
        cfg, actions, name = self.config, self.actions, state.name
        chosen = recommendation if degraded else escalate(recommendation, state.nudges, cfg.pause_after_nudges)
        if chosen.action == "nudge":
            state.nudges += 1
            state.sent_nudge(await actions.nudge(name, chosen.message, chosen.severity, count=state.nudges))
        elif chosen.action == "pause":
            await actions.pause(name, chosen.diagnosis)
        elif chosen.action == "abort":
            await actions.abort(name, chosen.diagnosis)
        health: str = snap.freshness
        if chosen.action == "pause":
            health = "paused"
        elif chosen.action == "continue":
            health = "healthy"
        elif snap.findings or state.flagged:
            health = "stuck"
        self._record(snap, chosen, health, degraded)

    def _record(self, snap: Snapshot, chosen: Recommendation, health: str, degraded: bool) -> None:
        """Journal the check when the task's picture changed, and every ``RECORD_EVERY`` cycles anyway.

        Health checks are the droppable events: a steady fleet of thousands of tasks does not
        write thousands of identical rows per cycle.
        """
        channel = self.actions.channels.get(snap.task)
        status = channel.status if channel is not None else "gone"
        key = (health, status, snap.freshness, chosen.action, self.states[snap.task].nudges, degraded)
        if self._last.get(snap.task) == key and self.cycles % RECORD_EVERY:
            return
        self._last[snap.task] = key
        self.actions.journal.append(
            TaskHealthCheck(
                session=snap.task,
                cycle=self.cycles,
                health="degraded" if degraded and health == "healthy" else health,
                status=status,
                freshness=snap.freshness,
                iteration=snap.iteration,
                tokens=snap.tokens,
                nudges=self.states[snap.task].nudges,
                idle_s=round(snap.idle_s, 2),
                recommendation=chosen.action,
                diagnosis=chosen.diagnosis,
                degraded=degraded,
            )
        )
