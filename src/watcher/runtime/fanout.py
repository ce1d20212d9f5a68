"""Fan-out: hand each item to every subscriber, each with its own queue and its own task.

``publish`` never blocks and never raises. A failing subscriber's errors are counted (the first
is logged with its traceback); a slow one only fills its own queue. What happens to an item that
finds a queue full is the fan-out's ``overflow`` policy: the event bus drops non-critical events
(and counts them), a run's display sinks merge consecutive text deltas; an item the policy does
not absorb is queued beyond the bound, so nothing the policy keeps is ever lost.

Queues are plain deques with a wake-up event rather than ``asyncio.Queue``: the bus is on the hot
path of every observation. ``offthread`` subscribers' sync handlers run in a worker thread, so a
display callback that blocks cannot stall the event loop.
"""

from __future__ import annotations

import asyncio
import inspect
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from watcher.core.errors import JournalError, WatcherError
from watcher.core.logs import logger

__all__ = ["Fanout", "Overflow", "Subscription"]

log = logger("watcher.fanout")

T = TypeVar("T")

#: what to do with an item that finds a queue full: True when it was absorbed (dropped or merged)
Overflow = Callable[[deque[T], T], bool]


@dataclass(eq=False)
class Subscription(Generic[T]):
    """One subscriber: its queue, its task, and what overflowed or failed."""

    name: str
    handler: Callable[[T], Awaitable[None] | None]
    maxsize: int
    offthread: bool = False
    queue: deque[T] = field(default_factory=deque)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    settled: asyncio.Event = field(default_factory=asyncio.Event)  # set while idle
    dropped: int = 0  # items the overflow policy absorbed (dropped or merged)
    failures: int = 0
    task: asyncio.Task[None] | None = None
    busy: bool = False

    @property
    def idle(self) -> bool:
        """Nothing queued and nothing being handled (or nothing ever will be: its task ended)."""
        return (not self.busy and not self.queue) or (self.task is not None and self.task.done())

    @property
    def backlog(self) -> int:
        """Items queued and not yet handled."""
        return len(self.queue)


class Fanout(Generic[T]):
    """Fans items out to subscribers, each in its own task (must be used on one event loop)."""

    def __init__(
        self, *, maxsize: int, overflow: Overflow[T] | None = None, offthread: bool = False, label: str = "fanout"
    ) -> None:
        self._maxsize = maxsize
        self._overflow = overflow
        self._offthread = offthread
        self._label = label
        self._subscriptions: list[Subscription[T]] = []

    @property
    def subscriptions(self) -> tuple[Subscription[T], ...]:
        """The current subscribers."""
        return tuple(self._subscriptions)

    def subscribe(
        self, name: str, handler: Callable[[T], Awaitable[None] | None], *, maxsize: int | None = None
    ) -> Subscription[T]:
        """Add a subscriber; ``handler`` may be sync or async. Call from inside the running loop."""
        sub = Subscription(name, handler, maxsize or self._maxsize, self._offthread)
        sub.settled.set()
        sub.task = asyncio.get_running_loop().create_task(_pump(sub), name=f"{self._label}:{name}")
        self._subscriptions.append(sub)
        return sub

    def unsubscribe(self, sub: Subscription[T]) -> None:
        """Remove a subscriber and stop its task; what it had queued is discarded."""
        if sub in self._subscriptions:
            self._subscriptions.remove(sub)
        if sub.task is not None:
            sub.task.cancel()

    def publish(self, item: T) -> None:
        """Hand ``item`` to every subscriber without waiting for any of them."""
        overflow = self._overflow
        for sub in self._subscriptions:
            if len(sub.queue) >= sub.maxsize and overflow is not None and overflow(sub.queue, item):
                sub.dropped += 1
                continue
            sub.queue.append(item)
            sub.wake.set()
            sub.settled.clear()

    async def drain(self) -> None:
        """Wait until every subscriber has handled everything published so far."""
        # a handler may publish to subscribers already waited for, so check again until all are idle
        while not all(sub.idle for sub in self._subscriptions):
            for sub in self._subscriptions:
                if not sub.idle:
                    await sub.settled.wait()

    async def close(self, grace_s: float | None = None) -> None:
        """Let subscribers finish what is queued (up to ``grace_s``, if given), then stop their tasks."""
        try:
            await asyncio.wait_for(self.drain(), grace_s)
        except TimeoutError:
            for sub in self._subscriptions:
                if not sub.idle:
                    log.warning(
                        "%s %s still had %d items after %.1fs; dropped", self._label, sub.name, sub.backlog, grace_s
                    )
        tasks = [sub.task for sub in self._subscriptions if sub.task]
        for sub in list(self._subscriptions):
            self.unsubscribe(sub)
        await asyncio.gather(*tasks, return_exceptions=True)


def _is_async(handler: object) -> bool:
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(type(handler).__call__)


async def _pump(sub: Subscription[T]) -> None:
    is_async = _is_async(sub.handler)
    queue = sub.queue
    while True:
        await sub.wake.wait()
        sub.wake.clear()
        sub.busy = True
        try:
            while queue:
                item = queue.popleft()
                try:
                    if sub.offthread and not is_async:
                        result = await asyncio.to_thread(sub.handler, item)
                    else:
                        result = sub.handler(item)
                    if result is not None and inspect.isawaitable(result):
                        await result
                except asyncio.CancelledError:
                    raise
                except JournalError:
                    sub.failures += 1  # the journal logs its own failure once, and its closer reports it
                except WatcherError as exc:
                    # a deliberate error already says what failed and what to do: no traceback
                    sub.failures += 1
                    if sub.failures == 1:
                        log.error("subscriber %r failed: %s (later failures only counted)", sub.name, exc)
                except Exception:
                    sub.failures += 1
                    if sub.failures == 1:
                        log.exception(
                            "subscriber %r failed; it keeps receiving (later failures only counted)", sub.name
                        )
        finally:
            sub.busy = False
            if not queue:
                sub.settled.set()
