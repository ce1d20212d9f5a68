"""An LLM watcher whose model fails is backstopped by its role's offline rules, and says so.

A replay with the real SDKs against stub servers: a model that fails every call (its script runs
out: HTTP 500), one that answers in no protocol, and one that works. The SQL injection written by
the session must be found when the model fails, with the failure on the record; the model's own
judgment stands when it works; ``watcher eval``'s evaluators (backstop=False) still fail closed.
"""

from __future__ import annotations

import pytest

from watcher.agents.replay import replay
from watcher.core.errors import EvaluationError
from watcher.core.evaluation import EvaluationRequest
from watcher.core.observations import Done, ToolCall, ToolResult
from watcher.evaluators.registry import make_evaluator
from watcher.roles import spec_for_role
from watcher.testing import Reply, StubAnthropicServer, StubOpenAIServer

CODE = "import sqlite3\ndef find(cur, name):\n    cur.execute(f\"SELECT * FROM users WHERE name = '{name}'\")\n"
SESSION = (
    ToolCall(id="t1", name="Write", input={"file_path": "users.py", "content": CODE}),
    ToolResult(tool_call_id="t1", output="wrote users.py"),
    Done(),
)
KEY = "sk-ant-api03-backstop-test-key-00000000000"


def llm(provider: str, url: str, **options: object) -> object:
    if provider == "anthropic":
        return make_evaluator("anthropic", "security", base_url=url, api_key=KEY, max_retries=0, **options)
    return make_evaluator("openai", "security", base_url=url, model="m", max_retries=0, **options)


def stub(provider: str, *replies: Reply) -> StubAnthropicServer | StubOpenAIServer:
    return StubAnthropicServer(*replies) if provider == "anthropic" else StubOpenAIServer(*replies)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("how", ["every call fails", "no protocol block"])
async def test_the_rules_judge_what_the_model_failed_to_and_the_failure_is_on_record(provider: str, how: str) -> None:
    replies = [] if how == "every call fails" else [Reply.text("Looks fine to me!")] * 3
    with stub(provider, *replies) as server:
        evaluator = llm(provider, server.base_url)
        result = await replay(SESSION, [(spec_for_role("security"), evaluator)])  # type: ignore[list-item]
        await evaluator.aclose()  # type: ignore[attr-defined]
        assert server.requests, "the model was asked first"
    found = [e for e in result.evaluations if e.decision == "interject"]
    assert found and found[0].interjection is not None
    assert "users.py" in {loc.path for loc in found[0].interjection.locations}
    assert "SQL" in found[0].interjection.content or "B608" in found[0].interjection.content
    error = found[0].error or ""
    assert "rules:security rules judged this evaluation instead" in error
    assert ("HTTP 500" in error) if how == "every call fails" else ("unparseable answer" in error)
    assert found[0].evaluator.startswith(f"{provider}:") and found[0].model == "rules"
    assert KEY not in error


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_working_models_judgment_stands(provider: str) -> None:
    with stub(provider, *[Reply.text("[CONTINUE]\nparameterised elsewhere\n[/CONTINUE]")] * 3) as server:
        evaluator = llm(provider, server.base_url)
        result = await replay(SESSION, [(spec_for_role("security"), evaluator)])  # type: ignore[list-item]
        await evaluator.aclose()  # type: ignore[attr-defined]
    assert [e.decision for e in result.evaluations] == ["continue"] * len(result.evaluations)
    assert all(e.error is None and e.model != "rules" for e in result.evaluations)


async def test_without_a_backstop_a_failed_call_fails_closed_as_before() -> None:
    with StubAnthropicServer() as server:
        evaluator = llm("anthropic", server.base_url, backstop=False)
        request = EvaluationRequest(spec_for_role("security"), "s", SESSION, new=3, index=2, breakpoint="turn_done")
        with pytest.raises(EvaluationError, match="HTTP 500"):
            await evaluator.evaluate(request)  # type: ignore[attr-defined]
        await evaluator.aclose()  # type: ignore[attr-defined]


def test_a_role_without_offline_rules_gets_no_backstop() -> None:
    evaluator = make_evaluator("anthropic", "reviewer", base_url="http://127.0.0.1:9", api_key=KEY)
    assert evaluator.backstop is None  # type: ignore[attr-defined]
