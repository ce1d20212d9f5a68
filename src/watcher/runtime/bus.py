"""The event bus: the runtime's ``Fanout`` of events to watchers, the journal and displays.

Each subscriber has its own bounded queue and task (``watcher.runtime.fanout``). When a queue is
full, non-critical events (observations, evaluations) are dropped and counted; critical ones
(interjections, deliveries, session and watcher changes) are kept beyond the bound, so they are
never lost.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable

from watcher.runtime.events import Event
from watcher.runtime.fanout import Fanout, Subscription

__all__ = ["EventBus", "Handler", "Subscription"]

Handler = Callable[[Event], Awaitable[None] | None]


def _drop_unless_critical(queue: deque[Event], event: Event) -> bool:
    return not event.critical


class EventBus(Fanout[Event]):
    """Fans events out to subscribers, each in its own task (must be used on one event loop)."""

    def __init__(self, *, maxsize: int = 10_000) -> None:
        super().__init__(maxsize=maxsize, overflow=_drop_unless_critical, label="watcher-bus")
