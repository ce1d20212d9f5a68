"""Step status, drift score and wrong-read streak on hand-made worlds (tests/bench/data/steps.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from watcher.bench.tools import Tracker, execute
from watcher.bench.world import World, generate_world

DATA = json.loads((Path(__file__).parent / "data" / "steps.json").read_text())
ARG = {"read_file": "path", "list_dir": "path", "submit_answer": "answer", "grep": "path"}


def _world(name: str) -> World:
    w = DATA["worlds"][name]
    return World(task=0, seed=0, files=w["files"], chain=tuple(w["chain"]), token=w["token"])


@pytest.mark.parametrize("case", DATA["cases"], ids=[c["name"] for c in DATA["cases"]])
def test_status_drift_and_streak(case: dict[str, Any]) -> None:
    world = _world(case["world"])
    tracker = Tracker(world)
    for tool, value, status, drift, streak in case["steps"]:
        args = {ARG[tool]: value}
        step = tracker.judge(tool, args, execute(world, tool, args))
        assert (step.status, step.drift, step.wrong_streak) == (status, drift, streak), f"{tool} {value}"
        assert step.deviating == (status != "OK" and drift > 0)


def test_expected_step_moves_along_the_chain() -> None:
    world = _world("three")
    tracker = Tracker(world)
    seen = []
    for path in world.chain:
        seen.append(tracker.expected)
        tracker.judge("read_file", {"path": path}, execute(world, "read_file", {"path": path}))
    assert seen == list(world.chain)
    assert tracker.expected == "submit_answer"


def test_tools_answer_bad_calls_with_a_message() -> None:
    world = _world("three")
    assert execute(world, "read_file", {}).is_error
    assert "no such file" in execute(world, "read_file", {"path": "alpha/nope.log"}).text
    assert execute(world, "list_dir", {"path": ""}).text.splitlines() == ["alpha/", "beta/", "delta/", "gamma/"]
    assert execute(world, "list_dir", {"path": "gamma"}).text.splitlines() == ["trace_299.log", "trace_300.log"]
    assert execute(world, "submit_answer", {"answer": " TOKEN-ABCDEF "}).answer == "TOKEN-ABCDEF"


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 1000),
    moves=st.lists(st.tuples(st.sampled_from(["chain", "any", "ghost", "list"]), st.integers(0, 50)), max_size=40),
)
def test_status_invariants_on_generated_worlds(seed: int, moves: list[tuple[str, int]]) -> None:
    world = generate_world(seed, 0, 6, 3)
    files, dirs = sorted(world.files), sorted({p.split("/")[0] for p in world.files})
    tracker = Tracker(world)
    for kind, k in moves:
        before_progress, before_drift = tracker.progress, tracker.drift
        if kind == "list":
            name, args = "list_dir", {"path": dirs[k % len(dirs)]}
        else:
            path = {
                "chain": world.chain[k % len(world.chain)],
                "any": files[k % len(files)],
                "ghost": f"omega/trace_{k:03d}.log",
            }[kind]
            name, args = "read_file", {"path": path}
        step = tracker.judge(name, args, execute(world, name, args))
        assert tracker.progress >= before_progress
        assert (tracker.progress > before_progress) == (step.status == "OK" and name == "read_file")
        if step.status == "OK":
            assert step.drift == 0 and step.wrong_streak == 0
        assert step.wrong_streak <= step.drift
        assert step.drift in (0, before_drift + 1)
        if kind == "ghost":
            assert step.status == "OFF" and step.drift == before_drift + 1
