"""One turn of an agent run: stream a response, record it, run its tools.

``Turn`` appends to the conversation it is given, publishes observations and display events,
and reports what the response cost (``Spent``); the loop (``_run_loop``) decides what comes next.
An interrupt cancels the task streaming the response (the SDK closes the connection); the
partial turn is kept only as text and only when it began no ``tool_use``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from watcher.agents._run_config import RunConfig
from watcher.agents._sinks import OutputSinks, RunEvent
from watcher.agents._tools import ToolOutcome
from watcher.core.observations import AssistantMessage, Done, ToolCall, ToolResult
from watcher.runtime.hub import Runtime

__all__ = ["Spent", "Turn"]


@dataclass(frozen=True, slots=True)
class Spent:
    """A streamed response (None when it was interrupted) and the tokens it cost."""

    message: Any | None
    input_tokens: int
    output_tokens: int


@dataclass(slots=True)
class _Partial:
    """What a streamed response had produced so far (read when it is interrupted)."""

    text: str = ""
    tool_use: bool = False
    input_tokens: int = 0


class Turn:
    """Streams responses into ``messages`` and answers their tool calls."""

    def __init__(
        self, config: RunConfig, *, client: Any, runtime: Runtime, sinks: OutputSinks, messages: list[dict[str, Any]]
    ) -> None:
        self.config = config
        self.client = client
        self.runtime = runtime
        self.sinks = sinks
        self.messages = messages
        self.interrupt_ms: list[float] = []
        self._task: asyncio.Task[Any] | None = None
        self._interrupt_at: float | None = None
        self._partial = _Partial()

    def interrupt(self) -> None:
        """Cancel the streamed response in flight, if any."""
        task = self._task
        if task is not None and not task.done() and self._interrupt_at is None:
            self._interrupt_at = time.perf_counter()
            task.cancel()

    def append_user(self, blocks: list[dict[str, Any]]) -> None:
        """Add user content, merged into the last message when that is the user's too."""
        if not blocks:
            return
        messages = self.messages
        if messages and messages[-1]["role"] == "user":
            previous = messages[-1]["content"]
            previous = [{"type": "text", "text": previous}] if isinstance(previous, str) else list(previous)
            messages[-1] = {"role": "user", "content": [*previous, *blocks]}
        else:
            messages.append({"role": "user", "content": blocks})

    async def stream(self, step: int, system: str) -> Spent:
        """Stream one response; an interrupt makes it ``Spent(None, …)``; API errors propagate."""
        self._partial = _Partial()
        self._interrupt_at = None
        task = asyncio.get_running_loop().create_task(
            self._stream(step, system), name=f"watcher-turn:{self.config.name}"
        )
        self._task = task
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:  # the run itself is cancelled: take the stream down with it
            task.cancel()
            raise
        finally:
            self._task = None
        if task.cancelled():
            return self._interrupted(step)
        message = task.result()
        usage = message.usage
        spent_in = usage.input_tokens + (usage.cache_creation_input_tokens or 0) + (usage.cache_read_input_tokens or 0)
        return Spent(message, spent_in, usage.output_tokens)

    async def _stream(self, step: int, system: str) -> Any:
        config, partial, name = self.config, self._partial, self.config.name
        request: dict[str, Any] = {
            "model": config.model,
            "max_tokens": config.max_tokens,
            "messages": list(self.messages),
        }
        if system:
            request["system"] = system
        if config.tools:
            request["tools"] = [t.definition() for t in config.tools.values()]
        if config.cache:
            request["cache_control"] = {"type": "ephemeral"}
        async with self.client.messages.stream(**request) as stream:
            async for event in stream:
                kind = event.type
                if kind == "text":
                    partial.text += event.text
                    self.sinks.emit(RunEvent("text", event.text, {"step": step}, name))
                elif kind == "content_block_start" and event.content_block.type == "tool_use":
                    partial.tool_use = True
                    block = event.content_block
                    self.sinks.emit(RunEvent("tool_call_start", block.name, {"id": block.id, "step": step}, name))
                elif kind == "message_start":
                    partial.input_tokens = event.message.usage.input_tokens
            return await stream.get_final_message()

    def _interrupted(self, step: int) -> Spent:
        latency = (time.perf_counter() - self._interrupt_at) * 1000 if self._interrupt_at is not None else 0.0
        self.interrupt_ms.append(latency)
        partial = self._partial
        kept = bool(partial.text.strip()) and not partial.tool_use
        if kept:
            self.messages.append({"role": "assistant", "content": [{"type": "text", "text": partial.text.rstrip()}]})
        if partial.text:
            extra = {"interrupted": True, "kept": kept}
            self.runtime.observe(self.config.name, AssistantMessage(text=partial.text, extra=extra))
        data = {"step": step, "kept_text": kept, "dropped_tool_use": partial.tool_use, "latency_ms": latency}
        self.sinks.emit(RunEvent("interrupted", partial.text, data, self.config.name))
        return Spent(None, partial.input_tokens, 0)

    async def after(
        self, message: Any, step: int, stopped: Callable[[], tuple[str, str] | None]
    ) -> tuple[list[dict[str, Any]] | None, str]:
        """Record a complete response: (the next user content, i.e. tool results, or None; its text)."""
        name = self.config.name
        blocks = [_param(block) for block in message.content]
        blocks = [b for b in blocks if not (b["type"] == "text" and not b["text"].strip())]
        if blocks:
            self.messages.append({"role": "assistant", "content": blocks})
        text = "".join(b["text"] for b in blocks if b["type"] == "text")
        if text.strip():
            self.runtime.observe(name, AssistantMessage(text=text))
        calls = [b for b in blocks if b["type"] == "tool_use"]
        for call in calls:
            self.runtime.observe(name, ToolCall(id=call["id"], name=call["name"], input=call["input"]))
            self.sinks.emit(RunEvent("tool_call", call["name"], {"id": call["id"], "input": call["input"]}, name))
        if calls:  # answered even when the turn stopped for another reason: history stays valid
            return await self._run_tools(calls, stopped), text
        self.runtime.observe(name, Done())
        self.sinks.emit(RunEvent("turn_end", "", {"step": step, "stop_reason": message.stop_reason}, name))
        return None, text

    async def _run_tools(
        self, calls: list[dict[str, Any]], stopped: Callable[[], tuple[str, str] | None]
    ) -> list[dict[str, Any]]:
        tools, name = self.config.tools, self.config.name
        results = []
        for call in calls:
            stop = stopped()
            tool = tools.get(call["name"])
            if stop is not None:
                outcome = ToolOutcome(f"not run: the run was {stop[0]} ({stop[1]})", is_error=True)
            elif tool is None:
                known = ", ".join(tools) or "none"
                outcome = ToolOutcome(f"unknown tool {call['name']!r}; the tools are: {known}", is_error=True)
            else:
                outcome = await tool.call(call["input"])
            observed = ToolResult(tool_call_id=call["id"], output=outcome.output, is_error=outcome.is_error)
            self.runtime.observe(name, observed)
            data = {"id": call["id"], "name": call["name"], "is_error": outcome.is_error}
            self.sinks.emit(RunEvent("tool_result", outcome.output, data, name))
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": call["id"],
                    "content": outcome.output,
                    "is_error": outcome.is_error,
                }
            )
        return results


def _param(block: Any) -> dict[str, Any]:
    """An SDK content block as a request content block."""
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input or {})}
    dumped: dict[str, Any] = block.model_dump(exclude_none=True)
    return dumped
