"""``FlushLimiter``: at most ``MAX_FLUSHES_PER_S`` flushes of a widget a second, the rest coalesced.

A panel and a run's output both redraw on every event; sending each redraw would flood iopub.
``request`` asks for a flush: at once when none happened for a while, else once at the next slot,
however many requests arrive meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

__all__ = ["MAX_FLUSHES_PER_S", "FlushLimiter"]

MAX_FLUSHES_PER_S = 10


class FlushLimiter:
    """Calls ``flush`` at most ``per_second`` times a second on ``loop`` (the running one if None)."""

    def __init__(
        self,
        flush: Callable[[], None],
        *,
        loop: asyncio.AbstractEventLoop | None = None,
        per_second: float = MAX_FLUSHES_PER_S,
    ) -> None:
        self._flush = flush
        self._loop = loop
        self._interval = 1.0 / per_second
        self._handle: asyncio.TimerHandle | None = None
        self._last = 0.0

    def mark(self) -> None:
        """Record that a flush just happened (called by the flush itself)."""
        self._last = time.monotonic()

    def request(self) -> None:
        """Ask for a flush at the next free slot; requests before it are coalesced into it."""
        if self._handle is not None:
            return
        loop = self._loop or asyncio.get_running_loop()
        delay = max(0.0, self._last + self._interval - time.monotonic())
        self._handle = loop.call_later(delay, self._fire)

    def _fire(self) -> None:
        self._handle = None
        self._flush()
