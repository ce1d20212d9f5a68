"""The watcher loop on real agent runs against the stub: escalation, pause, counter reset, commands."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from fleet_helpers import Scripts, marker, user_texts

from watcher.agents import tool
from watcher.fleet import Fleet, FleetConfig, TaskSpec
from watcher.runtime import Journal
from watcher.testing import Reply

FAST = FleetConfig(watch_interval_s=0.05, sync_interval_s=0.05, min_task_age_s=0.0, command_poll_s=0.05)
NUDGE = re.compile(r'<system-nudge severity="(hint|warning|critical)">')


def bash(command: str) -> str:
    """Run a shell command.

    Args:
        command: the command line
    """
    return "job 42: still running"


def _waiting(n: int, request: object = None) -> Reply:
    return Reply.tool_use("Bash", {"command": "sleep 1"}, text="Waiting for the job.", delay_s=0.03)


async def test_a_stuck_task_gets_hint_warning_critical_and_is_paused_after_the_fifth(tmp_path: Path) -> None:
    scripts = Scripts({"waiter": _waiting})
    journal = Journal(tmp_path / "j.sqlite3")
    spec = TaskSpec("waiter", f"{marker('waiter')} wait for job 42", tools=(tool(bash, name="Bash"),), max_steps=200)
    with scripts.server() as stub:
        fleet = Fleet([spec], config=FAST, journal=journal, base_url=stub.base_url, api_key="k")
        await fleet.start()
        for _ in range(400):
            if fleet.channels["waiter"].paused:
                break
            await asyncio.sleep(0.02)
        assert fleet.channels["waiter"].paused, "the stuck task was paused"
        await fleet.close()
    seen = [m.group(1) for r in scripts.requests["waiter"] for t in user_texts(r) for m in NUDGE.finditer(t)]
    # every request resends the history: the distinct nudges in the last request are all that were delivered
    last = [m.group(1) for t in user_texts(scripts.requests["waiter"][-1]) for m in NUDGE.finditer(t)]
    assert last == ["hint", "warning", "warning", "critical", "critical"], last
    assert seen, "the nudges reached the agent"
    rows = [r.kind for r in journal.read(0, limit=100000)]
    assert rows.count("watcher_nudge") == 5 and rows.count("watcher_pause") == 1
    assert fleet.stats.nudges_sent == 5 and fleet.stats.tasks_paused == 1
    journal.close()
