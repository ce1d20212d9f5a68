"""A clock that moves only when told: the public fake of ``watcher.runtime.clock.Clock``.

Like ``trio.testing.MockClock``, it lets a test step past a staleness threshold, a lease or a
rate window at once, instead of sleeping through it::

    clock = FakeClock()
    roster = Roster("fleet", journal, clock=clock)
    clock.advance(61)  # a minute and a second later, without waiting

It needs nothing of the runtime (the fakes stand alone); it has the two methods a ``Clock`` has.
"""

from __future__ import annotations

import time

from watcher.core.errors import ConfigurationError

__all__ = ["FakeClock"]


class FakeClock:
    """A monotonic and a wall clock that start now (or at ``start``) and move by ``advance`` only."""

    def __init__(self, start: float | None = None) -> None:
        self._wall = time.time() if start is None else start
        self._mono = 1_000.0  # any origin: only differences of monotonic readings mean something

    def monotonic(self) -> float:
        return self._mono

    def time(self) -> float:
        return self._wall

    def advance(self, seconds: float) -> None:
        """Move both clocks ``seconds`` on (never back)."""
        if seconds < 0:
            raise ConfigurationError(f"a clock moves forward only; cannot advance by {seconds:g}s")
        self._mono += seconds
        self._wall += seconds
