"""What supervising a fleet costs: one watcher cycle, one syncer cycle, memory per task, wall-time overhead.

    BENCH fleet_cycle_ms_1000     one watcher cycle (read summaries + snapshot + evaluate + act + record), 1,000 simulated tasks
    BENCH fleet_cycle_ms_10000    the same at 10,000 simulated tasks (target <= 100 ms), median of three steady cycles
    BENCH fleet_first_cycle_ms_10000  the first cycle that judges the 10,000 (it journals each task's first health check)
    BENCH syncer_cycle_ms         one syncer cycle with 1,000 new learnings across 1,000 simulated tasks (target <= 100 ms)
    BENCH fleet_bytes_per_task    memory the watcher loop keeps per task (target <= 50 KB)
    BENCH fleet_overhead_ratio    100 scripted agent runs against the stub: wall time supervised / unsupervised (target <= 1.10)

"Simulated tasks" are journal rows written as task hosts write them: every task announced
(``FleetTask``) and, before each measured cycle, one new summary (``TaskTurn``) per task — every
task moved since the last cycle, the worst case for the loop — of which 1 in 100 reports a new
loop finding and is nudged. The loops do their real work on those rows (journal reads, judging,
journaled nudges, relays). The overhead ratio runs real agent runs against the stub, with the
task side (detectors, learning extraction, summaries) included.
"""

from __future__ import annotations

import asyncio
import itertools
import tempfile
import time
import tracemalloc
from pathlib import Path

from watcher.agents import tool
from watcher.fleet import Fleet, FleetConfig, TaskSpec
from watcher.fleet.actions import Actions
from watcher.fleet.events import FleetTask, LearningExtracted, TaskTurn
from watcher.fleet.roster import Roster
from watcher.fleet.sync import SyncCycle
from watcher.fleet.watch import WatchCycle
from watcher.runtime.journal import Journal
from watcher.testing import RecordedRequest, Reply, StubAnthropicServer

CONFIG = FleetConfig(name="bench", min_task_age_s=0.0)
STUCK_EVERY = 100  # one task in this many reports a new loop finding each turn


def _announce(journal: Journal, names: list[str], tags: dict[str, tuple[str, ...]] | None = None) -> None:
    for name in names:
        journal.append(FleetTask(session=name, fleet=CONFIG.name, tags=(tags or {}).get(name, ())))
    journal.flush()


def _turn(journal: Journal, names: list[str], turn: int) -> None:
    for i, name in enumerate(names):
        stuck = i % STUCK_EVERY == 0
        finding = {"seq": turn, "rule": "repeat", "action": "nudge", "count": 3 + turn, "subject": "Bash `make`"}
        journal.append(
            TaskTurn(
                session=name,
                fleet=CONFIG.name,
                step=turn,
                input_tokens=100 * turn,
                output_tokens=20 * turn,
                progress=0 if stuck else turn,
                finding_count=turn if stuck else 0,
                findings=(finding,) if stuck else (),
            )
        )
    journal.flush()


async def _watch_cycle_ms(folder: Path, n: int, journal_at: Path | str | None = None) -> tuple[float, float, float]:
    """(steady cycle ms: median of three, first judgement ms, bytes kept per task); bench_pg passes a server's URL."""
    journal = Journal(journal_at or folder / f"watch{n}.sqlite3")
    names = [f"t{i}" for i in range(n)]
    _announce(journal, names)
    roster = Roster(CONFIG.name, journal)
    watch = WatchCycle(CONFIG, Actions(journal, roster), roster)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    _turn(journal, names, 1)
    await watch.run()  # first sight: the roster; the first summaries are its baseline (a fleet already running)
    kept = (tracemalloc.get_traced_memory()[0] - before) / n
    tracemalloc.stop()
    _turn(journal, names, 2)
    started = time.perf_counter()
    await watch.run()  # first judgement: every task's first health check is journaled (once per task)
    first = (time.perf_counter() - started) * 1000
    timings = []
    for turn in range(3, 6):
        _turn(journal, names, turn)
        started = time.perf_counter()
        await watch.run()
        timings.append((time.perf_counter() - started) * 1000)
    nudged = watch.actions.stats.nudges_sent
    assert nudged == 4 * (n // STUCK_EVERY), nudged  # the stuck ones, in each judging cycle; no one else
    journal.close()
    return sorted(timings)[1], first, kept


async def _sync_cycle_ms(folder: Path) -> float:
    journal = Journal(folder / "sync.sqlite3")
    names = [f"t{i}" for i in range(1000)]
    _announce(journal, names, {n: (f"group{i // 10}",) for i, n in enumerate(names)})
    roster = Roster(CONFIG.name, journal)
    actions = Actions(journal, roster)
    sync = SyncCycle(FleetConfig(name=CONFIG.name, sync_rate_limit=1000), actions, roster)
    await sync.run()  # warm: the roster and who is related to whom
    for i, name in enumerate(names):
        text = f"Note: found that service {i} needs a token."
        journal.append(
            LearningExtracted(
                session=name,
                fleet=CONFIG.name,
                learning_id=f"L{i}",
                text=text,
                source="assistant_text",
                urgency="helpful",
                observation=0,
                tags=(f"group{i // 10}",),
            )
        )
    journal.flush()
    started = time.perf_counter()
    await sync.run()
    elapsed = (time.perf_counter() - started) * 1000
    assert actions.stats.learnings == 1000 and actions.stats.syncs_relayed == 9000, actions.stats
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
        ms_1k, _, _ = await _watch_cycle_ms(folder, 1000)
        print(f"BENCH fleet_cycle_ms_1000 {ms_1k:.1f} ms (simulated tasks)")
        ms_10k, first_10k, per_task = await _watch_cycle_ms(folder, 10_000)
        print(f"BENCH fleet_cycle_ms_10000 {ms_10k:.1f} ms (simulated tasks)")
        print(
            f"BENCH fleet_first_cycle_ms_10000 {first_10k:.1f} ms (simulated tasks: the first judgement of each task)"
        )
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
