"""A fleet task's channel: its agent run, a gate at its iteration boundaries, and what waits for it.

Nudges and syncs are interjections handed to the run (``AgentRun.inject``): the run keeps them in
its inbox and sends them with its next request, never between a ``tool_use`` and its result.
Pause closes a gate in front of the run's model client: the request the run is about to send
waits there, the conversation stays as it was, and syncs relayed meanwhile wait in the channel.
Resume hands them to the run, cancels the held request (so the next one carries them) and opens
the gate: the run goes on from where it stopped. Abort stops the run.

The gate also publishes the task's heartbeat (``TaskTurn``: step and tokens) after each response.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from watcher.agents import AgentRun
from watcher.core.errors import WatcherError
from watcher.core.interjection import Interjection, Origin
from watcher.runtime.events import TaskTurn
from watcher.runtime.hub import Runtime

__all__ = ["GatedClient", "TaskChannel"]


class _Gate:
    """Open or closed; ``held`` is True while a request waits at it."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.open.set()
        self.held = False

    async def passage(self) -> None:
        if self.open.is_set():
            return
        self.held = True
        try:
            await self.open.wait()
        finally:
            self.held = False


class _GatedStream:
    """``client.messages.stream(...)`` behind the gate; reports each final message's usage."""

    def __init__(self, open_stream: Callable[[], Any], gate: _Gate, on_message: Callable[[Any], None]) -> None:
        self._open_stream = open_stream  # called once past the gate: a request held there never starts
        self._inner: Any = None
        self._gate = gate
        self._on_message = on_message
        self._stream: Any = None

    async def __aenter__(self) -> _GatedStream:
        await self._gate.passage()
        self._inner = self._open_stream()
        self._stream = await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        return await self._inner.__aexit__(*exc)

    def __aiter__(self) -> Any:
        return self._stream.__aiter__()

    async def get_final_message(self) -> Any:
        message = await self._stream.get_final_message()
        self._on_message(message)
        return message


class _GatedMessages:
    def __init__(self, inner: Any, gate: _Gate, on_message: Callable[[Any], None]) -> None:
        self._inner = inner
        self._gate = gate
        self._on_message = on_message

    def stream(self, **request: Any) -> _GatedStream:
        return _GatedStream(lambda: self._inner.stream(**request), self._gate, self._on_message)


class GatedClient:
    """An ``AsyncAnthropic`` whose requests pass the task's gate; everything else is the client's."""

    def __init__(self, inner: Any, gate: _Gate, on_message: Callable[[Any], None]) -> None:
        self._inner = inner
        self.messages = _GatedMessages(inner.messages, gate, on_message)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@dataclass(slots=True)
class _Held:
    """A sync waiting for a paused task."""

    interjection: Interjection
    origin: Origin


class TaskChannel:
    """The fleet's hold on one task: deliver, pause, resume, abort; ``status`` says where it is."""

    def __init__(self, name: str, runtime: Runtime) -> None:
        self.name = name
        self.runtime = runtime
        self.gate = _Gate()
        self.run: AgentRun | None = None
        self.paused = False
        self.held: list[_Held] = []
        self._steps = 0
        self._tokens = (0, 0)

    def client(self, inner: Any) -> GatedClient:
        """The client the task's run must use, so its boundaries pass this channel's gate."""
        return GatedClient(inner, self.gate, self._heartbeat)

    def _heartbeat(self, message: Any) -> None:
        usage = getattr(message, "usage", None)
        spent_in = 0 if usage is None else usage.input_tokens + (usage.cache_read_input_tokens or 0)
        spent_out = 0 if usage is None else usage.output_tokens
        self._steps += 1
        self._tokens = (self._tokens[0] + spent_in, self._tokens[1] + spent_out)
        if self.runtime.journal is not None:  # straight to the journal: it is what the loops read
            self.runtime.journal.append(
                TaskTurn(
                    session=self.name, step=self._steps, input_tokens=self._tokens[0], output_tokens=self._tokens[1]
                )
            )

    @property
    def ended(self) -> bool:
        return self.run is None or self.run.ended

    @property
    def status(self) -> str:
        if self.run is None:
            return "pending"
        if self.run.ended:
            return self.run.status
        return "paused" if self.paused else "running"

    async def deliver(self, interjection: Interjection, origin: Origin) -> str:
        """Hand ``interjection`` to the run (``queued`` for its next boundary) or hold it while paused."""
        if self.run is None or self.run.ended:
            return "undeliverable"
        if self.paused and interjection.action == "sync":
            self.held.append(_Held(interjection, origin))
            return "held"
        try:
            await self.run.inject(interjection, origin=origin)
        except WatcherError:
            return "undeliverable"
        return "queued"

    def pause(self) -> None:
        """Hold the run's next request at the gate (a response streaming now completes first)."""
        if self.paused or self.ended:
            return
        self.paused = True
        self.gate.open.clear()

    async def resume(self) -> int:
        """Hand the held syncs to the run and let it go on; returns how many were handed over."""
        if not self.paused:
            return 0
        self.paused = False
        held, self.held = self.held, []
        handed = 0
        for item in held:
            if await self.deliver(item.interjection, item.origin) == "queued":
                handed += 1
        if handed and self.gate.held and self.run is not None:
            await self.run.interrupt()  # the held request was built before them: the next one carries them
        self.gate.open.set()
        return handed

    def abort(self, reason: str) -> None:
        """Stop the run at once with status ``aborted``."""
        self.gate.open.set()
        if self.run is not None and not self.run.ended:
            self.run.abort(reason)
