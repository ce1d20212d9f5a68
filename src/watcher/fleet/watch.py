"""The watcher loop's cycle: read each task's newest summary from the journal, judge it, act, record.

Per cycle the loop reads one summary row per task that moved (``Journal.latest``) and judges the
tasks that moved, are flagged, were nudged, or whose heartbeat went stale; a quiet healthy task
costs a comparison. A task younger than ``min_task_age_s`` is not judged; one that ended or
vanished since the last cycle is skipped. Each task is judged by the ``health`` role through its
evaluator (``judges.Judge``: the rules, or the configured LLM) and the nudge ladder applies
(``ladder.escalate``). If the cycle fails (a rule or the evaluator raises something other than
an ``EvaluationError``) the loop says so, falls back to the mechanical freshness checks
(``roles.health.freshness_only``) for this cycle, and reports degraded mode until a full cycle
succeeds again. A health check is journaled when a task's picture changes, not every cycle: a
steady fleet of thousands of tasks writes nothing.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from watcher.core.evaluation import Evaluator
from watcher.core.logs import logger
from watcher.fleet.actions import Actions
from watcher.fleet.events import TaskHealthCheck
from watcher.fleet.judges import Judge
from watcher.fleet.ladder import Recommendation, escalate, recommendation
from watcher.fleet.roster import Member, Roster
from watcher.fleet.snapshot import Snapshot, TaskState, recent
from watcher.fleet.tasks import FleetConfig
from watcher.roles.health import freshness_only

__all__ = ["WatchCycle"]

log = logger("watcher.fleet")

CONCURRENT_EVALUATIONS = 8
HEALTHY = ("healthy", "running", "fresh", "continue", 0, False)  # the recorded check of a task going well


class WatchCycle:
    """One fleet's watcher: its task states and the cycle that judges them.

    ``evaluator`` is the ``health`` role's evaluator (None: its rules).
    """

    def __init__(
        self, config: FleetConfig, actions: Actions, roster: Roster, evaluator: Evaluator | None = None
    ) -> None:
        self.config = config
        self.actions = actions
        self.roster = roster
        self.judge = Judge(evaluator)
        self.states: dict[str, TaskState] = {}
        self.degraded = False
        self.cycles = 0
        self.last_ok: float | None = None  # wall-clock time of the last full cycle (for people)
        self._after = roster.after  # summaries read up to this journal id
        self._last: dict[str, tuple[object, ...]] = {}  # what the last recorded check said, per task
        self._tracked: dict[str, Member] = {}  # the roster member each state pictures
        self._tracked_version = -1

    @property
    def evaluator_failures(self) -> int:
        """Judgments that failed closed so far (the evaluator gave no usable answer)."""
        return self.judge.failures

    async def run(self) -> None:
        """One cycle; a failure switches to degraded mode for this cycle (and is re-raised if that fails too)."""
        self.cycles += 1
        self.actions.stats.watcher_cycles = self.cycles
        await self.roster.refresh()
        if lost := self.roster.silent(self.config.host_lost_s):  # a dead host's tasks are lost, not stuck
            named = ", ".join(lost[:10]) + (f" and {len(lost) - 10} more" if len(lost) > 10 else "")
            log.warning(
                "fleet tasks lost (their host has been silent for over %gs): %s", self.config.host_lost_s, named
            )
            for task in lost:
                await self.actions.lose(task, self.config.host_lost_s, commit=False)
            await self.actions.commit()  # one commit for a host's thousand tasks
        if self.cycles == 1:
            await self._recall()
        await self._read()
        try:
            await self._judge_all(full=True)
        except Exception as exc:  # noqa: BLE001 - a failed cycle degrades, it does not stop supervision
            log.warning("fleet watcher cycle %d failed (%s: %s); degraded mode", self.cycles, type(exc).__name__, exc)
            self.degraded = True
            await self._judge_all(full=False)
            return
        self.degraded = False
        self.last_ok = self.roster.clock.time()

    async def _recall(self) -> None:
        """Pick up a fleet already running (a supervisor restarted): baselines and the nudge ladder.

        Each task's newest summary becomes its baseline (not news), and a task this fleet nudged
        keeps its place on the ladder (the count of its last nudge) until its next progress.
        """
        journal = self.actions.journal
        upto = await asyncio.to_thread(journal.last_id)
        if upto <= self._after:
            return
        self._track()
        # a task announced again (its fleet run again) starts afresh: rows before its newest announcement are not its
        begun = {
            session: id_
            for id_, session, task in await asyncio.to_thread(journal.latest, "fleet_task", self._after, upto=upto)
            if task.get("fleet") == self.config.name
        }
        for id_, session, summary in await asyncio.to_thread(journal.latest, "task_turn", self._after, upto=upto):
            if session in self.states and id_ > begun.get(session, 0):
                self.states[session].prime(summary)
        nudges = await asyncio.to_thread(journal.read, self._after, limit=1_000_000, kinds=("watcher_nudge",))
        for row in nudges:
            state = self.states.get(row.session)
            if row.id < begun.get(row.session, 0):
                continue
            if state is not None and row.payload.get("fleet") == self.config.name and row.payload.get("by") == "fleet":
                state.nudges = int(row.payload.get("count") or 0)
                state.sent_nudge(str(row.payload.get("interjection_id") or ""))
        self._after = upto

    def _track(self) -> None:
        """A state for each task that joined, and a fresh one for a task run again (its old picture is gone)."""
        if self._tracked_version == self.roster.version:
            return
        self._tracked_version = self.roster.version
        for name, member in self.roster.members.items():
            if self._tracked.get(name) is not member:
                self._tracked[name] = member
                self.states[name] = TaskState(name, started=member.seen, last_progress=member.seen)
                self._last.pop(name, None)

    async def _read(self) -> None:
        # one query: every summary written since the last read is visible now or lies past the newest one
        # read (a journal's positions grow in the order rows become visible), so that one is the next cursor
        rows = await asyncio.to_thread(self.actions.journal.latest, "task_turn", self._after)
        self._after = max((id_ for id_, _, _ in rows), default=self._after)
        self._track()
        states = self.states
        for _, session, summary in rows:
            state = states.get(session)
            if state is not None:
                state.take(summary)

    async def _judge_all(self, *, full: bool) -> None:
        now = self.roster.clock.monotonic()
        cfg, members = self.config, self.roster.members
        judged: list[tuple[TaskState, Snapshot]] = []
        routine = self.judge.rules and full  # the rules may pass a task that only moved on
        for name, state in self.states.items():
            member = members[name]
            if member.ended:
                continue  # finished or vanished during the cycle: skipped, not an error
            if member.paused:
                state.last_progress = now  # a held task is not idle: its heartbeat counts again from its resume
                state.nudges, state.flagged = 0, None  # and a resumed task starts a new ladder
                snap = state.snapshot(now, cfg.stale_after_s, cfg.very_stale_after_s)  # kept current, not judged
                self._record(snap, Recommendation("continue", "paused"), "paused", not full)
                continue
            if now - state.started < cfg.min_task_age_s or state.quiet(now, cfg.stale_after_s):
                continue
            if routine and self._last.get(name) == HEALTHY and state.routine(now, cfg.stale_after_s):
                continue
            judged.append((state, state.snapshot(now, cfg.stale_after_s, cfg.very_stale_after_s, judged=full)))
        if not full:
            for state, snap in judged:
                # no ladder: a hint at most once per answered nudge, pause when very stale
                mechanical = recommendation(freshness_only(snap))
                if mechanical.action == "nudge" and not state.answered:
                    mechanical = Recommendation("continue", "degraded mode: the last nudge is not answered yet")
                await self._act(state, snap, mechanical, degraded=True)
            await self.actions.commit()
            return
        verdicts = await self._evaluate_all(judged)
        for (state, snap), verdict in zip(judged, verdicts, strict=True):
            await self._act(state, snap, verdict, degraded=False)
        await self.actions.commit()  # the cycle's decisions, committed once

    async def _evaluate_all(self, judged: list[tuple[TaskState, Snapshot]]) -> list[Recommendation]:
        if self.judge.rules:  # offline and instant: one after another
            return [await self.judge(snap) for _, snap in judged]
        gate = asyncio.Semaphore(CONCURRENT_EVALUATIONS)

        async def one(snap: Snapshot) -> Recommendation:
            async with gate:  # a model is shown the task's recent activity too
                tools, conversation, in_call = await asyncio.to_thread(recent, self.actions.journal, snap.task)
                return await self.judge(
                    replace(snap, recent_tools=tools, recent_conversation=conversation, in_tool_call=in_call)
                )

        return list(await asyncio.gather(*(one(snap) for _, snap in judged)))

    async def _act(self, state: TaskState, snap: Snapshot, recommendation: Recommendation, *, degraded: bool) -> None:
        cfg, actions, name = self.config, self.actions, state.name
        chosen = recommendation if degraded else escalate(recommendation, state.nudges, cfg.pause_after_nudges)
        if chosen.action == "nudge":
            state.nudges += 1
            iid = await actions.nudge(name, chosen.message, chosen.severity, count=state.nudges, commit=False)
            state.sent_nudge(iid)
        elif chosen.action == "pause":
            await actions.pause(name, chosen.diagnosis, commit=False)
        elif chosen.action == "abort":
            await actions.abort(name, chosen.diagnosis, commit=False)
        health: str = snap.freshness
        if chosen.action == "pause":
            health = "paused"
        elif chosen.action == "continue":
            health = "healthy"
        elif snap.findings or state.flagged:
            health = "stuck"
        self._record(snap, chosen, health, degraded)

    def _record(self, snap: Snapshot, chosen: Recommendation, health: str, degraded: bool) -> None:
        """Journal the check when the task's picture changed (health checks are the droppable events).

        A task first judged healthy writes nothing: readers take a task with summaries and no
        check, under running loops, as healthy; ten thousand tasks do not write ten thousand rows.
        """
        status = self.roster.status(snap.task)
        nudges = self.states[snap.task].nudges
        key = (health, status, snap.freshness, chosen.action, nudges, degraded)
        last = self._last.get(snap.task)
        self._last[snap.task] = key
        if last == key or (last is None and key == HEALTHY):
            return  # unchanged, or a task found healthy at its first judgement (what readers assume)
        self.actions.journal.append(
            TaskHealthCheck(
                session=snap.task,
                fleet=self.config.name,
                cycle=self.cycles,
                health="degraded" if degraded and health == "healthy" else health,
                status=status,
                freshness=snap.freshness,
                iteration=snap.iteration,
                tokens=snap.tokens,
                nudges=nudges,
                idle_s=round(snap.idle_s, 2),
                recommendation=chosen.action,
                diagnosis=chosen.diagnosis,
                degraded=degraded,
            )
        )
