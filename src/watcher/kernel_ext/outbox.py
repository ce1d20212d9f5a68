"""Handing cells from the kernel's main thread to the runtime, in batches at most ten times a second.

``put`` (main thread) appends the observation and, only if no hand-over is already on its way,
wakes the runtime thread: one ``call_soon_threadsafe`` per batch, not per cell. On the runtime
thread a batch is published at once when the last one went out more than ``INTERVAL`` ago, else
when that interval is over. Cells run back to back thus reach the watchers together, and the
engine judges them in one evaluation instead of one each, which keeps the runtime thread from
competing with the cells for the GIL (``benchmarks/bench_cells.py``).

``catch_up`` runs once after a batch settles: a watcher that still holds unjudged cells (the
engine skips a breakpoint when other events are queued behind it, its own evaluation events
included) evaluates them then.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

from watcher.core.observations import CellExecuted
from watcher.runtime.engine import breakpoints_of
from watcher.runtime.hub import Runtime

__all__ = ["INTERVAL", "CellOutbox"]

INTERVAL = 0.1
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
        self._catch_up: asyncio.TimerHandle | None = None
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
        if self._catch_up is not None:
            self._catch_up.cancel()
        self._catch_up = self._loop.call_later(CATCH_UP_S, self._spawn_catch_up, cells[-1])
        if self.after_batch is not None:
            self.after_batch()

    def _spawn_catch_up(self, last: CellExecuted) -> None:
        self._catch_up = None
        task = self._loop.create_task(self.catch_up(last))
        self._tasks.add(task)  # a strong reference until done
        task.add_done_callback(self._tasks.discard)

    async def catch_up_all(self) -> None:
        """``catch_up`` for the newest cell published, now (used before showing a settled state)."""
        if self._newest is not None:
            if self._catch_up is not None:
                self._catch_up.cancel()
                self._catch_up = None
            await self.catch_up(self._newest)

    async def catch_up(self, last: CellExecuted) -> None:
        """Evaluate the notebook watchers still holding unjudged cells (runtime thread)."""
        points = breakpoints_of(last)
        for (session, _), watcher in list(self._runtime().watchers.items()):
            sub = watcher.subscription
            idle = sub is None or sub.idle
            due = next((p for p in points if p in watcher.spec.triggers.on), None)
            if session == self._session and due and idle and watcher.unevaluated and not watcher.busy:
                await watcher.evaluate(due)
