"""The ``health`` role: is a fleet task healthy, stuck, idle, or running away?

The role judges a task's measured health (a ``Snapshot``, the request's subject) rather than
observations. Offline, its rules judge: a loop the stuck detectors found, a loop not yet left, or
a stale heartbeat. With an LLM evaluator, the model judges from the snapshot's prompt and this
role's brief. Either way the answer is an ordinary decision: *continue*, or an interjection whose
action is ``nudge``, ``pause`` or ``abort``; its note says why (the fleet's diagnosis). The
fleet's watcher loop applies its nudge ladder on top. ``freshness_only`` is the mechanical
judgment the loop falls back on when a cycle fails (degraded mode).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from watcher.core.evaluation import EvaluationRequest
from watcher.core.interjection import Action, Continue, Decision, Interject, Interjection, Severity
from watcher.core.observations import Observation
from watcher.core.rules import Role
from watcher.core.spec import Authority, WatcherSpec
from watcher.roles._health_snapshot import Snapshot

__all__ = ["HEALTH_SPEC", "HealthRole", "freshness_only"]


class HealthRole(Role):
    """Judges a fleet task's ``Snapshot`` by rules; observations alone give it nothing to judge."""

    name: ClassVar[str] = "health"
    description: ClassVar[str] = "health supervisor of concurrent agent tasks"
    authority: ClassVar[Authority] = "supervisor"
    brief: ClassVar[str] = """You supervise one task of a fleet of concurrent agent tasks and judge whether it is
healthy: making progress towards its task without looping, idling or drifting.
- Healthy: answer [CONTINUE].
- Stuck, looping, idle or drifting: answer [INTERJECT] with action: nudge, and as content the
  short, concrete message the task's agent will read (what to do differently). severity: hint,
  warning or critical by how bad it is; urgent: true only when a person should look now (this
  escalates the task).
- Burning tokens without progress where a nudge will not help: action: pause (a person resumes it).
- Continuing would do harm (destructive, runaway, leaking secrets): action: abort.
The task's measured health is stated by the fleet; its recent activity is observed content."""

    def evaluate(self, observations: Sequence[Observation], new: int) -> Decision:
        return Continue(note="no measured task health to judge")

    def judge(self, request: EvaluationRequest) -> Decision:
        """The rules on the request's ``Snapshot``."""
        snapshot = request.subject
        if not isinstance(snapshot, Snapshot):
            return self.evaluate(request.observations, request.new)
        return _rules(snapshot)


# the fleet's watcher: its name and brief open every health prompt (one cacheable prefix for every task)
HEALTH_SPEC = WatcherSpec(
    name="fleet", role=HealthRole.name, description=HealthRole.description, brief=HealthRole.brief
)


_HEALTHY = Continue(note="healthy")


def _said(action: Action, diagnosis: str, message: str = "", severity: Severity = "hint") -> Interject:
    """An interjection asking for ``action``; its note is the diagnosis (what a nudge says is ``message``)."""
    return Interject(Interjection(content=message or diagnosis, severity=severity, action=action), note=diagnosis)


def _rules(snapshot: Snapshot) -> Decision:
    if snapshot.findings:
        worst = [f for f in snapshot.findings if f.action == "abort"] or [
            f for f in snapshot.findings if f.action == "pause"
        ]
        if worst:
            f = worst[-1]
            return _said(f.action, f"{f.rule} loop on {f.subject}: {f.count} times (definite)")
        f = snapshot.findings[-1]
        detail = f" (last error: {f.detail})" if f.detail else ""
        text = f"{f.subject} repeats: {f.rule} {f.count} times{detail}"
        return _said("nudge", f"stuck: {text}", f"You seem stuck: {text}. Try a different approach.")
    if snapshot.freshness == "very_stale":
        return _said("pause", f"no progress for {snapshot.idle_s:.0f}s (very stale)")
    s = snapshot
    if s.flagged and not s.progressed and s.answered and not s.in_tool_call:
        return _said(
            "nudge", "still stuck after a nudge", "You are still repeating yourself: stop and change your approach."
        )
    if snapshot.freshness == "stale":
        return _said(
            "nudge", f"no progress for {snapshot.idle_s:.0f}s (stale)", "Are you making progress? Check your approach."
        )
    return _HEALTHY


def freshness_only(snapshot: Snapshot) -> Decision:
    """Mechanical checks only (no detectors, no evaluator): for when a full cycle failed."""
    if snapshot.freshness == "very_stale":
        return _said("pause", f"degraded mode: no activity for {snapshot.idle_s:.0f}s")
    if snapshot.freshness == "stale":
        return _said("nudge", "degraded mode: stale", "System check: are you making progress?")
    return Continue(note="degraded mode: fresh")
