"""The anthropic evaluator: the real SDK against the stub server, run through the real engine and journal."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from watcher.core.errors import MissingCredentialsError
from watcher.core.evaluation import EvaluationRequest
from watcher.core.observations import AssistantMessage, Observation, ToolCall, ToolResult
from watcher.core.spec import Caps, WatcherSpec
from watcher.evaluators import make_evaluator
from watcher.evaluators.anthropic import AnthropicEvaluator
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Journal
from watcher.runtime.session import RecordingSession
from watcher.testing import Reply, StubAnthropicServer

INTERJECT = """[INTERJECT]
urgent: true
severity: critical
location: login.py:2
content: The query interpolates user input; use a parameterised query.
[/INTERJECT]"""
CONTINUE = "[CONTINUE]\nThe write looks fine.\n[/CONTINUE]"
SPEC = WatcherSpec(name="sec", role="security", brief="Flag SQL injection and leaked secrets.")
VULNERABLE = "def login(name):\n    return db.execute(f\"SELECT * FROM users WHERE name = '{name}'\")\n"


@pytest.fixture
def stub() -> Iterator[StubAnthropicServer]:
    with StubAnthropicServer() as server:
        yield server


def write_turn(content: str = VULNERABLE, call_id: str = "t1") -> list[Observation]:
    return [
        ToolCall(id=call_id, name="Write", input={"file_path": "login.py", "content": content}),
        ToolResult(tool_call_id=call_id, output="wrote login.py"),
    ]


class Watch:
    """A real runtime with a real journal and one watcher on a recording session."""

    def __init__(self, evaluator: AnthropicEvaluator, journal_path: Path, spec: WatcherSpec = SPEC) -> None:
        self.evaluator = evaluator
        self.journal = Journal(journal_path)
        self.runtime = Runtime(journal=self.journal)
        self.session = RecordingSession("agent")
        self.runtime.attach(spec, evaluator, self.session)

    async def turn(self, observations: Sequence[Observation]) -> None:
        for obs in observations:
            self.runtime.observe("agent", obs)
        await self.runtime.settle()

    async def evaluations(self) -> list[dict[str, Any]]:
        await self.runtime.close()
        await self.evaluator.aclose()
        rows = [row.payload for row in self.journal.read() if row.kind == "evaluation"]
        self.journal.close()
        return rows


def evaluator(stub: StubAnthropicServer, **options: Any) -> AnthropicEvaluator:
    return AnthropicEvaluator(base_url=stub.base_url, api_key="sk-test", **options)


async def test_interject_answer_becomes_a_delivered_urgent_interjection(
    stub: StubAnthropicServer, tmp_path: Path
) -> None:
    stub.push(Reply.text(INTERJECT, usage={"input_tokens": 900, "output_tokens": 40, "cache_creation_input_tokens": 0}))
    watch = Watch(evaluator(stub), tmp_path / "j.sqlite3")
    await watch.turn(write_turn())
    (event,) = await watch.evaluations()
    assert event["decision"] == "interject"
    assert event["error"] is None
    assert event["interjection"]["urgent"] is True
    assert event["interjection"]["content"] == "The query interpolates user input; use a parameterised query."
    assert (event["input_tokens"], event["output_tokens"], event["model"]) == (900, 40, "claude-haiku-4-5")
    assert event["cost_usd"] == pytest.approx((900 * 1.0 + 40 * 5.0) / 1e6)
    (delivered,) = watch.session.delivered
    assert delivered.urgent
    assert delivered.severity == "critical"
    (request,) = stub.requests
    body = request.body
    assert body is not None
    assert body["model"] == "claude-haiku-4-5"
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "Flag SQL injection" in body["system"][0]["text"]
    assert "SELECT * FROM users" in body["messages"][0]["content"]  # the activity is the user turn
    assert "SELECT * FROM users" not in body["system"][0]["text"]


async def test_continue_answer_continues_with_its_note(stub: StubAnthropicServer, tmp_path: Path) -> None:
    stub.push(Reply.text(CONTINUE))
    watch = Watch(evaluator(stub), tmp_path / "j.sqlite3")
    await watch.turn(write_turn("def add(a, b):\n    return a + b\n"))
    (event,) = await watch.evaluations()
    assert (event["decision"], event["note"], event["error"]) == ("continue", "The write looks fine.", None)
    assert watch.session.delivered == []


FAILURES = {
    "overloaded 529": ([Reply.error(529), Reply.error(529)], {}, "overloaded (HTTP 529) after 2 attempts"),
    "rate limited 429": (
        [Reply.error(429, "rate_limit_error"), Reply.error(429, "rate_limit_error")],
        {},
        "rate limited (HTTP 429)",
    ),
    "SDK timeout": ([Reply.stall(10)], {"timeout": 0.3, "max_retries": 0}, "within 0.3s"),
    "garbage answer": ([Reply.text("Looks fine to me, carry on!")], {}, "unparseable answer"),
    "unclosed block": ([Reply.text("[INTERJECT]\ncontent: stop", stop_reason="max_tokens")], {}, "hit max_tokens"),
    "refusal": ([Reply.text("I can't help with that.", stop_reason="refusal")], {}, "refused"),
}


@pytest.mark.parametrize(("replies", "options", "expected"), FAILURES.values(), ids=FAILURES.keys())
async def test_failures_fail_closed_to_continue_with_the_error_journaled(
    stub: StubAnthropicServer, tmp_path: Path, replies: list[Reply], options: dict[str, Any], expected: str
) -> None:
    stub.push(*replies)
    watch = Watch(evaluator(stub, **options), tmp_path / "j.sqlite3")
    await watch.turn(write_turn())
    (event,) = await watch.evaluations()
    assert event["decision"] == "continue"
    assert expected in event["error"]
    assert watch.session.delivered == []
    assert stub.remaining == 0  # every scripted failure was really served (retries included)


async def test_engine_timeout_on_a_stalled_server_fails_closed(stub: StubAnthropicServer, tmp_path: Path) -> None:
    stub.push(Reply.stall(10))
    spec = WatcherSpec(name="sec", role="security", brief="b", caps=Caps(timeout_s=0.3))
    watch = Watch(evaluator(stub), tmp_path / "j.sqlite3", spec)
    await watch.turn(write_turn())
    (event,) = await watch.evaluations()
    assert event["decision"] == "continue"
    assert event["error"] == "evaluator timed out after 0.3s"


async def test_unreachable_server_fails_closed(tmp_path: Path) -> None:
    with StubAnthropicServer() as gone:
        url = gone.base_url  # a port that was just released: nothing listens there
    watch = Watch(AnthropicEvaluator(base_url=url, api_key="k", max_retries=0), tmp_path / "j.sqlite3")
    await watch.turn(write_turn())
    (event,) = await watch.evaluations()
    assert event["decision"] == "continue"
    assert f"could not reach {url}" in event["error"]


def raw_system(raw: bytes) -> bytes:
    """The exact bytes of the ``system`` value in a raw request body."""
    text = raw.decode()
    start = text.index('"system":') + len('"system":')
    start += len(text[start:]) - len(text[start:].lstrip())
    _, end = json.JSONDecoder().raw_decode(text, start)
    return text[start:end].encode()


async def test_consecutive_evaluations_share_a_cached_prefix_and_the_journal_records_cache_usage(
    stub: StubAnthropicServer, tmp_path: Path
) -> None:
    stub.push(Reply.text(CONTINUE), Reply.text(CONTINUE))
    watch = Watch(evaluator(stub), tmp_path / "j.sqlite3")
    await watch.turn(write_turn("x = 1\n", "t1"))
    await watch.turn(write_turn("y = 2\n", "t2"))
    first, second = await watch.evaluations()
    one, two = stub.requests
    assert one.raw != two.raw  # different activity ...
    assert raw_system(one.raw) == raw_system(two.raw)  # ... behind a byte-identical system prefix
    assert json.loads(raw_system(one.raw))[-1]["cache_control"] == {"type": "ephemeral"}
    assert first["cache_write_tokens"] > 0
    assert first["cache_read_tokens"] == 0
    assert second["cache_read_tokens"] == first["cache_write_tokens"]
    assert second["cache_write_tokens"] == 0
    assert second["cost_usd"] < first["cost_usd"]  # a cache read costs a tenth of a write


async def test_no_secret_in_the_observations_reaches_the_prompt(stub: StubAnthropicServer, tmp_path: Path) -> None:
    key = "sk-ant-api03-" + "Q" * 40
    password = "hunter2-correct-horse"
    stub.push(Reply.text(CONTINUE))
    watch = Watch(evaluator(stub), tmp_path / "j.sqlite3")
    await watch.turn(
        [
            AssistantMessage(text=f"I will use the key {key}"),
            *write_turn(f'API_KEY = "{key}"\npassword = "{password}"\n'),
        ]
    )
    await watch.evaluations()
    (request,) = stub.requests
    assert key.encode() not in request.raw
    assert password.encode() not in request.raw
    assert b"[REDACTED]" in request.raw


def request_for(observations: Sequence[Observation]) -> EvaluationRequest:
    return EvaluationRequest(
        SPEC, "agent", tuple(observations), new=len(observations), index=len(observations) - 1, breakpoint="turn_done"
    )


async def test_minimal_context_sends_recent_observations_and_a_digest(stub: StubAnthropicServer) -> None:
    history = [AssistantMessage(text=f"step {i}") for i in range(25)] + write_turn()
    stub.push(Reply.text(CONTINUE), Reply.text(CONTINUE))
    minimal, full = evaluator(stub, recent=5), evaluator(stub, context="full")
    await minimal.evaluate(request_for(history))
    await full.evaluate(request_for(history))
    small, large = (r.body["messages"][0]["content"] for r in stub.requests if r.body)
    assert "step 24" in small
    assert "step 21" not in small
    assert "EARLIER (digest): 22 earlier observations (22 assistant_message)" in small
    assert "step 0" in large
    assert "EARLIER" not in large
    await minimal.aclose()
    await full.aclose()


def test_missing_key_says_how_to_set_it() -> None:
    with pytest.raises(MissingCredentialsError, match=r"export ANTHROPIC_API_KEY=\.\.\."):
        make_evaluator("anthropic", "security")


async def test_registry_builds_it_from_options_and_env(
    stub: StubAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-env")
    built = make_evaluator("anthropic", "security", base_url=stub.base_url, model="claude-opus-4-6")
    assert isinstance(built, AnthropicEvaluator)
    assert built.name == "anthropic:claude-opus-4-6"
    stub.push(Reply.text(CONTINUE))
    result = await built.evaluate(request_for(write_turn()))
    assert result.model == "claude-opus-4-6"
    assert stub.requests[0].headers["authorization"] == "Bearer sk-from-env"
    await built.aclose()


def test_the_sdks_are_imported_only_when_an_llm_evaluator_is_asked_for() -> None:
    code = "import sys, watcher.evaluators; print('anthropic' in sys.modules, 'openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
