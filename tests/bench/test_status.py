"""Step status, drift score and wrong-read streak on hand-made worlds (tests/bench/data/steps.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from watcher.bench.tools import Tracker, execute
from watcher.bench.world import World

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
