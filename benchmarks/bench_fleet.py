"""What supervising a fleet costs: one watcher cycle, one syncer cycle, memory per task, wall-time overhead.

    BENCH fleet_cycle_ms_1000     one watcher cycle (journal read + snapshot + evaluate + act + record), 1,000 simulated tasks
    BENCH fleet_cycle_ms_10000    the same at 10,000 simulated tasks (target <= 100 ms)
    BENCH syncer_cycle_ms         one syncer cycle with 1,000 new learnings across 1,000 simulated tasks (target <= 100 ms)
    BENCH fleet_bytes_per_task    memory the watcher loop keeps per task (target <= 50 KB)
    BENCH fleet_overhead_ratio    100 scripted agent runs against the stub: wall time supervised / unsupervised (target <= 1.10)

"Simulated tasks" are journal rows written as agent runs write them (three observations and a
heartbeat per task per cycle), with channels that accept deliveries without an agent behind them:
the loops do their real work on them. The overhead ratio runs real agent runs against the stub.
"""

from __future__ import annotations

import asyncio
import itertools
import tempfile
import time
import tracemalloc
from pathlib import Path

from watcher.agents import tool
from watcher.core.interjection import Interjection, Origin
from watcher.core.observations import AssistantMessage, ToolCall, ToolResult
from watcher.fleet import Fleet, FleetConfig, TaskSpec
from watcher.fleet.actions import Actions
from watcher.fleet.channel import TaskChannel
from watcher.fleet.follow import Follower
from watcher.fleet.sync import SyncCycle
from watcher.fleet.watch import WatchCycle
from watcher.runtime.events import ObservationEvent, TaskTurn
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Journal
from watcher.testing import RecordedRequest, Reply, StubAnthropicServer

CONFIG = FleetConfig(min_task_age_s=0.0)


class SimulatedChannel(TaskChannel):
    """A channel with no agent behind it: deliveries are counted (simulated tasks)."""

    delivered = 0

    @property
    def ended(self) -> bool:
        return False

    async def deliver(self, interjection: Interjection, origin: Origin) -> str:
        SimulatedChannel.delivered += 1
        return "queued"


def _write(journal: Journal, names: list[str], turn: int, text: str = "Reading the next file.") -> None:
    for name in names:
        call = f"{name}-{turn}"
        for index, obs in enumerate(
            (
                AssistantMessage(text=text),
                ToolCall(id=call, name="Read", input={"path": f"src/{name}/f{turn}.py"}),
                ToolResult(tool_call_id=call, output=f"contents of f{turn}.py"),
            )
        ):
            journal.append(ObservationEvent(session=name, observation=obs, index=turn * 3 + index))
        journal.append(TaskTurn(session=name, step=turn, input_tokens=100 * turn, output_tokens=20 * turn))
    journal.flush()


def _fleet_parts(journal: Journal, names: list[str]) -> tuple[Actions, dict[str, TaskChannel]]:
    runtime = Runtime(journal=journal)
    channels: dict[str, TaskChannel] = {n: SimulatedChannel(n, runtime) for n in names}
    return Actions(journal, channels), channels


async def _watch_cycle_ms(folder: Path, n: int) -> tuple[float, float]:
    journal = Journal(folder / f"watch{n}.sqlite3")
    names = [f"t{i}" for i in range(n)]
    actions, _ = _fleet_parts(journal, names)
    watch = WatchCycle(CONFIG, actions, Follower(journal))
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for name in names:
        watch.track(name)
    _write(journal, names, 0)
    await watch.run()  # warm: first reads
    kept = (tracemalloc.get_traced_memory()[0] - before) / n
    tracemalloc.stop()
    timings = []
    for turn in range(1, 4):
        _write(journal, names, turn)
        started = time.perf_counter()
        await watch.run()
        timings.append((time.perf_counter() - started) * 1000)
    journal.close()
    return min(timings), kept


async def _sync_cycle_ms(folder: Path) -> float:
    journal = Journal(folder / "sync.sqlite3")
    names = [f"t{i}" for i in range(1000)]
    specs = {n: TaskSpec(n, "p", tags=(f"group{i // 10}",)) for i, n in enumerate(names)}
    actions, _ = _fleet_parts(journal, names)
    config = FleetConfig(sync_rate_limit=1000)
    sync = SyncCycle(config, actions, Follower(journal), specs)
    for turn, name in enumerate(names):
        journal.append(
            ObservationEvent(
                session=name,
                observation=AssistantMessage(text=f"Note: found that service {turn} needs a token."),
                index=0,
            )
        )
    journal.flush()
    started = time.perf_counter()
    await sync.run()
    elapsed = (time.perf_counter() - started) * 1000
    assert actions.stats.learnings == 1000, actions.stats
    journal.close()
    return elapsed


def _read(path: str) -> str:
    """Read a file.

    Args:
        path: the file
    """
    return f"contents of {path}"


def _reply(request: RecordedRequest) -> Reply:
    turns = sum(1 for m in (request.body or {})["messages"] if m["role"] == "assistant")
    if turns >= 3:
        return Reply.text("Done.")
    return Reply.tool_use("Read", {"path": f"src/f{turns}.py"}, text="Reading.", delay_s=0.02)


async def _fleet_wall_s(folder: Path, supervised: bool) -> float:
    # intervals 30x and 30x shorter than the defaults (30 s, 15 s), so the loops run many times in a few seconds
    config = FleetConfig(supervision=supervised, watch_interval_s=1.0, sync_interval_s=0.5, min_task_age_s=0.0)
    specs = [TaskSpec(f"t{i}", f"task {i}", tools=(tool(_read, name="Read"),)) for i in range(100)]
    with StubAnthropicServer(*itertools.repeat(Reply.dynamic(_reply), 1000)) as stub:
        fleet = Fleet(
            specs, config=config, journal=folder / f"wall{supervised}.sqlite3", base_url=stub.base_url, api_key="b"
        )
        started = time.perf_counter()
        results = await fleet.run()
        elapsed = time.perf_counter() - started
    assert all(getattr(r, "status", "") == "completed" for r in results.values()), results
    return elapsed


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ms_1k, _ = await _watch_cycle_ms(folder, 1000)
        print(f"BENCH fleet_cycle_ms_1000 {ms_1k:.1f} ms (simulated tasks)")
        ms_10k, per_task = await _watch_cycle_ms(folder, 10_000)
        print(f"BENCH fleet_cycle_ms_10000 {ms_10k:.1f} ms (simulated tasks)")
        print(f"BENCH fleet_bytes_per_task {per_task:.0f} bytes (simulated tasks)")
        print(f"BENCH syncer_cycle_ms {await _sync_cycle_ms(folder):.1f} ms (simulated tasks)")
        await _fleet_wall_s(folder, False)  # warm-up (imports, first connections), not counted
        plain: list[float] = []
        watched: list[float] = []
        for _ in range(3):  # interleaved, so drift on a shared machine hits both sides
            plain.append(await _fleet_wall_s(folder, False))
            watched.append(await _fleet_wall_s(folder, True))
        plain_s, watched_s = sorted(plain)[1], sorted(watched)[1]
        ratio = watched_s / plain_s
        print(
            f"BENCH fleet_overhead_ratio {ratio:.3f} ratio (medians: {watched_s:.2f}s supervised / {plain_s:.2f}s plain)"
        )


if __name__ == "__main__":
    asyncio.run(main())
