"""The run's output fan-out: every sink gets every event at once, none can starve another (seed 004).

Watchers and the journal receive the run's observations through the runtime's event bus, which
already gives each subscriber its own queue and task. The display callbacks (a cell's output, a
widget) get the finer-grained ``RunEvent`` stream here, with the same isolation: one queue and one
task per sink. A sync callback runs in a worker thread, so even one that blocks cannot stall the
event loop. A queue over its bound coalesces consecutive text deltas instead of dropping them, so a
slow display falls behind in chunks but never loses text, and memory stays bounded.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

__all__ = ["OutputSinks", "RunEvent", "RunEventKind", "Sink"]

log = logging.getLogger("watcher.agents")

Sink = Callable[["RunEvent"], Awaitable[None] | None]
RunEventKind: TypeAlias = Literal[
    "text", "tool_call_start", "tool_call", "tool_result", "interjection", "interrupted", "turn_end", "status"
]


@dataclass(frozen=True, slots=True)
class RunEvent:
    """One thing a display shows about a run.

    ``kind`` is ``text`` (a streamed delta in ``text``), ``tool_call_start`` (the model began a
    tool call, its name in ``text``), ``tool_call`` (complete: the tool's name in ``text``, its
    ``input`` in ``data``), ``tool_result`` (the output in ``text``, the tool's ``name`` and
    ``is_error`` in ``data``), ``interjection`` (an injected message, its text in ``text``),
    ``interrupted`` (the streamed response was cancelled), ``turn_end`` or ``status`` (the run's
    final status in ``text``). ``data`` holds the details: ids, inputs, step numbers.
    """

    kind: RunEventKind
    text: str = ""
    data: Mapping[str, Any] = field(default_factory=dict)
    session: str = ""


class _Queue:
    """One sink's queue and task."""

    def __init__(self, fn: Sink, maxsize: int) -> None:
        self.fn = fn
        self.maxsize = maxsize
        self.items: deque[RunEvent] = deque()
        self.wake = asyncio.Event()
        self.coalesced = 0
        self.failures = 0
        self.busy = False
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)
        self.task = asyncio.get_running_loop().create_task(self._pump(), name=f"watcher-sink:{_name(fn)}")

    def put(self, event: RunEvent) -> None:
        last = self.items[-1] if self.items else None
        if len(self.items) >= self.maxsize and event.kind == "text" and last is not None and last.kind == "text":
            self.items[-1] = replace(last, text=last.text + event.text)
            self.coalesced += 1
        else:
            self.items.append(event)
        self.wake.set()

    @property
    def idle(self) -> bool:
        return not self.items and not self.busy

    async def _pump(self) -> None:
        while True:
            while not self.items:
                self.wake.clear()
                await self.wake.wait()
            event = self.items.popleft()
            self.busy = True
            try:
                if self.is_async:
                    await self.fn(event)  # type: ignore[misc]
                else:
                    result = await asyncio.to_thread(self.fn, event)
                    if inspect.isawaitable(result):
                        await result
            except asyncio.CancelledError:
                raise
            except Exception:
                self.failures += 1
                if self.failures == 1:
                    log.exception("output sink %s failed; it keeps receiving events", _name(self.fn))
            finally:
                self.busy = False


def _name(fn: object) -> str:
    return str(getattr(fn, "__qualname__", None) or type(fn).__name__)


class OutputSinks:
    """Fans ``RunEvent``s out to display callbacks, each isolated in its own queue and task."""

    def __init__(self, *, maxsize: int = 32) -> None:
        self._maxsize = maxsize
        self._queues: list[_Queue] = []

    def add(self, fn: Sink) -> None:
        """Add a sink (sync or async callable). Call from inside the run's event loop."""
        self._queues.append(_Queue(fn, self._maxsize))

    def emit(self, event: RunEvent) -> None:
        """Hand ``event`` to every sink without waiting for any of them."""
        for queue in self._queues:
            queue.put(event)

    @property
    def coalesced(self) -> int:
        """Text deltas merged into earlier ones because a sink was behind."""
        return sum(q.coalesced for q in self._queues)

    async def close(self, grace_s: float = 5.0) -> None:
        """Let every sink finish what it has queued (up to ``grace_s``), then stop their tasks."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace_s
        while not all(q.idle for q in self._queues) and loop.time() < deadline:  # noqa: ASYNC110 - several queues, polled
            await asyncio.sleep(0.005)
        for queue in self._queues:
            if not queue.idle:
                log.warning(
                    "output sink %s still had %d events after %.1fs; dropped",
                    _name(queue.fn),
                    len(queue.items),
                    grace_s,
                )
            queue.task.cancel()
        await asyncio.gather(*(q.task for q in self._queues), return_exceptions=True)
        self._queues.clear()
