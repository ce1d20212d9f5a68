"""The watcher intervention loop, through the real SDKs against the simulated servers.

The cap releases the pause; watcher steps count against the step limit; a watcher that answers
500 or never answers leaves the run going (fail closed); guidance reaches the agent as a
``[SUPERVISOR]: ...`` user message after the tool result; the snapshot is minimal at first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from watcher.bench.agent import ChatAgent, MessagesAgent, PrimaryAgent
from watcher.bench.policies import SimParams
from watcher.bench.run import TaskResult, run_task
from watcher.bench.simulated import AGENT_MODEL, WATCHER_MODEL, SimulatedChatServer, SimulatedMessagesServer
from watcher.bench.supervisor import Supervisor, WatcherMode, rules_evaluator
from watcher.bench.world import World, generate_world
from watcher.core.evaluation import EvaluationRequest
from watcher.evaluators.anthropic import AnthropicEvaluator
from watcher.evaluators.callable import CallableEvaluator
from watcher.evaluators.openai_compat import OpenAICompatEvaluator


def _chat(server: SimulatedChatServer) -> ChatAgent:
    return ChatAgent(model=AGENT_MODEL, base_url=server.base_url)


def _watcher(server: SimulatedChatServer, mode: WatcherMode = "guided", timeout: float = 10.0) -> Supervisor:
    if mode == "rules":
        return Supervisor("rules", rules_evaluator())
    evaluator = OpenAICompatEvaluator(
        model=WATCHER_MODEL, base_url=server.base_url, timeout=timeout, max_retries=0, recent=60
    )
    return Supervisor(mode, evaluator, timeout=timeout)


async def _go(world: World, agent: PrimaryAgent, supervisor: Supervisor | None, **kwargs: Any) -> TaskResult:
    """``run_task``, then close both clients (their connections must not outlive the test)."""
    try:
        return await run_task(world, agent, supervisor, **kwargs)
    finally:
        await agent.aclose()
        if supervisor is not None:
            await supervisor.aclose()


@pytest.fixture
def stubborn() -> Iterator[SimulatedChatServer]:
    """An agent that always errs and never heeds its supervisor."""
    with SimulatedChatServer(SimParams(follow=0.0, heed=0.0, recover=0.0), keep_requests=True) as server:
        yield server


async def test_the_cap_releases_the_pause(stubborn: SimulatedChatServer) -> None:
    world = generate_world(1, 0, 4, 3)
    result = await _go(world, _chat(stubborn), _watcher(stubborn), condition="guided", max_steps=30, retry_cap=2)
    assert not result.success and result.end == "max_steps"
    assert result.cap_releases >= 2
    # never more than two interventions in a row for one deviating step: the agent goes on alone after them
    assert "SWSWS" not in result.trace.replace("X", "W")
    assert re.search(r"S[WX]S[WX][WX]", result.trace), result.trace
    assert result.interventions == result.trace.count("S") == result.watcher_steps


async def test_a_cap_of_zero_means_no_intervention(stubborn: SimulatedChatServer) -> None:
    world = generate_world(1, 0, 4, 3)
    result = await _go(world, _chat(stubborn), _watcher(stubborn), condition="guided", max_steps=12, retry_cap=0)
    assert result.watcher_steps == result.interventions == 0
    assert result.agent_steps == 12


@pytest.mark.parametrize("mode", ["guided", "blind", "rules"])
async def test_watcher_steps_count_against_the_limit(stubborn: SimulatedChatServer, mode: WatcherMode) -> None:
    world = generate_world(2, 0, 6, 3)
    result = await _go(world, _chat(stubborn), _watcher(stubborn, mode), condition=mode, max_steps=15)
    assert result.steps == 15 == result.agent_steps + result.watcher_steps
    assert result.watcher_steps > 0 and result.agent_steps < 15
    assert result.correction_steps <= result.watcher_steps
    agent_calls = sum(1 for r in stubborn.requests if r.body and r.body.get("model") == AGENT_MODEL)
    assert agent_calls == result.agent_steps


@pytest.mark.parametrize("failure", ["error", "stall"])
async def test_a_failing_watcher_leaves_the_run_going(failure: str) -> None:
    params = SimParams(follow=0.7)
    with SimulatedChatServer(params, watcher_fails=failure, keep_requests=True) as server:  # type: ignore[arg-type]
        world = generate_world(5, 1, 8, 3)
        result = await _go(world, _chat(server), _watcher(server, timeout=0.5), condition="guided", max_steps=40)
    assert result.watcher_failures >= 1 and result.interventions == 0
    assert result.end in ("submitted", "wrong_answer", "max_steps") and result.end != "agent_error"
    assert "F" in result.trace and result.trace.index("F") < len(result.trace) - 1, (
        "the agent went on after the failure"
    )
    expected = "HTTP 500" if failure == "error" else "no answer"
    assert len(result.errors) == result.watcher_failures and all(expected in e for e in result.errors), result.errors
    # fail closed means at once: one watcher call per failure, no retry loop
    watcher_calls = sum(1 for r in server.requests if r.body and r.body.get("model") == WATCHER_MODEL)
    assert watcher_calls == result.watcher_failures


async def test_guidance_reaches_the_agent_after_the_tool_result(chat_server: SimulatedChatServer) -> None:
    world = generate_world(0, 3, 8, 3)
    result = await _go(world, _chat(chat_server), _watcher(chat_server), condition="guided", max_steps=40)
    assert result.interventions > 0, result.trace
    agent_requests = [r.body for r in chat_server.requests if r.body and r.body.get("model") == AGENT_MODEL]
    last = agent_requests[-1]["messages"]
    supervised = [i for i, m in enumerate(last) if m["role"] == "user" and m["content"].startswith("[SUPERVISOR]: ")]
    assert len(supervised) == result.interventions
    assert all(last[i - 1]["role"] == "tool" for i in supervised)


async def test_snapshot_is_minimal_first_and_full_after_repeated_failures(stubborn: SimulatedChatServer) -> None:
    world = generate_world(1, 0, 4, 3)
    await _go(world, _chat(stubborn), _watcher(stubborn), condition="guided", max_steps=20, retry_cap=3)
    prompts = [
        r.body["messages"][-1]["content"] for r in stubborn.requests if r.body and r.body.get("model") == WATCHER_MODEL
    ]
    assert len(prompts) >= 2
    assert prompts[0].count("[ToolCall]") == 1 and "Expected: read_file" in prompts[0]
    assert max(p.count("[ToolCall]") for p in prompts[1:]) > 1


async def test_a_blind_watcher_is_not_told_the_way(stubborn: SimulatedChatServer) -> None:
    world = generate_world(1, 0, 4, 3)
    await _go(world, _chat(stubborn), _watcher(stubborn, "blind"), condition="blind", max_steps=12)
    prompts = [json.dumps(r.body) for r in stubborn.requests if r.body and r.body.get("model") == WATCHER_MODEL]
    assert prompts and not any("Expected" in p for p in prompts)
    assert not any(path in p for p in prompts for path in world.chain[2:])


@pytest.fixture
def messages_server() -> Iterator[SimulatedMessagesServer]:
    """The Messages API, with an agent that strays often enough to be supervised."""
    with SimulatedMessagesServer(SimParams(follow=0.5), keep_requests=True) as server:
        yield server


async def test_the_messages_api_path(messages_server: SimulatedMessagesServer) -> None:
    world = generate_world(0, 4, 6, 3)
    agent = MessagesAgent(model=AGENT_MODEL, base_url=messages_server.base_url, api_key="test")
    evaluator = AnthropicEvaluator(
        model=WATCHER_MODEL, base_url=messages_server.base_url, api_key="test", max_retries=0
    )
    result = await _go(world, agent, Supervisor("guided", evaluator), condition="guided", max_steps=40)
    assert result.end in ("submitted", "max_steps") and not result.errors
    assert result.input_tokens > 0 and result.agent_steps == sum(
        1 for r in messages_server.requests if r.body and r.body.get("model") == AGENT_MODEL
    )
    paths = {r.path for r in messages_server.requests}
    assert paths == {"/v1/messages"}
    assert result.interventions > 0, result.trace
    # guidance follows the tool result inside the same user turn
    last = [r.body for r in messages_server.requests if r.body and r.body.get("model") == AGENT_MODEL][-1]
    turns = [m["content"] for m in last["messages"] if m["role"] == "user" and len(m["content"]) == 2]
    assert any(t[0]["type"] == "tool_result" and t[1]["text"].startswith("[SUPERVISOR]: ") for t in turns)


async def test_a_watcher_that_sees_nothing_to_say_releases_the_pause(stubborn: SimulatedChatServer) -> None:
    calls = []

    def continue_always(request: EvaluationRequest) -> str:
        calls.append(request)
        return "[CONTINUE]\nlooks fine to me\n[/CONTINUE]"

    world = generate_world(1, 0, 4, 3)
    supervisor = Supervisor("blind", CallableEvaluator(continue_always))
    result = await _go(world, _chat(stubborn), supervisor, condition="blind", max_steps=10)
    assert result.watcher_declined == len(calls) == result.watcher_steps > 0
    assert result.interventions == 0 and result.correction_steps == 0 and result.cap_releases == 0
    agent_messages = [r.body["messages"] for r in stubborn.requests if r.body and r.body.get("model") == AGENT_MODEL]
    assert not any(m["role"] == "user" and "[SUPERVISOR]" in m["content"] for m in agent_messages[-1])
