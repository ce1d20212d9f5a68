"""Shared pieces of the agent-run tests: the seed's login() writes, a file-backed Write tool."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from watcher.agents import AgentRun, agent, read_transcript
from watcher.core.observations import ToolCall
from watcher.testing import RecordedRequest, StubAnthropicServer

ROOT = Path(__file__).resolve().parents[2]
VULNERABLE = ROOT / "example_notebooks" / "data" / "agent_writes_vulnerable_code.jsonl"
PROMPT = "Can you help me write a login function for our Express app? Put it in auth.js."


def login_writes() -> tuple[dict[str, Any], dict[str, Any]]:
    """The seed's two ``Write`` inputs for auth.js: the injectable login() and its fix."""
    calls = {obs.id: dict(obs.input) for obs in read_transcript(VULNERABLE) if isinstance(obs, ToolCall)}
    return calls["toolu_01"], calls["toolu_04"]


class Files:
    """A ``Write`` tool over a dict, so a test can see what the agent wrote."""

    def __init__(self) -> None:
        self.written: dict[str, str] = {}

    def write(self, file_path: str, content: str) -> str:
        """Write ``content`` to ``file_path``, replacing it.

        Args:
            file_path: the file to write, relative to the project
            content: the whole new content
        """
        self.written[file_path] = content
        return f"Successfully wrote {file_path}"


def start(stub: StubAnthropicServer, prompt: str = PROMPT, **options: Any) -> AgentRun:
    """An agent run against ``stub`` (the real SDK, no retries unless asked)."""
    options.setdefault("max_retries", 0)
    return agent(prompt, base_url=stub.base_url, api_key="test-key", **options)


def user_blocks(request: RecordedRequest) -> list[dict[str, Any]]:
    """The content blocks of the last user message a request sent."""
    assert request.body is not None
    last = request.body["messages"][-1]
    assert last["role"] == "user"
    content = last["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def injected_texts(request: RecordedRequest) -> list[str]:
    """The text blocks of the last user message (what was injected after any tool results)."""
    return [b["text"] for b in user_blocks(request) if b["type"] == "text"]


def assert_valid_history(messages: list[dict[str, Any]]) -> None:
    """Roles alternate, and every tool_use is answered first thing in the next user message."""
    for before, after in itertools.pairwise(messages):
        assert before["role"] != after["role"], "no two messages in a row from one role"
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        uses = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        if not uses:
            continue
        assert index + 1 < len(messages), "a tool_use must be answered"
        following = messages[index + 1]["content"]
        answered = [b["tool_use_id"] for b in following[: len(uses)] if b["type"] == "tool_result"]
        assert answered == uses, "tool_result blocks come first, one per tool_use"
