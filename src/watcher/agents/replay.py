"""Replaying a recorded transcript through watchers, as if it were happening live.

The runtime runs with ``live=False``: each watcher handles the observations in order and
evaluates at every breakpoint with exactly the observations up to it, so the evaluations are the
ones a live watcher would have made, in order, however fast the transcript is fed. Gaps between
timestamps longer than a watcher's idle timeout trigger its idle breakpoint, and the end of the
transcript is a breakpoint too (``session_end``): whatever is still buffered is judged.

``replay_sessions`` replays a file holding several sessions (runs appended to one file, a main
agent and its subagents): each session gets its own watchers, so one session's loop is never
blamed on another.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from watcher.core.evaluation import Evaluator
from watcher.core.observations import Observation
from watcher.core.spec import WatcherSpec
from watcher.runtime.events import EvaluationEvent, Event
from watcher.runtime.fates import DELIVERED, EDITED, Fate, Fates
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Journal
from watcher.runtime.session import RecordingSession

__all__ = ["ReplayResult", "replay", "replay_sessions"]

_SETTLE_EVERY = 1000

Watchers = Sequence[tuple[WatcherSpec, Evaluator]]


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """What a replay of one session produced: its observations, every evaluation and every
    interjection's fate; ``parent_session`` names the main session of a subagent."""

    session: str
    observations: tuple[Observation, ...]
    evaluations: tuple[EvaluationEvent, ...]
    fates: tuple[Fate, ...]
    parent_session: str | None = None

    @property
    def interjections(self) -> int:
        """Interjections the watchers made (capped ones not counted)."""
        return sum(fate.counted for fate in self.fates)

    @property
    def delivered(self) -> int:
        """Interjections that reached the replayed session."""
        return sum(fate.status in (DELIVERED, EDITED) for fate in self.fates)


async def replay(
    observations: Sequence[Observation],
    watchers: Watchers,
    *,
    session: str = "replay",
    journal: Journal | None = None,
) -> ReplayResult:
    """Run ``watchers`` over ``observations`` as one session; with ``journal``, record it all."""
    results = await replay_sessions({session: (None, observations)}, lambda _name: watchers, journal=journal)
    return results[0]


async def replay_sessions(
    sessions: Mapping[str, tuple[str | None, Sequence[Observation]]],
    watchers_for: Callable[[str], Watchers],
    *,
    journal: Journal | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> list[ReplayResult]:
    """Replay each session (name -> (parent session, observations)) with its own watchers.

    ``watchers_for(name)`` gives the watchers of one session: fresh evaluators per session keep
    a stateful evaluator's memory (a loop count) from leaking between sessions. ``on_progress``
    hears how many observations were replayed so far, every few hundred (a progress bar).
    """
    runtime = Runtime(journal=journal, live=False)
    evaluations: list[EvaluationEvent] = []
    fates = Fates()

    def collect(event: Event) -> None:
        fates.apply(event)
        if isinstance(event, EvaluationEvent):
            evaluations.append(event)

    runtime.bus.subscribe("replay", collect, maxsize=1_000_000)
    spans = []
    done = 0
    for name, (parent_name, observations) in sessions.items():
        first = len(evaluations)
        await _replay_one(runtime, name, parent_name, observations, watchers_for(name), on_progress, done)
        done += len(observations)
        spans.append((name, parent_name, observations, first, len(evaluations)))
    await runtime.close()
    every = tuple(fates)
    return [
        ReplayResult(
            name,
            tuple(observations),
            tuple(evaluations[first:last]),
            tuple(f for f in every if f.session == name),
            parent_name,
        )
        for name, parent_name, observations, first, last in spans
    ]


async def _replay_one(
    runtime: Runtime,
    session: str,
    parent_name: str | None,
    observations: Sequence[Observation],
    watchers: Watchers,
    on_progress: Callable[[int], None] | None = None,
    before: int = 0,
) -> None:
    parent = RecordingSession(session)
    detail = f"replay (subagent of {parent_name})" if parent_name else "replay"
    runtime.add_session(parent, detail=detail)
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
            if on_progress is not None:
                on_progress(before + count)
    await runtime.evaluate_session_end(parent)
    runtime.end_session(parent, detail="replay finished")
    await runtime.settle()  # every fate of this session folded in before the next session starts
    for watcher in attached:
        runtime.detach(watcher)
