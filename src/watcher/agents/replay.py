"""Replaying a recorded transcript through watchers, as if it were happening live.

Observations are published one at a time and each breakpoint is evaluated before the next
observation arrives, so the evaluations are the ones a live watcher would have made, in order.
Gaps between timestamps longer than a watcher's idle timeout trigger its idle breakpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from watcher.core.evaluation import Evaluator
from watcher.core.observations import Observation
from watcher.core.spec import WatcherSpec
from watcher.runtime.events import EvaluationEvent, Event
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Journal
from watcher.runtime.session import RecordingSession

__all__ = ["ReplayResult", "replay"]


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """What a replay produced: the session name, observations and every evaluation in order."""

    session: str
    observations: tuple[Observation, ...]
    evaluations: tuple[EvaluationEvent, ...]
    delivered: int


async def replay(
    observations: Sequence[Observation],
    watchers: Sequence[tuple[WatcherSpec, Evaluator]],
    *,
    session: str = "replay",
    journal: Journal | None = None,
) -> ReplayResult:
    """Run ``watchers`` over ``observations``; with ``journal``, record it all like a live session."""
    runtime = Runtime(journal=journal, live=False)
    parent = RecordingSession(session)
    runtime.add_session(parent, detail="replay")
    evaluations: list[EvaluationEvent] = []

    def collect(event: Event) -> None:
        if isinstance(event, EvaluationEvent):
            evaluations.append(event)

    runtime.bus.subscribe("replay", collect, maxsize=1_000_000)
    attached = [runtime.attach(spec, evaluator, parent) for spec, evaluator in watchers]
    previous_ts: float | None = None
    for obs in observations:
        if obs.ts is not None and previous_ts is not None:
            for watcher in attached:
                idle = watcher.spec.triggers.idle_s
                if idle is not None and obs.ts - previous_ts >= idle and watcher.unevaluated:
                    await watcher.evaluate("idle")
        previous_ts = obs.ts if obs.ts is not None else previous_ts
        runtime.observe(session, obs)
        await runtime.settle()
    parent.end()
    runtime.end_session(parent, "ended", detail="replay finished")
    await runtime.close()
    return ReplayResult(session, tuple(observations), tuple(evaluations), len(parent.delivered))
