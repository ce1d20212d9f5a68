"""Urgent interjections cancel the streamed response in flight and start the next turn with them.

The stub keeps streaming (``Reply.endless``) until the client hangs up, and records the
disconnect, so these tests see the cancel reach the wire.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from run_helpers import assert_valid_history, injected_texts, start

from watcher.agents import RunEvent, tool
from watcher.core.evaluation import EvaluationRequest
from watcher.core.interjection import Interjection
from watcher.core.observations import ToolResult
from watcher.core.spec import Triggers, WatcherSpec
from watcher.evaluators import CallableEvaluator
from watcher.testing import Reply, StubAnthropicServer


class _Seen:
    """A display sink that lets a test wait for the first event of a kind (from a given step)."""

    def __init__(self, kind: str, step: int = 1) -> None:
        self.kind, self.step = kind, step
        self.event = asyncio.Event()
        self.events: list[RunEvent] = []

    async def __call__(self, event: RunEvent) -> None:
        self.events.append(event)
        if event.kind == self.kind and event.data.get("step") == self.step:
            self.event.set()


async def test_an_urgent_watcher_interjection_cancels_the_stream_and_starts_the_next_turn() -> None:
    seen = _Seen("text", step=2)

    async def judge(request: EvaluationRequest) -> Interjection | None:
        if not isinstance(request.observations[-1], ToolResult):
            return None
        await seen.event.wait()  # the answer arrives while the next response is streaming
        return Interjection("Stop: that scan is unbounded.", urgent=True, severity="critical")

    spec = WatcherSpec(name="guard", role="guard", triggers=Triggers(on=frozenset({"tool_result"})))
    script = [Reply.tool_use("scan", {"path": "/"}), Reply.endless(interval_s=0.005), Reply.text("Stopped the scan.")]
    with StubAnthropicServer(*script) as stub:
        run = start(
            stub,
            "scan",
            tools=[tool(lambda path: "1 file", name="scan")],
            watchers=[(spec, CallableEvaluator(judge))],
            checkpoint_s=0,
            output=seen,
        )
        result = await asyncio.wait_for(run.wait(), 20)
        await asyncio.to_thread(stub.wait_for_disconnects, 1)
    assert result.status == "completed" and result.interrupts == 1 and result.steps == 3
    assert 0 < result.interrupt_ms[0] < 1000
    third = stub.requests[2].body["messages"]
    assert third[-2]["role"] == "assistant" and third[-2]["content"][0]["text"].startswith("tick"), "partial text kept"
    assert injected_texts(stub.requests[2]) == ["[SUPERVISOR]: Stop: that scan is unbounded."]
    assert result.corrective_steps == 1
    assert_valid_history(list(result.messages))
    interrupted = [e for e in seen.events if e.kind == "interrupted"]
    assert len(interrupted) == 1 and interrupted[0].data["kept_text"] is True


class _ToolUseThenPings(StubAnthropicServer):
    """Streams text and the start of a ``Write`` tool call, then only pings until the client hangs up."""

    def answer_with(self, exchange: Any, reply: Reply) -> None:
        if reply.kind != "stall" or not exchange.request.stream:
            super().answer_with(exchange, reply)
            return
        events = self.events(
            exchange.request,
            Reply.tool_use("Write", {"file_path": "a.py", "content": "x" * 90}, text="Writing it now."),
        )
        opened = next(
            i for i, (_, data) in enumerate(events) if data.get("content_block", {}).get("type") == "tool_use"
        )
        exchange.start_stream()
        for name, data in events[: opened + 2]:  # the tool_use block and its first input fragment
            exchange.send_event(data, name)
        while exchange.wait(0.005):
            exchange.send_event({"type": "ping"}, "ping")
        exchange.hang_up()


async def test_a_partial_turn_holding_a_tool_use_is_never_appended() -> None:
    seen = _Seen("tool_call_start", step=1)
    written: list[Any] = []
    with _ToolUseThenPings(Reply.stall(30), Reply.text("Understood: asking first.")) as stub:
        run = start(
            stub,
            "write a.py",
            tools=[tool(lambda file_path, content: written.append(file_path), name="Write")],
            output=seen,
        )
        await asyncio.wait_for(seen.event.wait(), 10)
        run.guide("Ask before writing files.", urgent=True)
        result = await asyncio.wait_for(run.wait(), 20)
    assert result.interrupts == 1 and written == []
    second = stub.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user"], "the partial assistant turn (text + tool_use) was dropped"
    assert [b["text"] for b in second[0]["content"]] == ["write a.py", "Supervisor:Guidance: Ask before writing files."]
    assert_valid_history(list(result.messages))
    interrupted = next(e for e in seen.events if e.kind == "interrupted")
    assert interrupted.data["dropped_tool_use"] is True and interrupted.data["kept_text"] is False


async def test_pause_cancels_the_stream_and_ends_the_run() -> None:
    seen = _Seen("text", step=1)
    with StubAnthropicServer(Reply.endless(interval_s=0.005)) as stub:
        run = start(stub, "count", output=seen)
        await asyncio.wait_for(seen.event.wait(), 10)
        run.pause("enough")
        result = await asyncio.wait_for(run.wait(), 10)
        await asyncio.to_thread(stub.wait_for_disconnects, 1)
    assert result.status == "paused" and result.detail == "enough" and len(stub.requests) == 1
    assert run.status == "paused" and run.ended


async def test_cancelling_the_awaiting_task_cancels_the_run_and_its_stream() -> None:
    seen = _Seen("text", step=1)
    with StubAnthropicServer(Reply.endless(interval_s=0.005)) as stub:
        run = start(stub, "count", output=seen)
        waiter = asyncio.ensure_future(run.wait())
        await asyncio.wait_for(seen.event.wait(), 10)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        await asyncio.to_thread(stub.wait_for_disconnects, 1)
    assert run.status == "cancelled" and run.ended
