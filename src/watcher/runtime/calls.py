"""Calling into an event loop from any thread: the one way watcher crosses threads.

An agent run lives on one loop and a notebook's runtime on its own thread's loop, while people
call in from the kernel's main thread (a magic, a button) or any other. ``LoopCalls`` runs a
function or a coroutine on the loop: at once when already on its thread, otherwise handed over
thread-safely, so a caller never touches loop state from the wrong thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import TypeVar

from watcher.core.errors import NoActiveRunError, RuntimeThreadError

__all__ = ["LoopCalls"]

T = TypeVar("T")


class LoopCalls:
    """Calls into ``loop`` (set now or once known) from any thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.loop = loop
        self._thread: int | None = None

    def enter(self, thread: int | None = None) -> None:
        """Record the loop's thread (call from it, or pass its ident): calls from it run directly."""
        self._thread = thread if thread is not None else threading.get_ident()

    @property
    def started(self) -> bool:
        """True once the loop's thread is known."""
        return self._thread is not None

    @property
    def on_loop(self) -> bool:
        """True when called from the loop's own thread."""
        return self._thread == threading.get_ident()

    def call(self, fn: Callable[..., object], *args: object) -> None:
        """Run ``fn(*args)`` on the loop: now when on its thread (or before it starts), else soon."""
        if self._thread is None or self.on_loop or self.loop is None:
            fn(*args)
        else:
            self.loop.call_soon_threadsafe(fn, *args)

    def call_soon(self, fn: Callable[..., object], *args: object) -> None:
        """Schedule ``fn(*args)`` on the loop from any thread; returns at once."""
        self._require().call_soon_threadsafe(fn, *args)

    def submit(self, make: Callable[[], Awaitable[T]]) -> Awaitable[T] | concurrent.futures.Future[T]:
        """Run the coroutine ``make()`` on the loop: a task when on its thread, else a thread-safe future."""
        loop = self._require()
        if self.on_loop:
            return loop.create_task(_run(make))
        return asyncio.run_coroutine_threadsafe(_run(make), loop)

    def schedule(self, coro: Coroutine[object, None, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop from another thread; returns a future the caller may ignore."""
        return asyncio.run_coroutine_threadsafe(coro, self._require())

    def wait(self, coro: Coroutine[object, None, T], timeout: float = 10.0) -> T:
        """Run ``coro`` on the loop and block until it finishes (never from the loop's thread)."""
        if self.on_loop:
            coro.close()
            raise RuntimeThreadError(
                "a blocking call into the event loop was made from the loop's own thread and would deadlock; "
                "await the coroutine instead"
            )
        return self.schedule(coro).result(timeout)

    def _require(self) -> asyncio.AbstractEventLoop:
        if self.loop is None:
            raise NoActiveRunError("no event loop to call into yet: start the run (or the runtime) first")
        return self.loop


async def _run(make: Callable[[], Awaitable[T]]) -> T:
    return await make()
