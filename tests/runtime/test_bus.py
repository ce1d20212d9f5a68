"""The event bus: a failing or slow subscriber affects no other and never blocks the publisher."""

from __future__ import annotations

import asyncio
import time

import pytest

from watcher.core.interjection import Interjection
from watcher.core.observations import UserMessage
from watcher.runtime.bus import EventBus
from watcher.runtime.events import Event, InterjectionEvent, ObservationEvent


def _obs(i: int) -> ObservationEvent:
    return ObservationEvent(session="s", observation=UserMessage(text=str(i)), index=i)


def _interjection(i: int) -> InterjectionEvent:
    return InterjectionEvent(session="s", interjection=Interjection(content=f"i{i}", id=str(i)), status="queued")


async def test_failing_subscriber_does_not_affect_others(caplog: pytest.LogCaptureFixture) -> None:
    bus = EventBus()
    seen: list[int] = []

    def broken(event: Event) -> None:
        raise RuntimeError("subscriber bug")

    bad = bus.subscribe("broken", broken)
    bus.subscribe("good", lambda e: seen.append(e.index) if isinstance(e, ObservationEvent) else None)
    for i in range(50):
        bus.publish(_obs(i))
    await bus.drain()
    assert seen == list(range(50))
    assert bad.failures == 50
    assert "subscriber 'broken' failed" in caplog.text
    await bus.close()


async def test_slow_subscriber_never_blocks_publisher_or_others() -> None:
    bus = EventBus(maxsize=10)
    fast: list[int] = []
    slow: list[str] = []
    release = asyncio.Event()

    async def sluggish(event: Event) -> None:
        await release.wait()
        slow.append(event.kind)

    async def quick(event: Event) -> None:
        if isinstance(event, ObservationEvent):
            fast.append(event.index)

    slow_sub = bus.subscribe("slow", sluggish)
    bus.subscribe("fast", quick, maxsize=10_000)
    started = time.perf_counter()
    for i in range(1000):
        bus.publish(_obs(i))
        if i % 100 == 0:
            bus.publish(_interjection(i))
        if i % 50 == 0:
            await asyncio.sleep(0)  # let the fast subscriber run, as a live publisher would
    publish_time = time.perf_counter() - started
    for _ in range(200):
        if len(fast) == 1000:
            break
        await asyncio.sleep(0.005)
    assert fast == list(range(1000)), "the fast subscriber got everything while the slow one was stuck"
    assert publish_time < 1.0
    assert slow_sub.dropped > 0, "non-critical events beyond the slow subscriber's queue are dropped and counted"
    release.set()
    await bus.drain()
    assert slow.count("interjection") == 10, "critical events are never dropped"
    assert len(slow) + slow_sub.dropped == 1010
    await bus.close()


async def test_drain_does_not_wait_for_a_cancelled_subscriber() -> None:
    bus = EventBus()
    gate = asyncio.Event()

    async def stuck(event: Event) -> None:
        await gate.wait()

    sub = bus.subscribe("stuck", stuck)
    for i in range(3):
        bus.publish(_obs(i))
    await asyncio.sleep(0)
    assert sub.task is not None
    sub.task.cancel()
    await asyncio.wait_for(bus.drain(), 1.0)
    await bus.close()


async def test_order_is_kept_through_overflow() -> None:
    bus = EventBus(maxsize=2)
    got: list[str] = []
    gate = asyncio.Event()

    async def handler(event: Event) -> None:
        await gate.wait()
        if isinstance(event, InterjectionEvent):
            got.append(event.interjection.id)

    bus.subscribe("h", handler)
    for i in range(20):
        bus.publish(_interjection(i))
    gate.set()
    await bus.drain()
    assert got == [str(i) for i in range(20)]
    await bus.close()
