"""The clock the runtime and the fleet read time from: a seam that tests replace.

Staleness, a silent host, a lease and a rate window are all "how long since": code that reads
``clock.monotonic()`` instead of ``time.monotonic()`` can be tested by moving a fake clock on
(``watcher.testing.FakeClock``) instead of sleeping through the window.
"""

from __future__ import annotations

import time
from typing import Protocol

__all__ = ["SYSTEM_CLOCK", "Clock", "SystemClock"]


class Clock(Protocol):
    """Where time comes from: a monotonic clock for durations, the wall clock for timestamps."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (durations, deadlines)."""
        ...

    def time(self) -> float:
        """Seconds since the epoch (what is journaled and shown)."""
        ...


class SystemClock:
    """The real clock: ``time.monotonic`` and ``time.time``."""

    def monotonic(self) -> float:
        return time.monotonic()

    def time(self) -> float:
        return time.time()


SYSTEM_CLOCK: Clock = SystemClock()
