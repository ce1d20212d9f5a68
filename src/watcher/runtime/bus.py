"""The event bus: one publisher side, many isolated subscribers.

``publish`` never blocks and never raises: each subscriber has its own bounded queue and its own
task. A failing subscriber's errors are counted and logged; a slow one only fills its own queue,
where non-critical events are then dropped (and counted) while critical ones (interjections,
deliveries, session and watcher changes) are kept beyond the bound, so they are never lost.

Queues are plain deques with a wake-up event rather than ``asyncio.Queue``: the bus is on the hot
path of every observation, and a subscriber drains everything queued in one wake-up.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from watcher.core.errors import WatcherError
from watcher.runtime.events import Event

__all__ = ["EventBus", "Handler", "Subscription"]

log = logging.getLogger("watcher.bus")

Handler = Callable[[Event], Awaitable[None] | None]


@dataclass(eq=False)
class Subscription:
    """One subscriber: its queue, its task, and what it lost or failed on."""

    name: str
    handler: Handler
    maxsize: int
    queue: deque[Event] = field(default_factory=deque)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    settled: asyncio.Event = field(default_factory=asyncio.Event)  # set while idle
    dropped: int = 0
    failures: int = 0
    task: asyncio.Task[None] | None = None
    busy: bool = False

    @property
    def idle(self) -> bool:
        """Nothing queued and nothing being handled (or nothing ever will be: its task ended)."""
        return (not self.busy and not self.queue) or (self.task is not None and self.task.done())

    @property
    def backlog(self) -> int:
        """Events queued and not yet handled."""
        return len(self.queue)


class EventBus:
    """Fans events out to subscribers, each in its own task (must be used on one event loop)."""

    def __init__(self, *, maxsize: int = 10_000) -> None:
        self._maxsize = maxsize
        self._subscriptions: list[Subscription] = []

    @property
    def subscriptions(self) -> tuple[Subscription, ...]:
        """The current subscribers."""
        return tuple(self._subscriptions)

    def subscribe(self, name: str, handler: Handler, *, maxsize: int | None = None) -> Subscription:
        """Add a subscriber; ``handler`` may be sync or async. Call from inside the running loop."""
        sub = Subscription(name, handler, maxsize or self._maxsize)
        sub.settled.set()
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
            if len(sub.queue) >= sub.maxsize and not event.critical:
                sub.dropped += 1
                continue
            sub.queue.append(event)
            sub.wake.set()
            sub.settled.clear()

    async def drain(self) -> None:
        """Wait until every subscriber has handled everything published so far."""
        # a handler may publish to subscribers already waited for, so check again until all are idle
        while not all(sub.idle for sub in self._subscriptions):
            for sub in self._subscriptions:
                if not sub.idle:
                    await sub.settled.wait()

    async def close(self) -> None:
        """Let subscribers finish what is queued, then stop their tasks."""
        await self.drain()
        tasks = [sub.task for sub in self._subscriptions if sub.task]
        for sub in list(self._subscriptions):
            self.unsubscribe(sub)
        await asyncio.gather(*tasks, return_exceptions=True)

    @staticmethod
    async def _pump(sub: Subscription) -> None:
        is_async = inspect.iscoroutinefunction(sub.handler)
        queue = sub.queue
        while True:
            await sub.wake.wait()
            sub.wake.clear()
            sub.busy = True
            try:
                while queue:
                    event = queue.popleft()
                    try:
                        result = sub.handler(event)
                        if is_async or (result is not None and inspect.isawaitable(result)):
                            await result  # type: ignore[misc]
                    except asyncio.CancelledError:
                        raise
                    except WatcherError as exc:  # a reported failure (the journal closed): one line, once
                        sub.failures += 1
                        if sub.failures == 1:
                            log.error("subscriber %r: %s", sub.name, exc)
                    except Exception:
                        sub.failures += 1
                        log.exception(
                            "subscriber %r failed on a %s event; it keeps receiving events", sub.name, event.kind
                        )
            finally:
                sub.busy = False
                if not queue:
                    sub.settled.set()
