"""The event bus: one publisher side, many isolated subscribers.

``publish`` never blocks and never raises: each subscriber has its own bounded queue and its own
task. A failing subscriber's errors are counted and logged; a slow one only fills its own queue,
where non-critical events are then dropped (and counted) while critical ones (interjections,
deliveries, commands) wait in an unbounded overflow so they are never lost.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from watcher.runtime.events import Event

__all__ = ["EventBus", "Handler", "Subscription"]

log = logging.getLogger("watcher.bus")

Handler = Callable[[Event], Awaitable[None] | None]


@dataclass(eq=False)
class Subscription:
    """One subscriber: its queue, its task, and what it lost or failed on."""

    name: str
    handler: Handler
    queue: asyncio.Queue[Event]
    overflow: deque[Event] = field(default_factory=deque)
    dropped: int = 0
    failures: int = 0
    task: asyncio.Task[None] | None = None
    busy: bool = False

    @property
    def idle(self) -> bool:
        """Nothing queued and nothing being handled."""
        return not self.busy and self.queue.empty() and not self.overflow


class EventBus:
    """Fans events out to subscribers, each in its own task (must be used on one event loop)."""

    def __init__(self, *, maxsize: int = 10_000) -> None:
        self._maxsize = maxsize
        self._subscriptions: list[Subscription] = []
        self._closed = False

    @property
    def subscriptions(self) -> tuple[Subscription, ...]:
        """The current subscribers."""
        return tuple(self._subscriptions)

    def subscribe(self, name: str, handler: Handler, *, maxsize: int | None = None) -> Subscription:
        """Add a subscriber; ``handler`` may be sync or async. Call from inside the running loop."""
        sub = Subscription(name, handler, asyncio.Queue(maxsize or self._maxsize))
        sub.task = asyncio.get_running_loop().create_task(self._pump(sub), name=f"watcher-bus:{name}")
        self._subscriptions.append(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        """Remove a subscriber and stop its task; what it had queued is discarded."""
        if sub in self._subscriptions:
            self._subscriptions.remove(sub)
        if sub.task is not None:
            sub.task.cancel()

    def publish(self, event: Event) -> None:
        """Hand ``event`` to every subscriber without waiting for any of them."""
        for sub in self._subscriptions:
            if sub.overflow:
                # keep order: once something overflowed, later events queue behind it
                if event.critical or len(sub.overflow) < self._maxsize:
                    sub.overflow.append(event)
                else:
                    sub.dropped += 1
                continue
            try:
                sub.queue.put_nowait(event)
            except asyncio.QueueFull:
                if event.critical:
                    sub.overflow.append(event)
                else:
                    sub.dropped += 1

    async def drain(self) -> None:
        """Wait until every subscriber has handled everything published so far."""
        while not all(sub.idle for sub in self._subscriptions):
            await asyncio.sleep(0)
            if not all(sub.idle for sub in self._subscriptions):
                await asyncio.sleep(0.001)

    async def close(self) -> None:
        """Let subscribers finish what is queued, then stop their tasks."""
        await self.drain()
        tasks = [sub.task for sub in self._subscriptions if sub.task]
        for sub in list(self._subscriptions):
            self.unsubscribe(sub)
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _pump(self, sub: Subscription) -> None:
        is_async = inspect.iscoroutinefunction(sub.handler)
        while True:
            event = await sub.queue.get()
            sub.busy = True
            try:
                await self._deliver(sub, event, is_async)
                while sub.overflow and not sub.queue.full():
                    sub.queue.put_nowait(sub.overflow.popleft())
            finally:
                sub.busy = False

    @staticmethod
    async def _deliver(sub: Subscription, event: Event, is_async: bool) -> None:
        try:
            result = sub.handler(event)
            if is_async or inspect.isawaitable(result):
                await result  # type: ignore[misc]
        except asyncio.CancelledError:
            raise
        except Exception:
            sub.failures += 1
            log.exception("subscriber %r failed on a %s event; it keeps receiving events", sub.name, event.kind)
