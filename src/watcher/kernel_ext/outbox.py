"""Handing cells from the kernel's main thread to the runtime, in batches at most four times a second.

``put`` (main thread) appends the observation and, only if no hand-over is already on its way,
wakes the runtime thread: one ``call_soon_threadsafe`` per batch, not per cell. On the runtime
thread a batch is published at once when the last one went out more than ``INTERVAL`` ago, else
when that interval is over. Cells run back to back thus reach the watchers together, and the
engine judges them in one evaluation instead of one each, which keeps the runtime thread from
competing with the cells for the GIL (``benchmarks/bench_cells.py``).

``catch_up`` runs once a session has been quiet for ``CATCH_UP_S``: a watcher that still holds
unjudged observations evaluates them then. The engine skips a breakpoint when any event is queued
behind it, other watchers' evaluation events included, so with two watchers on one session a
breakpoint can otherwise go unjudged (reported to the runtime's owner). Agent runs started in the
notebook are covered too (``seen``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

from watcher.core.observations import CellExecuted, Observation
from watcher.runtime.engine import breakpoints_of
from watcher.runtime.hub import Runtime

__all__ = ["INTERVAL", "CellOutbox"]

INTERVAL = 0.25
CATCH_UP_S = 0.3


class CellOutbox:
    """Cells waiting for the runtime thread, and the timers that publish them."""

    def __init__(self, loop: asyncio.AbstractEventLoop, runtime: Callable[[], Runtime], session: str) -> None:
        self._loop = loop
        self._runtime = runtime
        self._session = session
        self._cells: list[CellExecuted] = []
        self._lock = threading.Lock()
        self._woken = False
        self._last = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._catch_ups: dict[str, asyncio.TimerHandle] = {}
        self._last_seen: dict[str, Observation] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._newest: CellExecuted | None = None
        self.after_batch: Callable[[], None] | None = None
        self.batches = 0

    def put(self, cell: CellExecuted) -> None:
        """Queue a cell (main thread); returns at once."""
        with self._lock:
            self._cells.append(cell)
            wake, self._woken = not self._woken, True
        if wake:
            self._loop.call_soon_threadsafe(self._schedule)

    # --- runtime thread ------------------------------------------------------------------------

    def _schedule(self) -> None:
        if self._timer is not None:
            return
        delay = max(0.0, self._last + INTERVAL - time.monotonic())
        self._timer = self._loop.call_later(delay, self.publish)

    def publish(self) -> None:
        """Publish every queued cell now (runtime thread)."""
        self._timer = None
        with self._lock:
            cells, self._cells = self._cells, []
            self._woken = False
        if not cells:
            return
        self._last = time.monotonic()
        self._newest = cells[-1]
        self.batches += 1
        runtime = self._runtime()
        for cell in cells:
            runtime.observe(self._session, cell)
        self.later(self._session, cells[-1])
        if self.after_batch is not None:
            self.after_batch()

    def later(self, session: str, last: Observation) -> None:
        """Catch up on ``session`` once it has been quiet for ``CATCH_UP_S`` (runtime thread)."""
        timer = self._catch_ups.pop(session, None)
        if timer is not None:
            timer.cancel()
        self._catch_ups[session] = self._loop.call_later(CATCH_UP_S, self._spawn_catch_up, session, last)

    def _spawn_catch_up(self, session: str, last: Observation) -> None:
        self._catch_ups.pop(session, None)
        task = self._loop.create_task(self.catch_up(session, last))
        self._tasks.add(task)  # a strong reference until done
        task.add_done_callback(self._tasks.discard)

    async def catch_up_all(self) -> None:
        """Catch up on every session now (used before showing a settled state)."""
        sessions = set(self._catch_ups) | ({self._session} if self._newest is not None else set())
        for timer in self._catch_ups.values():
            timer.cancel()
        self._catch_ups.clear()
        for session in sessions:
            last = self._newest if session == self._session else self._last_seen.get(session)
            if last is not None:
                await self.catch_up(session, last)

    def seen(self, session: str, last: Observation) -> None:
        """Note an observation of an agent run started here; catch up on it when it goes quiet."""
        self._last_seen[session] = last
        if breakpoints_of(last):
            self.later(session, last)

    async def catch_up(self, session: str, last: Observation) -> None:
        """Evaluate the watchers of ``session`` still holding unjudged observations (runtime thread)."""
        points = breakpoints_of(last)
        for (owner, _), watcher in list(self._runtime().watchers.items()):
            sub = watcher.subscription
            idle = sub is None or sub.idle
            due = next((p for p in points if p in watcher.spec.triggers.on), None)
            if owner == session and due and idle and watcher.unevaluated and not watcher.busy:
                await watcher.evaluate(due)
