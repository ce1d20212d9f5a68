"""The openai-compatible evaluator: the real SDK against the stub server, run through the real engine."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from watcher.core.errors import ConfigurationError, MissingCredentialsError
from watcher.core.evaluation import EvaluationRequest
from watcher.core.observations import Observation, ToolCall, ToolResult
from watcher.core.spec import WatcherSpec
from watcher.evaluators import make_evaluator
from watcher.evaluators.openai_compat import OpenAICompatEvaluator
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Journal
from watcher.runtime.session import RecordingSession
from watcher.testing import Reply, StubOpenAIServer

SPEC = WatcherSpec(name="sec", role="security", brief="Flag SQL injection.")
INTERJECT = "[INTERJECT]\nurgent: false\ncontent: Parameterise the query in login().\n[/INTERJECT]"


@pytest.fixture
def stub() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer() as server:
        yield server


TURN: list[Observation] = [
    ToolCall(id="t1", name="Write", input={"file_path": "login.py", "content": 'q = f"SELECT {name}"'}),
    ToolResult(tool_call_id="t1", output="wrote login.py"),
]


async def watch(evaluator: OpenAICompatEvaluator, tmp_path: Path) -> tuple[dict[str, Any], RecordingSession]:
    journal = Journal(tmp_path / "j.sqlite3")
    runtime = Runtime(journal=journal)
    session = RecordingSession("agent")
    runtime.attach(SPEC, evaluator, session)
    for obs in TURN:
        runtime.observe("agent", obs)
    await runtime.close()
    await evaluator.aclose()
    (event,) = [row.payload for row in journal.read() if row.kind == "evaluation"]
    journal.close()
    return event, session


async def test_interject_through_a_local_server_without_a_key(stub: StubOpenAIServer, tmp_path: Path) -> None:
    stub.push(Reply.text(INTERJECT, usage={"input_tokens": 300, "output_tokens": 20, "cache_read_input_tokens": 200}))
    event, session = await watch(OpenAICompatEvaluator(model="qwen2.5-7b-instruct", base_url=stub.base_url), tmp_path)
    assert event["decision"] == "interject"
    assert event["interjection"]["content"] == "Parameterise the query in login()."
    assert event["interjection"]["urgent"] is False
    assert (event["input_tokens"], event["cache_read_tokens"], event["output_tokens"]) == (300, 200, 20)
    assert event["model"] == "qwen2.5-7b-instruct"
    assert event["cost_usd"] == 0.0  # a local model has no price
    assert [i.content for i in session.delivered] == ["Parameterise the query in login()."]
    (request,) = stub.requests
    assert request.headers["authorization"] == "Bearer not-needed"
    body = request.body
    assert body is not None
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "Flag SQL injection." in body["messages"][0]["content"]
    assert "SELECT" in body["messages"][1]["content"]


FAILURES = {
    "rate limited": (
        [Reply.error(429, "rate_limit_exceeded"), Reply.error(429, "rate_limit_exceeded")],
        "rate limited (HTTP 429)",
    ),
    "server error": ([Reply.error(500, "server_error"), Reply.error(500, "server_error")], "(HTTP 500)"),
    "garbage": ([Reply.text("sure, looks good")], "unparseable answer"),
    "timeout": ([Reply.stall(10), Reply.stall(10)], "within 0.2s"),
}


@pytest.mark.parametrize(("replies", "expected"), FAILURES.values(), ids=FAILURES.keys())
async def test_failures_fail_closed(
    stub: StubOpenAIServer, tmp_path: Path, replies: list[Reply], expected: str
) -> None:
    stub.push(*replies)
    evaluator = OpenAICompatEvaluator(model="m", base_url=stub.base_url, timeout=0.2)
    event, session = await watch(evaluator, tmp_path)
    assert event["decision"] == "continue"
    assert expected in event["error"]
    assert session.delivered == []


def test_a_model_is_required() -> None:
    with pytest.raises(ConfigurationError, match="WATCHER_OPENAI_MODEL"):
        OpenAICompatEvaluator(base_url="http://localhost:1234/v1")


def test_without_base_url_the_key_is_required() -> None:
    with pytest.raises(MissingCredentialsError, match=r"export OPENAI_API_KEY=\.\.\."):
        make_evaluator("openai", "security", model="gpt-x")


async def test_registry_reads_model_base_url_and_key_from_the_environment(
    stub: StubOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WATCHER_OPENAI_MODEL", "llama-3.2-3b")
    monkeypatch.setenv("WATCHER_OPENAI_BASE_URL", stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "lm-studio-token")
    built = make_evaluator("openai-compatible", "security")
    assert isinstance(built, OpenAICompatEvaluator)
    assert built.name == "openai:llama-3.2-3b"
    stub.push(Reply.text("[CONTINUE]\nok\n[/CONTINUE]"))
    result = await built.evaluate(
        EvaluationRequest(SPEC, "agent", tuple(TURN), new=2, index=1, breakpoint="tool_result")
    )
    assert result.decision.note == "ok"
    assert stub.requests[0].headers["authorization"] == "Bearer lm-studio-token"
    assert stub.requests[0].body is not None
    assert stub.requests[0].body["model"] == "llama-3.2-3b"
    await built.aclose()
