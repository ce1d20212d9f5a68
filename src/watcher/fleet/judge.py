"""Judging one task's snapshot: the rules (stuck detectors, heartbeat freshness) and the nudge ladder.

``evaluate`` turns a snapshot into a ``Recommendation`` (continue, nudge, escalate, pause, abort);
an LLM evaluator may replace it (``Fleet(evaluator=...)``). ``escalate`` applies the ladder the
seed specifies to a nudge: a hint first, a warning on the 2nd and 3rd, critical after, and a pause
instead of a sixth nudge when five went unanswered. ``degraded`` is the mechanical fallback when
a cycle fails: freshness only (stale → a hint, very stale → pause).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from watcher.core.interjection import Severity
from watcher.fleet.snapshot import Snapshot

__all__ = ["Recommendation", "degraded", "escalate", "evaluate"]

Act = Literal["continue", "nudge", "escalate", "pause", "abort"]


@dataclass(frozen=True, slots=True)
class Recommendation:
    """What to do with a task, why, and (for a nudge) what to tell it."""

    action: Act
    diagnosis: str
    message: str = ""
    severity: Severity = "hint"


def _loop_text(snapshot: Snapshot) -> str:
    f = snapshot.findings[-1]
    detail = f" (last error: {f.detail})" if f.detail else ""
    return f"{f.subject} repeats: {f.rule} {f.count} times{detail}"


def evaluate(snapshot: Snapshot, *, flagged: bool, answered: bool) -> Recommendation:
    """The rules: a loop the stuck detectors found, a loop not yet left, or a stale heartbeat.

    ``flagged``: a loop was found earlier and the task has not progressed since; ``answered``: the
    task completed an iteration since its last nudge (so a repeat nudge is not sent before the
    previous one was even read).
    """
    worst = [f for f in snapshot.findings if f.action == "abort"] or [
        f for f in snapshot.findings if f.action == "pause"
    ]
    if worst:
        f = worst[-1]
        return Recommendation(f.action, f"{f.rule} loop on {f.subject}: {f.count} times (definite)")
    if snapshot.findings:
        text = _loop_text(snapshot)
        return Recommendation("nudge", f"stuck: {text}", f"You seem stuck: {text}. Try a different approach.")
    if snapshot.freshness == "very_stale":
        return Recommendation("pause", f"no progress for {snapshot.idle_s:.0f}s (very stale)")
    if flagged and not snapshot.progressed and answered and not snapshot.in_tool_call:
        return Recommendation(
            "nudge", "still stuck after a nudge", "You are still repeating yourself: stop and change your approach."
        )
    if snapshot.freshness == "stale":
        return Recommendation(
            "nudge", f"no progress for {snapshot.idle_s:.0f}s (stale)", "Are you making progress? Check your approach."
        )
    return Recommendation("continue", "healthy")


def escalate(recommendation: Recommendation, nudges: int, pause_after: int) -> Recommendation:
    """The ladder for a nudge given ``nudges`` unanswered ones so far; other actions pass unchanged."""
    if recommendation.action == "escalate":
        return Recommendation(
            "nudge", recommendation.diagnosis, recommendation.message or "Escalate: ask for help.", "critical"
        )
    if recommendation.action != "nudge":
        return recommendation
    if nudges >= pause_after:
        return Recommendation("pause", f"unresponsive after {nudges} nudges: {recommendation.diagnosis}")
    severity: Severity = "hint" if nudges == 0 else "warning" if nudges < 3 else "critical"
    return Recommendation("nudge", recommendation.diagnosis, recommendation.message, severity)


def degraded(snapshot: Snapshot) -> Recommendation:
    """Mechanical checks only (no detectors, no evaluator): for when a full cycle failed."""
    if snapshot.freshness == "very_stale":
        return Recommendation("pause", f"degraded mode: no activity for {snapshot.idle_s:.0f}s")
    if snapshot.freshness == "stale":
        return Recommendation("nudge", "degraded mode: stale", "System check: are you making progress?", "hint")
    return Recommendation("continue", "degraded mode: fresh")
