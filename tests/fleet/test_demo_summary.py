"""The fleet demo runs, and ``make demo``'s notebook report reads a fleet back from the journal."""

from __future__ import annotations

from pathlib import Path

import pytest

from watcher.demo.fleet import _run
from watcher.demo.notebooks import summarise
from watcher.runtime import Journal

pytestmark = pytest.mark.slow


async def test_the_demo_fleet_and_its_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    await _run(tmp_path / "j.sqlite3")
    timeline = capsys.readouterr().out
    assert "waiter  PAUSED" in timeline and "← sync from client (sent)" in timeline
    with Journal(tmp_path / "j.sqlite3") as journal:
        report = summarise(journal.read(0, limit=100_000))
    assert report[0] == "  fleet fleet: 3 of 3 tasks ended", report
    lines = "\n".join(report)
    assert "waiter         aborted" in lines and "server         completed" in lines
    assert [line.split(":")[0].strip() for line in report if line.strip().startswith("nudge")] == [
        "nudge hint to waiter by fleet", "nudge warning to waiter by fleet", "nudge warning to waiter by fleet",
        "nudge critical to waiter by fleet", "nudge critical to waiter by fleet",
    ]  # fmt: skip
    assert "pause waiter by fleet" in lines and "learning relayed client -> server: " in lines
    assert not any("observations" in line for line in report)  # the tasks' own steps are not listed one by one
