"""The turn loop of an ``AgentRun``: checkpoint, deliver, stream, run tools, repeat.

Invariants (the API rejects a conversation that breaks them):

- every assistant ``tool_use`` is answered by a ``tool_result`` in the very next user message,
  and the ``tool_result`` blocks come first in it; injected text rides after them;
- a partial assistant turn cut off by an interrupt is appended only when it holds no
  ``tool_use``, and then only its (non-empty) text;
- user messages are merged rather than sent twice in a row.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from watcher.agents._sinks import RunEvent
from watcher.agents._tools import ToolOutcome
from watcher.core.observations import AssistantMessage, Done, HarnessError, ToolCall, ToolResult, UserMessage

if TYPE_CHECKING:
    from watcher.agents._run_inbox import InboxItem
    from watcher.agents.run import AgentRun, RunResult

__all__ = ["RunLoop"]

log = logging.getLogger("watcher.agents")


@dataclass(slots=True)
class _Partial:
    """What a streamed response had produced so far (read when it is interrupted)."""

    text: str = ""
    tool_use: bool = False
    input_tokens: int = 0


class RunLoop:
    """Drives one run's turns and keeps its counters."""

    def __init__(self, run: AgentRun) -> None:
        self.agent = run
        self.steps = 0
        self.streak = 0  # consecutive turns that answered an interjection
        self.corrective_steps = 0
        self.corrective_tokens = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.interrupt_ms: list[float] = []
        self.last_text = ""
        self._turn: asyncio.Task[Any] | None = None
        self._interrupt_at: float | None = None
        self._partial = _Partial()

    # --- called by the run (any moment, on the run's loop) -------------------------------------

    def at_cap(self) -> bool:
        """True when one more corrective turn would break ``max_corrections_per_step``."""
        return self.streak >= self.agent.max_corrections_per_step

    def interrupt(self) -> None:
        """Cancel the streamed response in flight, if any (the SDK closes its connection)."""
        turn = self._turn
        if turn is not None and not turn.done() and self._interrupt_at is None:
            self._interrupt_at = time.perf_counter()
            turn.cancel()

    # --- the loop ------------------------------------------------------------------------------

    async def drive(self) -> RunResult:
        """Run turns until the run completes, stops or fails; returns its result."""
        run = self.agent
        pending: list[dict[str, Any]] | None = [{"type": "text", "text": run.prompt}]
        run.runtime.observe(run.name, UserMessage(text=run.prompt))
        carried: list[InboxItem] = []  # interjections taken for the next request, not yet sent
        try:
            while True:
                await self._checkpoint()
                delivered = run.take_inbox()
                if delivered:
                    pending = [*(pending or []), *({"type": "text", "text": text} for _, text in delivered)]
                    carried = [*carried, *(item for item, _ in delivered)]
                stop = run.stop_requested()
                if stop is not None:
                    self._append_user(pending or [])
                    run.undeliverable(carried, f"the run was {stop[0]} before a request carried it")
                    return run.finish(*stop)
                if pending is None:
                    return run.finish("completed")
                if self.steps >= run.max_steps:
                    self._append_user(pending)
                    run.undeliverable(carried, "the run reached max_steps before a request carried it")
                    return run.finish("max_steps", f"stopped after {self.steps} steps (max_steps)")
                self._append_user(pending)
                corrective = bool(carried)
                self.steps += 1
                self.streak = self.streak + 1 if corrective else 0
                run.delivered(carried)
                carried = []
                message = await self._turn_once(corrective)
                pending = [] if message is None else await self._after(message)
        except asyncio.CancelledError:
            run.finish("cancelled", "the run's task was cancelled")
            raise
        except Exception as exc:
            detail = f"{type(exc).__name__}: {exc}"
            run.runtime.observe(run.name, HarnessError(text=detail))
            run.finish("failed", detail)
            raise

    async def _checkpoint(self) -> None:
        """Wait for the watchers to judge what was just published (up to ``checkpoint_s``).

        An urgent interjection or a stop ends the wait early.
        """
        run = self.agent
        loop = asyncio.get_running_loop()
        start = loop.time()
        while not run.settled():
            waited = loop.time() - start
            if run.inbox_urgent() or waited >= run.checkpoint_s:
                if waited >= run.checkpoint_s > 0:
                    log.info("agent run %r: watchers still busy after %.1fs; going on", run.name, waited)
                return
            await asyncio.sleep(0.001)

    def _append_user(self, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        messages = self.agent.messages
        if messages and messages[-1]["role"] == "user":
            previous = messages[-1]["content"]
            previous = [{"type": "text", "text": previous}] if isinstance(previous, str) else list(previous)
            messages[-1] = {"role": "user", "content": [*previous, *blocks]}
        else:
            messages.append({"role": "user", "content": blocks})

    # --- one turn --------------------------------------------------------------------------------

    async def _turn_once(self, corrective: bool) -> Any:
        """Stream one response; None when it was interrupted."""
        if corrective:
            self.corrective_steps += 1
        self._partial = _Partial()
        self._interrupt_at = None
        turn = asyncio.get_running_loop().create_task(self._stream(self.steps), name=f"watcher-turn:{self.agent.name}")
        self._turn = turn
        try:
            await asyncio.wait({turn})
        except asyncio.CancelledError:  # the run itself is cancelled: take the stream down with it
            turn.cancel()
            raise
        finally:
            self._turn = None
        if turn.cancelled():
            self._interrupted(corrective)
            return None
        message = turn.result()  # an API or transport error propagates and fails the run
        usage = message.usage
        spent_in = usage.input_tokens + (usage.cache_creation_input_tokens or 0) + (usage.cache_read_input_tokens or 0)
        self.input_tokens += spent_in
        self.output_tokens += usage.output_tokens
        if corrective:
            self.corrective_tokens += spent_in + usage.output_tokens
        return message

    async def _stream(self, step: int) -> Any:
        run = self.agent
        partial = self._partial
        request: dict[str, Any] = {"model": run.model, "max_tokens": run.max_tokens, "messages": list(run.messages)}
        system = run.system_prompt()
        if system:
            request["system"] = system
        if run.tools:
            request["tools"] = [t.definition() for t in run.tools.values()]
        if run.cache:
            request["cache_control"] = {"type": "ephemeral"}
        async with run.client.messages.stream(**request) as stream:
            async for event in stream:
                kind = event.type
                if kind == "text":
                    partial.text += event.text
                    run.sinks.emit(RunEvent("text", event.text, {"step": step}, run.name))
                elif kind == "content_block_start" and event.content_block.type == "tool_use":
                    partial.tool_use = True
                    block = event.content_block
                    run.sinks.emit(RunEvent("tool_call_start", block.name, {"id": block.id, "step": step}, run.name))
                elif kind == "message_start":
                    partial.input_tokens = event.message.usage.input_tokens
            return await stream.get_final_message()

    def _interrupted(self, corrective: bool) -> None:
        run = self.agent
        latency = (time.perf_counter() - self._interrupt_at) * 1000 if self._interrupt_at is not None else 0.0
        self.interrupt_ms.append(latency)
        partial = self._partial
        self.input_tokens += partial.input_tokens
        if corrective:
            self.corrective_tokens += partial.input_tokens
        kept = bool(partial.text.strip()) and not partial.tool_use
        if kept:
            run.messages.append({"role": "assistant", "content": [{"type": "text", "text": partial.text.rstrip()}]})
        if partial.text:
            extra = {"interrupted": True, "kept": kept}
            run.runtime.observe(run.name, AssistantMessage(text=partial.text, extra=extra))
        data = {"step": self.steps, "kept_text": kept, "dropped_tool_use": partial.tool_use, "latency_ms": latency}
        run.sinks.emit(RunEvent("interrupted", partial.text, data, run.name))

    async def _after(self, message: Any) -> list[dict[str, Any]] | None:
        """Record a complete response; returns the next user content (tool results) or None."""
        run = self.agent
        blocks = [_param(block) for block in message.content]
        blocks = [b for b in blocks if not (b["type"] == "text" and not b["text"].strip())]
        if blocks:
            run.messages.append({"role": "assistant", "content": blocks})
        text = "".join(b["text"] for b in blocks if b["type"] == "text")
        if text.strip():
            self.last_text = text
            run.runtime.observe(run.name, AssistantMessage(text=text))
        calls = [b for b in blocks if b["type"] == "tool_use"]
        for call in calls:
            run.runtime.observe(run.name, ToolCall(id=call["id"], name=call["name"], input=call["input"]))
            run.sinks.emit(RunEvent("tool_call", call["name"], {"id": call["id"], "input": call["input"]}, run.name))
        if calls:  # answered even when the turn stopped for another reason: history stays valid
            return await self._run_tools(calls)
        run.runtime.observe(run.name, Done())
        run.sinks.emit(RunEvent("turn_end", "", {"step": self.steps, "stop_reason": message.stop_reason}, run.name))
        return None

    async def _run_tools(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        run = self.agent
        results = []
        for call in calls:
            stop = run.stop_requested()
            tool = run.tools.get(call["name"])
            if stop is not None:
                outcome = ToolOutcome(f"not run: the run was {stop[0]} ({stop[1]})", is_error=True)
            elif tool is None:
                known = ", ".join(run.tools) or "none"
                outcome = ToolOutcome(f"unknown tool {call['name']!r}; the tools are: {known}", is_error=True)
            else:
                outcome = await tool.call(call["input"])
            run.runtime.observe(
                run.name, ToolResult(tool_call_id=call["id"], output=outcome.output, is_error=outcome.is_error)
            )
            data = {"id": call["id"], "name": call["name"], "is_error": outcome.is_error}
            run.sinks.emit(RunEvent("tool_result", outcome.output, data, run.name))
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
