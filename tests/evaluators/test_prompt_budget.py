"""The prompt budget: an evaluation is shortened until the provider's counter says it fits, and never sent over it.

The Anthropic evaluator counts with the SDK's ``messages.count_tokens`` against the stub (which
counts the request body); the OpenAI-compatible one estimates. Both are checked by counting the
body that was really sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import anthropic
import pytest

from watcher.core.errors import EvaluationError
from watcher.core.evaluation import EvaluationRequest
from watcher.core.observations import Observation, ToolCall, ToolResult, UserMessage
from watcher.core.spec import WatcherSpec
from watcher.evaluators._llm import estimate_tokens
from watcher.evaluators.anthropic import AnthropicEvaluator
from watcher.evaluators.openai_compat import OpenAICompatEvaluator
from watcher.testing import Reply, StubAnthropicServer, StubOpenAIServer

SPEC = WatcherSpec(name="sec", role="security", brief="Flag SQL injection.")
CONTINUE = "[CONTINUE]\nfine\n[/CONTINUE]"
NEWEST = "import sqlite3\n\ndef find(conn, name):\n    return conn.execute(f\"SELECT * FROM t WHERE n = '{name}'\")\n"


def long_session() -> list[Observation]:
    """Old outputs and code, then a 5,000-line result, then the newest write (which must survive)."""
    out: list[Observation] = [UserMessage(text="Please fix the search.")]
    for n in range(6):
        code = "".join(f"value_{n}_{i} = {i}\n" for i in range(150))
        out.append(ToolCall(id=f"w{n}", name="Write", input={"file_path": f"m{n}.py", "content": code}))
        out.append(ToolResult(tool_call_id=f"w{n}", output="\n".join(f"log {n}.{i}" for i in range(300))))
    out.append(ToolCall(id="b", name="Bash", input={"command": "pytest -q"}))
    out.append(ToolResult(tool_call_id="b", output="\n".join(f"test line {i}" for i in range(5000))))
    out.append(ToolCall(id="new", name="Write", input={"file_path": "search.py", "content": NEWEST}))
    return out


def request() -> EvaluationRequest:
    seen = long_session()
    return EvaluationRequest(SPEC, "agent", seen, new=1, index=len(seen), breakpoint="tool_result")


@pytest.fixture
def stub() -> Iterator[StubAnthropicServer]:
    with StubAnthropicServer() as server:
        yield server


@pytest.mark.parametrize("budget", [1200, 2500, 5000, 9000])
async def test_anthropic_prompt_is_counted_and_fits_the_budget(stub: StubAnthropicServer, budget: int) -> None:
    stub.push(Reply.text(CONTINUE))
    evaluator = AnthropicEvaluator(base_url=stub.base_url, api_key="sk-test", prompt_budget=budget)
    result = await evaluator.evaluate(request())
    await evaluator.aclose()
    sent = [r for r in stub.requests if r.path == "/v1/messages"]
    counted = [r for r in stub.requests if r.path == "/v1/messages/count_tokens"]
    assert len(sent) == 1 and counted, "the SDK's counter was asked"
    body = sent[0].body
    assert body is not None
    client = anthropic.AsyncAnthropic(base_url=stub.base_url, api_key="sk-test")
    measured = await client.messages.count_tokens(model=body["model"], system=body["system"], messages=body["messages"])
    await client.close()
    assert measured.input_tokens <= budget
    activity = body["messages"][0]["content"]
    assert "4 |     return conn.execute(f\"SELECT * FROM t WHERE n = '{name}'\")" in activity  # newest code whole
    assert "lines omitted" in activity
    assert result.decision.error is None


async def test_larger_budgets_show_more_and_old_outputs_go_first(stub: StubAnthropicServer) -> None:
    shown = []
    for budget in (1200, 3000, 9000, 200_000):
        evaluator = AnthropicEvaluator(base_url=stub.base_url, api_key="sk-test", prompt_budget=budget)
        shown.append((await evaluator.request_body(request()))["messages"][0]["content"])
        await evaluator.aclose()
    assert [len(a) for a in shown] == sorted(len(a) for a in shown)
    roomy = shown[-1]
    assert "… 220 lines omitted …" in roomy and "value_0_149 = 149" in roomy  # outputs cut to 80 lines, code whole
    middle = shown[1]
    assert "log 0.0" not in middle and "value_5_0 = 0" in middle  # old outputs shortened before newer code


async def test_a_budget_the_brief_alone_exceeds_fails_closed_with_a_message(stub: StubAnthropicServer) -> None:
    evaluator = AnthropicEvaluator(base_url=stub.base_url, api_key="sk-test", prompt_budget=100)
    with pytest.raises(EvaluationError, match="over the prompt budget of 100; raise prompt_budget"):
        await evaluator.evaluate(request())
    await evaluator.aclose()
    assert not [r for r in stub.requests if r.path == "/v1/messages"], "nothing over budget was sent"


async def test_openai_prompt_is_estimated_and_fits(tmp_path: Path) -> None:
    with StubOpenAIServer() as server:
        server.push(Reply.text(CONTINUE))
        evaluator = OpenAICompatEvaluator(base_url=server.base_url, model="m", prompt_budget=3000)
        await evaluator.evaluate(request())
        await evaluator.aclose()
        body = server.requests[0].body
    assert body is not None
    assert sum(estimate_tokens(m["content"]) for m in body["messages"]) <= 3000
    assert json.dumps(body).count("search.py") >= 1


async def test_an_edit_is_numbered_from_the_worktree_when_the_session_never_showed_the_file(
    stub: StubAnthropicServer, tmp_path: Path
) -> None:
    (tmp_path / "app.py").write_text("".join(f"line{i} = {i}\n" for i in range(1, 41)))  # already edited on disk
    edit = ToolCall(
        id="e",
        name="Edit",
        input={"file_path": "app.py", "old_string": "line30 = 30\n", "new_string": "line30 = eval(x)\n"},
    )
    (tmp_path / "app.py").write_text((tmp_path / "app.py").read_text().replace("line30 = 30\n", "line30 = eval(x)\n"))
    req = EvaluationRequest(SPEC, "agent", [edit], new=1, index=1, breakpoint="tool_result")
    evaluator = AnthropicEvaluator(base_url=stub.base_url, api_key="sk-test", worktree=tmp_path)
    without = AnthropicEvaluator(base_url=stub.base_url, api_key="sk-test")
    known = (await evaluator.request_body(req))["messages"][0]["content"]
    unknown = (await without.request_body(req))["messages"][0]["content"]
    await evaluator.aclose()
    await without.aclose()
    assert "@@ -27,7 +27,7 @@" in known and "30 + line30 = eval(x)" in known
    assert "relative to the edited text" in unknown and "1 + line30 = eval(x)" in unknown


def test_the_worktree_lookup_reads_only_text_files_inside_the_worktree(tmp_path: Path) -> None:
    from watcher.evaluators._worktree import worktree_lookup

    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "secret.txt").write_text("outside")
    (root / "blob.bin").write_bytes(b"\xff\xfe\x00")
    read = worktree_lookup(root)
    assert read("src/a.py") == "x = 1\n" and read(str(root / "src" / "a.py")) == "x = 1\n"
    assert read("../secret.txt") is None and read(str(tmp_path / "secret.txt")) is None
    assert read("blob.bin") is None and read("missing.py") is None and read("src") is None
