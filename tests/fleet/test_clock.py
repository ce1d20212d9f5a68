"""The supervision's windows run on its clock: a fake one is moved on instead of slept through."""

from __future__ import annotations

from pathlib import Path

import pytest

from watcher.core.errors import ConfigurationError
from watcher.fleet.events import FleetTask, TaskHostBeat
from watcher.fleet.roster import Roster
from watcher.runtime.journal import Journal
from watcher.testing import FakeClock


async def test_a_hosts_tasks_fall_silent_only_once_its_window_has_passed_on_the_clock(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite3")
    clock = FakeClock()
    roster = Roster("f", journal, clock=clock)
    journal.append(FleetTask(session="t1", fleet="f", run="r1"))
    journal.append(TaskHostBeat(session="host:r1", fleet="f", run="r1"))
    await roster.refresh()
    assert roster.silent(1.5) == []
    clock.advance(1.5)
    assert roster.silent(1.5) == [], "exactly the window is not past it"
    clock.advance(0.01)
    assert roster.silent(1.5) == ["t1"]
    journal.append(TaskHostBeat(session="host:r1", fleet="f", run="r1"))  # it was held up, not dead
    await roster.refresh()
    assert roster.silent(1.5) == []
    journal.close()


async def test_a_task_s_age_counts_from_when_the_roster_saw_it_on_its_clock(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite3")
    clock = FakeClock()
    roster = Roster("f", journal, clock=clock)
    clock.advance(100)
    journal.append(FleetTask(session="t1", fleet="f", run="r1"))
    await roster.refresh()
    assert roster.members["t1"].seen == clock.monotonic()
    journal.close()


def test_the_fake_clock_moves_forward_only() -> None:
    clock = FakeClock(start=1_000.0)
    clock.advance(2.5)
    assert (clock.time(), clock.monotonic() - 1_000.0) == (1_002.5, 2.5)
    with pytest.raises(ConfigurationError, match="forward only"):
        clock.advance(-1)
