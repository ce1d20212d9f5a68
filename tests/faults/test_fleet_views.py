"""Fault class 12: what the fleet's views say agrees with what happened, and ``supervise`` judges by the fleet's own settings.

The journals here hold the rows a fleet run writes (its settings, its tasks, their nudges, a
pause, a lost host); the real ``watcher fleet`` CLI reads them in a child process.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from watcher.fleet import load_tasks
from watcher.fleet.events import (
    FleetSettings,
    FleetTask,
    SupervisionReport,
    TaskHealthCheck,
    TaskHostBeat,
    TaskLost,
    TaskTurn,
    WatcherNudge,
    WatcherPause,
)
from watcher.runtime.journal import Journal
from watcher.testing import Reply, StubAnthropicServer
from watcher.widgets.fleet_html import describe_row

from .conftest import no_traceback, watcher_cli

pytestmark = pytest.mark.faults

FLEET = "far"
REASON = "no progress after 5 nudges: the same Bash call 9 times"


def _fleet(argv: list[str], journal: Path) -> Any:
    done = watcher_cli("fleet", *argv, "--journal", str(journal), "--json", timeout=60)
    assert done.returncode == 0 and no_traceback(done.stderr), done.stderr
    lines = done.stdout.splitlines()  # (the JSON, after any line a version of the CLI printed before it)
    return json.loads("\n".join(lines[next(i for i, line in enumerate(lines) if line.startswith(("{", "["))) :]))


def _check(task: str, health: str, status: str, *, nudges: int, diagnosis: str, degraded: bool = False) -> Any:
    return TaskHealthCheck(
        session=task, fleet=FLEET, cycle=7, health=health, status=status, freshness="fresh", nudges=nudges,
        diagnosis=diagnosis, degraded=degraded, recommendation="continue",
    )  # fmt: skip


def _paused_after_five(journal: Path) -> None:
    """A task nudged five times by the fleet and paused, as the watcher loop leaves it."""
    with Journal(journal) as j:
        j.append(FleetTask(session="stuck", fleet=FLEET, run="r1"))
        j.append(TaskTurn(session="stuck", fleet=FLEET, step=9, input_tokens=900, output_tokens=90))
        for n in range(1, 6):
            j.append(WatcherNudge(session="stuck", fleet=FLEET, interjection_id=f"n{n}", severity="hint", message="m", count=n))  # fmt: skip
        j.append(WatcherPause(session="stuck", fleet=FLEET, reason=REASON))
        j.append(_check("stuck", "paused", "paused", nudges=0, diagnosis="paused"))
        j.append(SupervisionReport(session="fleet:" + FLEET, fleet=FLEET, watcher_cycles=7))


def test_status_stats_json_and_panel_count_nudges_the_same_way(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite3"
    _paused_after_five(journal)
    rows = {r["task"]: r for r in _fleet(["status"], journal)}
    stats = _fleet(["stats"], journal)
    assert rows["stuck"]["nudges"] == 5 == stats["nudges_sent"], "status and stats count the nudges sent"
    assert rows["stuck"]["ladder"] == 0, "the ladder starts again after the pause"
    table = watcher_cli("fleet", "status", "--journal", str(journal)).stdout
    head, line = table.splitlines()[0].split(), table.splitlines()[1].split()
    assert line[head.index("nudges") - 1] == "5" and line[head.index("ladder") - 1] == "0", table  # "idle s" is 2 words
    panel = describe_row(rows["stuck"])
    assert "5 nudge(s) sent" in panel and "ladder 0" in panel


def test_health_after_a_pause_gives_the_pause_reason(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite3"
    _paused_after_five(journal)
    text = watcher_cli("fleet", "health", "stuck", "--journal", str(journal))
    assert text.returncode == 0 and REASON in text.stdout, text.stdout
    assert "— paused" not in text.stdout
    assert _fleet(["health", "stuck"], journal)["diagnosis"] == REASON


def test_under_degraded_loops_a_task_never_checked_is_not_called_healthy(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite3"
    with Journal(journal) as j:
        for task in ("quiet", "moving"):
            j.append(FleetTask(session=task, fleet=FLEET, run="r1"))
            j.append(TaskTurn(session=task, fleet=FLEET, step=2, input_tokens=100, output_tokens=10))
        # degraded loops judge only what moved or went stale: "moving" got a check, "quiet" none
        j.append(_check("moving", "degraded", "running", nudges=0, diagnosis="degraded mode: fresh", degraded=True))
        j.append(SupervisionReport(session="fleet:" + FLEET, fleet=FLEET, degraded=True, watcher_cycles=3))
    rows = {r["task"]: r for r in _fleet(["status"], journal)}
    assert rows["quiet"]["health"] == "unchecked" and rows["moving"]["health"] == "degraded"
    assert _fleet(["health", "quiet"], journal)["health"] == "unchecked"


def test_a_lost_task_is_lost_in_the_health_column_too(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite3"
    with Journal(journal) as j:
        j.append(FleetTask(session="gone", fleet=FLEET, run="r1"))
        j.append(TaskTurn(session="gone", fleet=FLEET, step=4, input_tokens=100, output_tokens=10))
        j.append(_check("gone", "stuck", "running", nudges=1, diagnosis="the same call twice"))
        j.append(_check("gone", "healthy", "running", nudges=0, diagnosis="moving again"))
        j.append(TaskLost(session="gone", fleet=FLEET, run="r1", reason="its host has been silent for over 60s"))
        j.append(SupervisionReport(session="fleet:" + FLEET, fleet=FLEET, watcher_cycles=9))
    row = _fleet(["status"], journal)[0]
    assert row["status"] == row["health"] == "lost"
    health = _fleet(["health", "gone"], journal)
    assert health["health"] == health["status"] == "lost" and "silent" in health["diagnosis"]
    with Journal(journal) as j:  # its host beats again: it was held up, not dead (as the supervisor takes it)
        j.append(TaskHostBeat(session="host:r1", fleet=FLEET, run="r1", tasks=1))
    again = _fleet(["status"], journal)[0]
    assert (again["status"], again["health"], again["diagnosis"]) == ("running", "healthy", "moving again")


def _started_elsewhere(journal: Path, **settings: Any) -> None:
    """A fleet run's rows as its task host writes them (settings, a task, one beat), then the host dies."""
    with Journal(journal) as j:
        j.append(FleetSettings(session="fleet:" + FLEET, fleet=FLEET, run="r1", settings=settings))
        j.append(FleetTask(session="t1", fleet=FLEET, run="r1"))
        j.append(TaskHostBeat(session="host:r1", fleet=FLEET, run="r1", tasks=1))


