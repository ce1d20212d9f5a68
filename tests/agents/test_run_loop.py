"""The agent run's tool-use loop: tools from callables, observations, history, step limit, errors.

Every test drives the real ``anthropic`` SDK against ``StubAnthropicServer`` on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Literal

import anthropic
import pytest
from run_helpers import Files, assert_valid_history, start, user_blocks

from watcher.agents import RunEvent, agent, tool
from watcher.core.errors import MissingCredentialsError
from watcher.runtime import Journal
from watcher.testing import Reply, StubAnthropicServer


def search(
    query: str, limit: int = 5, kind: Literal["code", "docs"] = "code", tags: list[str] | None = None
) -> list[str]:
    """Search the project.

    Args:
        query: what to look for
        limit: how many hits at most
    """
    return [f"{kind}:{query}"] * min(limit, 2)


def test_tool_schema_comes_from_signature_and_docstring() -> None:
    found = tool(search)
    assert found.name == "search"
    assert found.description == "Search the project."
    assert found.input_schema == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what to look for"},
            "limit": {"type": "integer", "description": "how many hits at most", "default": 5},
            "kind": {"enum": ["code", "docs"], "default": "code"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["query"],
    }
    explicit = tool(search, name="Search", schema={"type": "object", "properties": {}})
    assert explicit.definition() == {
        "name": "Search",
        "description": "Search the project.",
        "input_schema": {"type": "object", "properties": {}},
    }


async def test_loop_runs_tools_and_publishes_every_observation(tmp_path: Path) -> None:
    files = Files()
    events: list[RunEvent] = []
    journal = Journal(tmp_path / "journal.sqlite3")
    with StubAnthropicServer() as stub:
        stub.push(
            Reply.tool_use("Write", {"file_path": "a.py", "content": "x = 1\n"}, text="Writing a.py."),
            Reply.text("Done: a.py holds x."),
        )
        run = start(
            stub,
            "write a.py",
            tools=[tool(files.write, name="Write")],
            journal=journal,
            output=events.append,
            name="loop",
        )
        result = await run
    assert result.status == "completed" and result.text == "Done: a.py holds x." and result.steps == 2
    assert files.written == {"a.py": "x = 1\n"}
    tool_def = stub.requests[0].body["tools"][0]
    assert tool_def["name"] == "Write" and tool_def["input_schema"]["required"] == ["file_path", "content"]
    assert [b["type"] for b in user_blocks(stub.requests[1])] == ["tool_result"]
    assert_valid_history(list(result.messages))
    assert result.input_tokens > 0 and result.output_tokens > 0

    kinds = [row.payload["observation"]["kind"] for row in journal.read(session="loop") if row.kind == "observation"]
    assert kinds == ["user_message", "assistant_message", "tool_call", "tool_result", "assistant_message", "done"]
    statuses = [row.payload["status"] for row in journal.read(session="loop") if row.kind == "session"]
    assert statuses == ["started", "completed"]
    journal.close()

    shown = [e.kind for e in events]
    assert shown[-1] == "status" and events[-1].text == "completed"
    assert {"text", "tool_call", "tool_result", "turn_end"} <= set(shown)
    assert "".join(e.text for e in events if e.kind == "text") == "Writing a.py.Done: a.py holds x."


async def test_a_failing_or_unknown_tool_becomes_an_error_result() -> None:
    def explode(path: str) -> str:
        """Always fails."""
        raise FileNotFoundError(f"no such file: {path}")

    with StubAnthropicServer() as stub:
        stub.push(
            Reply.tool_use("explode", {"path": "x"}),
            Reply.tool_use("Missing", {}),
            Reply.text("I could not do it."),
        )
        result = await start(stub, "try", tools=[explode])
    first = user_blocks(stub.requests[1])[0]
    assert first["is_error"] is True and first["content"] == "FileNotFoundError: no such file: x"
    second = user_blocks(stub.requests[2])[0]
    assert second["is_error"] is True and "unknown tool 'Missing'" in second["content"]
    assert result.status == "completed"


async def test_step_limit_stops_the_run_with_a_valid_history() -> None:
    with StubAnthropicServer() as stub:
        stub.push(*(Reply.tool_use("search", {"query": f"q{i}"}) for i in range(5)))
        result = await start(stub, "search forever", tools=[search], max_steps=3)
    assert result.status == "max_steps" and result.steps == 3 and len(stub.requests) == 3
    assert result.messages[-1]["role"] == "user", "the last tool results are kept for a later continuation"
    assert_valid_history(list(result.messages))


async def test_an_api_error_fails_the_run_and_is_raised(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite3")
    with StubAnthropicServer() as stub:
        stub.push(Reply.error(400, "invalid_request_error", "messages: bad request"))
        run = start(stub, "hi", journal=journal, name="failing")
        with pytest.raises(anthropic.BadRequestError):
            await run
    assert run.status == "failed" and run.ended and "BadRequestError" in run.detail
    rows = journal.read(session="failing")
    assert [r.payload["status"] for r in rows if r.kind == "session"] == ["started", "failed"]
    assert any(r.kind == "observation" and r.payload["observation"]["kind"] == "error" for r in rows)
    journal.close()


def test_missing_key_says_how_to_set_it() -> None:  # tests/conftest.py clears the keys
    with pytest.raises(MissingCredentialsError, match="ANTHROPIC_API_KEY"):
        agent("hi")


async def test_a_run_on_another_threads_loop_is_awaitable_and_injectable_from_here() -> None:
    """The notebook case: the run lives on the runtime thread, the cell awaits it on the kernel's loop."""
    other = asyncio.new_event_loop()
    thread = threading.Thread(target=other.run_forever, daemon=True)
    thread.start()
    try:
        with StubAnthropicServer() as stub:
            stub.push(Reply.text("first answer", delay_s=0.2), Reply.text("answered the guidance"))
            run = start(stub, "hi", loop=other)
            await stub.wait_for_requests_async(1)
            run.guide("mention the weather")  # from this thread: hops to the run's loop
            result = await run
        assert result.status == "completed" and result.steps == 2
        assert user_blocks(stub.requests[1])[-1]["text"] == "Supervisor:Guidance: mention the weather"
    finally:
        other.call_soon_threadsafe(other.stop)
        thread.join(5)
        other.close()


async def test_a_rate_limit_asking_for_an_hour_fails_the_run_at_once(tmp_path: Path) -> None:
    with StubAnthropicServer() as stub:
        stub.push(Reply.error(429, "rate_limit_error", "slow down", retry_after_ms=3_600_000))
        run = start(stub, "hi", name="limited", max_retries=2)
        with pytest.raises(anthropic.RateLimitError):
            await asyncio.wait_for(run, timeout=30)  # not the hour the server asked for
        assert len(stub.requests) == 1  # the SDK did not retry a wait it must not make
    assert run.status == "failed" and "RateLimitError" in run.detail
