"""Replaying a recorded transcript through watchers, as if it were happening live.

The runtime runs with ``live=False``: each watcher handles the observations in order and
evaluates at every breakpoint with exactly the observations up to it, so the evaluations are the
ones a live watcher would have made, in order, however fast the transcript is fed. Gaps between
timestamps longer than a watcher's idle timeout trigger its idle breakpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from watcher.core.evaluation import Evaluator
from watcher.core.observations import Observation
from watcher.core.spec import WatcherSpec
from watcher.runtime.events import EvaluationEvent, Event
from watcher.runtime.fates import Fate, Fates
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Journal
from watcher.runtime.session import RecordingSession

__all__ = ["ReplayResult", "replay"]

_SETTLE_EVERY = 1000


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """What a replay produced: the session name, observations, every evaluation and every interjection's fate."""

    session: str
    observations: tuple[Observation, ...]
    evaluations: tuple[EvaluationEvent, ...]
    fates: tuple[Fate, ...]

    @property
    def interjections(self) -> int:
        """Interjections the watchers made (capped ones not counted)."""
        return sum(fate.counted for fate in self.fates)

    @property
    def delivered(self) -> int:
        """Interjections that reached the replayed session."""
        return sum(fate.status in ("delivered", "edited") for fate in self.fates)


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
    fates = Fates()

    def collect(event: Event) -> None:
        fates.apply(event)
        if isinstance(event, EvaluationEvent):
            evaluations.append(event)

    runtime.bus.subscribe("replay", collect, maxsize=1_000_000)
    attached = [runtime.attach(spec, evaluator, parent) for spec, evaluator in watchers]
    idle_watchers = [w for w in attached if w.spec.triggers.idle_s is not None]
    previous_ts: float | None = None
    for count, obs in enumerate(observations, start=1):
        if idle_watchers and obs.ts is not None and previous_ts is not None:
            await runtime.settle()  # the idle check needs every earlier observation handled
            for watcher in idle_watchers:
                idle = watcher.spec.triggers.idle_s
                if idle is not None and obs.ts - previous_ts >= idle and watcher.unevaluated:
                    await watcher.evaluate("idle")
        previous_ts = obs.ts if obs.ts is not None else previous_ts
        runtime.observe(session, obs)
        if count % _SETTLE_EVERY == 0:
            await runtime.settle()  # keep the watchers' queues well under the bus bound: nothing dropped
    await runtime.settle()
    parent.end()
    runtime.end_session(parent, "ended", detail="replay finished")
    await runtime.close()
    return ReplayResult(session, tuple(observations), tuple(evaluations), tuple(fates))