def _lost(journal: Path) -> list[dict[str, Any]]:
    with Journal(journal) as j:
        return [r.payload for r in j.read(0, limit=10_000, kinds=("task_lost",))]


def test_supervise_judges_with_the_settings_the_run_journaled(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite3"
    _started_elsewhere(journal, watch_interval_s=0.1, host_lost_s=0.5, min_task_age_s=0.0, file_tools=["Write"])
    out = _fleet(["supervise", "--for", "2.5"], journal)
    assert out["watcher_cycles"] >= 3, out  # 0.1 s cycles, not the default 30 s
    lost = _lost(journal)
    assert [p["reason"] for p in lost] and "0.5" in lost[0]["reason"], lost  # the run's 0.5 s, not 60 s


def test_supervise_takes_a_tasks_file_over_the_journaled_settings(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite3"
    _started_elsewhere(journal, watch_interval_s=0.1, host_lost_s=0.5)
    tasks = tmp_path / "tasks.toml"
    tasks.write_text(
        f'[fleet]\nname = "{FLEET}"\nwatch_interval_s = 0.1\nhost_lost_s = 3600\n\n[[tasks]]\nname = "t1"\nprompt = "p"\n'
    )
    out = _fleet(["supervise", "--for", "2", "--tasks", str(tasks)], journal)
    assert out["watcher_cycles"] >= 3 and _lost(journal) == [], "the file's hour, not the journal's half second"


def test_a_fleet_run_journals_the_settings_of_its_tasks_file(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite3"
    tasks = tmp_path / "tasks.toml"
    tasks.write_text(
        f'[fleet]\nname = "{FLEET}"\nhost_lost_s = 7\nmin_task_age_s = 1.5\npause_after_nudges = 2\n'
        'sync_rate_limit = 9\n\n[[tasks]]\nname = "t1"\nprompt = "say done"\n'
    )
    with StubAnthropicServer(*[Reply.text("done")] * 5) as stub:
        out = _fleet(["run", str(tasks), "--no-supervision", "--base-url", stub.base_url], journal)
    assert out["tasks"]["t1"]["status"] == "completed"
    from watcher.fleet.runs import run_settings  # (here: the module imports without it before the fix)

    with Journal(journal) as j:
        settings = run_settings(j, FLEET)
    assert settings is not None
    assert (settings["host_lost_s"], settings["min_task_age_s"], settings["pause_after_nudges"]) == (7, 1.5, 2)
    assert settings["sync_rate_limit"] == 9 and settings["supervision"] is False
    from watcher.fleet.supervisor import journaled_config

    # every setting comes back as the file gave it (a supervisor always supervises)
    assert journaled_config(settings, FLEET) == replace(load_tasks(tasks)[0], supervision=True)
