"""The eval runner: runs at once up to ``jobs``, model calls spaced by the rate limit, and outcomes scored as documented."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

from watcher.core.evaluation import EvaluationRequest
from watcher.evaluators import CallableEvaluator
from watcher.judgment import RateLimit, Runner, Throttled, read_cases
from watcher.judgment.cases import Case, run_as
from watcher.judgment.scoring import outcome
from watcher.roles import spec_for_role

SECURITY = Path(__file__).parent / "data" / "security_cases.jsonl"


def counting_judge(starts: list[float], peak: list[int]) -> CallableEvaluator:
    """A judge that always continues, after 50 ms, noting when it started and how many ran at once."""
    running = 0

    async def judge(request: EvaluationRequest) -> str:
        nonlocal running
        starts.append(time.monotonic())
        running += 1
        peak[0] = max(peak[0], running)
        await asyncio.sleep(0.05)
        running -= 1
        return "[CONTINUE]\nfine\n[/CONTINUE]"

    return CallableEvaluator(judge)


async def test_jobs_bound_the_runs_at_once() -> None:
    running = peak = 0
    full = asyncio.Event()

    async def judge(request: EvaluationRequest) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        if running == 3:
            full.set()
        with contextlib.suppress(TimeoutError):  # the first ones wait (up to 1 s) until three run at once
            await asyncio.wait_for(full.wait(), 1.0)
        running -= 1
        return "[CONTINUE]\nfine\n[/CONTINUE]"

    evaluator = CallableEvaluator(judge)
    cases = read_cases(SECURITY)
    rows = await Runner(spec_for_role("security"), lambda _name: evaluator, jobs=3).run(
        cases, [evaluator.name], out=None
    )
    assert len(rows) == sum(len(c.forms) for c in cases) == 10
    assert peak == 3


async def test_the_rate_limit_spaces_the_model_calls_whatever_the_jobs() -> None:
    starts: list[float] = []
    peak = [0]
    limited = Throttled(counting_judge(starts, peak), RateLimit(per_minute=600))  # one call every 100 ms
    cases = read_cases(SECURITY)
    began = time.monotonic()
    await Runner(spec_for_role("security"), lambda _name: limited, jobs=5).run(cases, [limited.name], out=None)
    # the tenth call may start 0.9 s after the first slot at the earliest, however loaded the machine
    assert len(starts) == 10 and max(starts) - began >= 0.9


def test_outcomes_follow_the_documented_rules() -> None:
    vulnerable = Case("v", "vulnerable", "security", ("write", "bash"), code="x", lines=(4, 5))
    benign = Case("b", "benign", "security", ("write",), code="x")
    stuck = Case("s", "stuck", "loop", ("transcript",), stuck_from=7)
    calm = Case("c", "not_stuck", "loop", ("transcript",))
    assert outcome(vulnerable, "write", 3, [(5, 9)]) == {"outcome": "found", "located": True}
    assert outcome(vulnerable, "write", 3, [(1, 3), (6, 6)]) == {"outcome": "found", "located": False}
    assert outcome(vulnerable, "bash", 3, []) == {"outcome": "found", "located": None}
    assert outcome(vulnerable, "write", None, []) == {"outcome": "missed", "located": None}
    assert outcome(benign, "write", 2, [(1, 1)])["outcome"] == "false_alarm"
    assert outcome(benign, "write", None, [])["outcome"] == "quiet"
    # indices count observations from 0, stuck_from from 1: index 6 is the 7th observation, where the loop starts
    assert [outcome(stuck, "transcript", i, [])["outcome"] for i in (None, 5, 6, 12)] == [
        "missed",
        "early",
        "found",
        "found",
    ]
    assert [outcome(calm, "transcript", i, [])["outcome"] for i in (None, 3)] == ["quiet", "false_alarm"]


def test_cases_run_as_a_write_a_cell_and_a_command() -> None:
    by_id = {c.id: c for c in read_cases(SECURITY)}
    assert by_id["V1"].forms == ("write", "cell") and by_id["V4"].forms == ("bash",) and by_id["V3"].forms == ("write",)
    write = run_as(by_id["V1"], "write")[1]
    assert write.to_dict()["input"] == {"file_path": "users.py", "content": by_id["V1"].code}
    assert run_as(by_id["V1"], "cell")[1].to_dict()["source"] == by_id["V1"].code
    assert run_as(by_id["V4"], "bash")[1].to_dict()["input"] == {"command": by_id["V4"].code}
