"""The daemon's upkeep: engines loaded before the first call, garbage collected between calls."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from watcher.hooks import _upkeep
from watcher.hooks._upkeep import Collector, warm
from watcher.roles import _security_python


def test_warm_loads_the_security_engines() -> None:
    warm()
    assert _security_python._engine is not None  # bandit's test set, built once
    # the guard and the scan answer a call of each kind without error afterwards
    from watcher.guard import judge

    assert judge("Bash", {"command": "rm -rf ~"}, cwd="/tmp").denied


def test_collector_is_inert_until_started() -> None:
    collector = Collector()
    collector.answered(busy=False)
    collector.idle(60.0)
    assert gc.isenabled()
    assert collector.since_full == 0


@pytest.fixture
def started() -> Iterator[Collector]:
    collector = Collector()
    collector.start()
    try:
        yield collector
    finally:
        collector.stop()
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_collector_collects_between_calls_not_during_them(started: Collector) -> None:
    assert not gc.isenabled()  # nothing stops a call half-way to scan the heap
    assert gc.get_freeze_count() > 0  # what was loaded at start is never scanned again
    garbage = [[] for _ in range(2000)]
    for item in garbage:
        item.append(item)  # cycles: only a collection frees them
    del garbage, item
    assert gc.get_count()[0] >= 2000
    started.answered(busy=True)  # another call is being judged: later
    assert gc.get_count()[0] >= 2000
    started.answered(busy=False)
    assert gc.get_count()[0] < 1000  # collected (what the test itself allocated since is counted anew)
    assert started.since_full == 2


def test_collector_collects_everything_when_idle_or_every_so_many_calls(
    started: Collector, monkeypatch: pytest.MonkeyPatch
) -> None:
    started.answered(busy=False)
    started.idle(0.1)
    assert started.since_full == 1  # not idle long enough
    started.idle(_upkeep.IDLE_S)
    assert started.since_full == 0
    monkeypatch.setattr(_upkeep, "FULL_EVERY", 3)
    for _ in range(3):
        started.answered(busy=False)
    assert started.since_full == 0  # a daemon never idle still collects the whole heap


def test_collector_collects_while_busy_past_the_young_limit(
    started: Collector, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_upkeep, "YOUNG_LIMIT", 500)
    garbage: list[list[object]] = [[] for _ in range(2000)]
    for item in garbage:
        item.append(item)
    del garbage, item
    assert gc.get_count()[0] >= 2000
    started.answered(busy=True)
    assert gc.get_count()[0] < 1000
