"""Handing cells from the kernel's main thread to the runtime, in batches at most four times a second.

``put`` (main thread) appends the observation and, only if no hand-over is already on its way,
wakes the runtime thread: one ``call_soon_threadsafe`` per batch, not per cell. On the runtime
thread a batch is published at once when the last one went out more than ``INTERVAL`` ago, else
when that interval is over. Cells run back to back thus reach the watchers together, and the
engine judges them in one evaluation instead of one each, which keeps the runtime thread from
competing with the cells for the GIL (``benchmarks/bench_cells.py``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

from watcher.core.observations import CellExecuted
from watcher.runtime.hub import Runtime

__all__ = ["INTERVAL", "CellOutbox"]

INTERVAL = 0.25


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
        self.batches += 1
        runtime = self._runtime()
        for cell in cells:
            runtime.observe(self._session, cell)
        if self.after_batch is not None:
            self.after_batch()
