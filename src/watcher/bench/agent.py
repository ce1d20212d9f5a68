"""The primary agent: a tool-calling model behind the official SDKs, with a neutral conversation.

``ChatAgent`` speaks the OpenAI-compatible chat-completions API (LM Studio, Ollama, vLLM, or the
simulated server); ``MessagesAgent`` the Anthropic Messages API. Both render the same
``Conversation`` to their wire format, so the harness, the tools and the watcher loop are one
piece of code whichever provider answers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

import anthropic
import openai
from anthropic.types import Message
from openai.types.chat import ChatCompletion

from watcher.bench.tools import anthropic_tools, openai_tools
from watcher.core.errors import AgentModelError, MissingCredentialsError

__all__ = ["SYSTEM_PROMPT", "ChatAgent", "Conversation", "MessagesAgent", "PrimaryAgent", "ToolCallRequest", "Turn"]

SYSTEM_PROMPT = (
    "You are an agent exploring a store of trace logs with tools. Each trace in the chain names the "
    "next one on a line starting with 'NEXT:'; some pointers are indirect and need a directory "
    "listing to resolve. Archived traces and look-alike names are not part of the chain. Follow the "
    "chain from the start file to the trace that holds 'FINAL TOKEN:', then call submit_answer with "
    "that token. Call exactly one tool per turn."
)


_OPENAI_TOOLS = openai_tools()
_ANTHROPIC_TOOLS = anthropic_tools()


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """One tool call the model asked for."""

    id: str
    name: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Turn:
    """One model answer: its text, its tool calls and the tokens it used."""

    text: str
    calls: tuple[ToolCallRequest, ...]
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(slots=True)
class Conversation:
    """The agent's messages, provider-neutral: the task, then turns, tool results and user notes."""

    task: str
    items: list[tuple[str, Any]] = field(default_factory=list)

    def add_turn(self, turn: Turn) -> None:
        self.items.append(("assistant", turn))

    def add_result(self, call_id: str, text: str, is_error: bool) -> None:
        self.items.append(("result", (call_id, text, is_error)))

    def add_user(self, text: str) -> None:
        """A user message: the harness's reminder or a watcher's ``[SUPERVISOR]: ...`` guidance."""
        self.items.append(("user", text))

    def openai_messages(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": self.task},
        ]
        for kind, value in self.items:
            if kind == "assistant":
                message: dict[str, Any] = {"role": "assistant", "content": value.text or None}
                if value.calls:
                    message["tool_calls"] = [
                        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.args)}}
                        for c in value.calls
                    ]
                out.append(message)
            elif kind == "result":
                out.append({"role": "tool", "tool_call_id": value[0], "content": value[1]})
            else:
                out.append({"role": "user", "content": value})
        return out

    def anthropic_messages(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": self.task}]}]
        for kind, value in self.items:
            if kind == "assistant":
                blocks: list[dict[str, Any]] = [{"type": "text", "text": value.text}] if value.text else []
                blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.args} for c in value.calls]
                out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": "(no answer)"}]})
                continue
            if kind == "result":
                block = {"type": "tool_result", "tool_use_id": value[0], "content": value[1], "is_error": value[2]}
            else:
                block = {"type": "text", "text": value}
            if out[-1]["role"] == "user":  # tool results and guidance share one user turn, results first
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        return out


class PrimaryAgent(Protocol):
    """A model that takes the conversation and answers with one turn."""

    model: str

    async def turn(self, conversation: Conversation) -> Turn: ...

    async def aclose(self) -> None: ...


class ChatAgent:
    """The agent over ``openai.AsyncOpenAI`` chat completions with tool calling."""

    def __init__(self, *, model: str, base_url: str | None, api_key: str | None = None, timeout: float = 60.0) -> None:
        self.model = model
        self.client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=2
        )

    async def turn(self, conversation: Conversation) -> Turn:
        # The client's generic ``post`` (the SDK's documented way to any endpoint) rather than the
        # typed ``create()``: ``create()`` re-walks the whole, growing conversation through its
        # TypedDict transforms on every call, which was most of the harness's CPU. The request is
        # the same JSON through the same client: auth, retries, timeouts, response parsing.
        try:
            completion = await self.client.post(
                "/chat/completions",
                cast_to=ChatCompletion,
                body={
                    "model": self.model,
                    "messages": conversation.openai_messages(),
                    "tools": _OPENAI_TOOLS,
                    "max_tokens": 512,
                },
            )
        except openai.APIError as exc:
            raise AgentModelError(f"the agent model {self.model} at {self.client.base_url} failed: {exc}") from exc
        if not completion.choices:
            raise AgentModelError(f"the agent model {self.model} answered with no choices")
        message = completion.choices[0].message
        calls = []
        for call in message.tool_calls or []:
            function = getattr(call, "function", None)
            if function is None:
                continue
            try:
                args = json.loads(function.arguments or "{}")
            except ValueError:
                args = {"_unparsed": function.arguments}
            calls.append(
                ToolCallRequest(call.id, function.name, args if isinstance(args, dict) else {"_unparsed": args})
            )
        usage = completion.usage
        return Turn(
            message.content or "",
            tuple(calls),
            usage.prompt_tokens if usage else 0,
            usage.completion_tokens if usage else 0,
        )

    async def aclose(self) -> None:
        await self.client.close()


class MessagesAgent:
    """The agent over ``anthropic.AsyncAnthropic`` Messages with tool use."""

    def __init__(self, *, model: str, base_url: str | None, api_key: str | None = None, timeout: float = 60.0) -> None:
        self.model = model
        key = api_key  # the caller's, from the settings (ANTHROPIC_API_KEY)
        if not key:
            raise MissingCredentialsError(
                "--provider anthropic needs ANTHROPIC_API_KEY for the agent; run `export ANTHROPIC_API_KEY=...`"
            )
        self.client = anthropic.AsyncAnthropic(base_url=base_url, api_key=key, timeout=timeout, max_retries=2)

    async def turn(self, conversation: Conversation) -> Turn:
        try:  # generic ``post``, as in ``ChatAgent.turn``
            message = await self.client.post(
                "/v1/messages",
                cast_to=Message,
                body={
                    "model": self.model,
                    "max_tokens": 512,
                    "system": SYSTEM_PROMPT,
                    "messages": conversation.anthropic_messages(),
                    "tools": _ANTHROPIC_TOOLS,
                },
            )
        except anthropic.APIError as exc:
            raise AgentModelError(f"the agent model {self.model} at {self.client.base_url} failed: {exc}") from exc
        text = "".join(b.text for b in message.content if b.type == "text")
        calls = tuple(
            ToolCallRequest(b.id, b.name, dict(b.input) if isinstance(b.input, dict) else {})
            for b in message.content
            if b.type == "tool_use"
        )
        return Turn(text, calls, message.usage.input_tokens, message.usage.output_tokens)

    async def aclose(self) -> None:
        await self.client.close()
