"""A judge function that exits, interrupts or floods fails its evaluation; the session it watches goes on.

Through the real runtime: asyncio ends its loop on a ``SystemExit`` or ``KeyboardInterrupt`` that
reaches a task, so one raised by a user's judge used to stop the watched session with it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest

from watcher.core.evaluation import EvaluationRequest
from watcher.core.observations import ToolCall, ToolResult
from watcher.core.spec import WatcherSpec
from watcher.evaluators import CallableEvaluator
from watcher.evaluators._llm import MAX_CONTENT_CHARS
from watcher.runtime.events import EvaluationEvent
from watcher.runtime.hub import Runtime
from watcher.runtime.session import RecordingSession

SPEC = WatcherSpec(name="judge", role="security", brief="b")


def exits(request: EvaluationRequest) -> str:
    sys.exit(3)


def interrupts(request: EvaluationRequest) -> str:
    raise KeyboardInterrupt


async def exits_async(request: EvaluationRequest) -> str:
    raise SystemExit(4)


async def watch(judge: Callable[[EvaluationRequest], Any]) -> tuple[list[EvaluationEvent], RecordingSession]:
    """One turn of a session watched by ``judge``: the evaluations and the session."""
    runtime, session = Runtime(), RecordingSession("agent")
    seen: list[EvaluationEvent] = []
    runtime.bus.subscribe("recorder", lambda e: seen.append(e) if isinstance(e, EvaluationEvent) else None)
    runtime.attach(SPEC, CallableEvaluator(judge), session)
    runtime.observe("agent", ToolCall(id="t", name="Bash", input={"command": "ls"}))
    runtime.observe("agent", ToolResult(tool_call_id="t", output="a.py"))
    await runtime.settle()
    await runtime.close()
    return seen, session


@pytest.mark.parametrize(
    ("judge", "said"),
    [(exits, "called exit(3)"), (exits_async, "called exit(4)"), (interrupts, "raised KeyboardInterrupt")],
)
async def test_a_judge_that_exits_fails_its_evaluation_only(
    judge: Callable[[EvaluationRequest], Any], said: str
) -> None:
    evaluations, session = await watch(judge)
    assert evaluations and all(e.decision == "continue" for e in evaluations)
    assert said in (evaluations[0].error or "") and "a judge returns its answer" in (evaluations[0].error or "")
    assert session.delivered == []


async def test_a_judge_that_floods_is_clipped_before_the_parent() -> None:
    _evaluations, session = await watch(lambda _r: "[INTERJECT]\ncontent: " + "x" * 1_000_000 + "\n[/INTERJECT]")
    (said,) = session.delivered
    assert len(said.content) < MAX_CONTENT_CHARS + 100 and said.content.endswith("more characters left out]")
