"""Engine and journal throughput: ``engine_obs_per_s`` and ``journal_events_per_s``.

engine_obs_per_s: observations per second through bus -> watcher buffer -> trivial evaluator ->
journal (every observation journaled, an evaluation at every tool result, all flushed to disk).
journal_events_per_s: batched journal writes alone, committed to disk.
"""

from __future__ import annotations

import asyncio
import platform
import tempfile
import time
from pathlib import Path

from watcher.core.observations import AssistantMessage, Observation, ToolCall, ToolResult
from watcher.core.spec import Triggers, WatcherSpec
from watcher.evaluators import CallableEvaluator
from watcher.runtime import Journal, RecordingSession, Runtime
from watcher.runtime.events import ObservationEvent


def _observations(n: int) -> list[Observation]:
    out: list[Observation] = []
    for i in range(n // 3):
        out.append(AssistantMessage(text=f"step {i}: listing the files"))
        out.append(ToolCall(id=f"t{i}", name="Bash", input={"command": f"ls dir{i % 50}"}))
        out.append(ToolResult(tool_call_id=f"t{i}", output="a.py b.py c.py"))
    return out


async def _engine(n: int, folder: Path) -> tuple[float, int]:
    journal = Journal(folder / "engine.sqlite3")
    runtime = Runtime(journal=journal, live=True)
    spec = WatcherSpec(name="trivial", role="bench", triggers=Triggers(on=frozenset({"tool_result"})))
    watcher = runtime.attach(spec, CallableEvaluator(lambda request: None), RecordingSession("bench"))
    observations = _observations(n)
    started = time.perf_counter()
    for i, obs in enumerate(observations):
        runtime.observe("bench", obs)
        if i % 500 == 0:
            await asyncio.sleep(0)  # a live parent yields to the loop now and then
    await runtime.settle()
    await asyncio.to_thread(journal.flush)
    elapsed = time.perf_counter() - started
    await runtime.close()
    journal.close()
    assert all(s.dropped == 0 for s in runtime.bus.subscriptions), "nothing may be dropped in the benchmark"
    return len(observations) / elapsed, watcher.evaluations


def _journal(n: int, folder: Path) -> float:
    journal = Journal(folder / "journal.sqlite3")
    events = [
        ObservationEvent(session="bench", observation=ToolResult(tool_call_id=str(i), output="ok"), index=i)
        for i in range(n)
    ]
    started = time.perf_counter()
    for event in events:
        journal.append(event)
    journal.flush()
    elapsed = time.perf_counter() - started
    assert journal.last_id() == n
    journal.close()
    return n / elapsed


def main() -> None:
    print(f"# {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rate, evaluations = asyncio.run(_engine(60_000, folder))
        print(
            f"BENCH engine_obs_per_s {rate:,.0f} obs/s  (target >= 50,000; {evaluations} evaluations)".replace(",", "")
        )
        print(
            f"BENCH journal_events_per_s {_journal(100_000, folder):,.0f} events/s  (target >= 20,000)".replace(",", "")
        )


if __name__ == "__main__":
    main()
