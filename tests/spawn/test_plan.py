"""The LLM planner (real SDKs against the stubs): a validated, tamed manifest, or the rules with a reason."""

from __future__ import annotations

import json

import pytest

from watcher.spawn.plan import plan_manifest
from watcher.testing import Reply, StubAnthropicServer, StubOpenAIServer

ANSWER = {
    "readable_paths": ["**"],
    "writable_paths": ["src/**"],
    "allowed_tools": ["Read", "Edit", "Bash"],
    "denied_tools": [],
    "allowed_commands": ["npm test", "rm *", "git commit *"],
    "secrets": ["STRIPE_API_KEY"],
    "complexity": "low",
}


@pytest.fixture
def anthropic_env(monkeypatch: pytest.MonkeyPatch) -> StubAnthropicServer:
    stub = StubAnthropicServer().start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.root_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    yield stub  # type: ignore[misc]
    stub.close()


async def test_the_planners_manifest_is_validated_and_tamed(anthropic_env: StubAnthropicServer) -> None:
    anthropic_env.push(Reply.text("Here it is:\n" + json.dumps(ANSWER)))
    planned = await plan_manifest("Fix the checkout with sk-ant-api03-" + "x" * 40, "anthropic")
    assert planned.source == "anthropic" and planned.manifest.complexity == "low"
    assert planned.manifest.allowed_commands == ("npm test", "git commit *")
    assert "Task" in planned.manifest.denied_tools and "rm *" in planned.note
    assert planned.manifest.secrets == ("STRIPE_API_KEY",)
    sent = json.dumps(anthropic_env.requests[0].body)
    assert "sk-ant-api03-xxxx" not in sent  # the task was redacted before it left


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply.text("I would allow everything."), "holds no JSON object"),
        (Reply.text(json.dumps({**ANSWER, "complexity": "extreme"})), "must be low, medium or high"),
        (Reply.error(401, "authentication_error"), "AuthenticationError"),
    ],
)
async def test_any_failure_falls_back_to_the_rules_and_says_why(
    anthropic_env: StubAnthropicServer, reply: Reply, reason: str
) -> None:
    anthropic_env.push(reply)
    planned = await plan_manifest("Add login() to src/auth/login.js and commit it", "anthropic")
    assert planned.source == "rules" and reason in planned.note and "the rules planned instead" in planned.note
    assert planned.manifest.writable_paths == ("src/auth/login.js",)


async def test_an_openai_compatible_planner(monkeypatch: pytest.MonkeyPatch) -> None:
    with StubOpenAIServer(Reply.text(json.dumps(ANSWER))) as stub:
        monkeypatch.setenv("WATCHER_OPENAI_BASE_URL", stub.base_url)
        planned = await plan_manifest("Fix the checkout", "openai")
    assert planned.source == "openai" and planned.manifest.writable_paths == ("src/**",)
