"""``wait_until``: the one way tests wait for something that has no event to await.

State owned by another task or process (a fleet's status, a journal row, an editor's
diagnostics) is polled every ``every`` seconds until ``check()`` is truthy; a test that waits for
a time window (staleness, a lease, a rate window) moves a ``FakeClock`` on instead.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["wait_until"]

T = TypeVar("T")


async def wait_until(check: Callable[[], T], within: float = 10.0, *, what: str = "", every: float = 0.02) -> T:
    """Poll ``check`` until it returns something truthy, and return that; fail after ``within`` seconds.

    Raises ``AssertionError`` naming ``what`` (or ``check``) when the time is up, so a test fails
    with what it waited for rather than hanging.
    """
    deadline = time.monotonic() + within
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within:g}s waiting for {what or check}")
        await asyncio.sleep(every)
