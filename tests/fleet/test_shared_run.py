"""A shared run (``watcher fleet run --run``) on one host, with the journal slow to confirm a start.

The host claims a task, journals it as started, and only then runs it. A run that read the journal
in between saw every task started and none running here, and closed on it: the task was aborted
("the fleet closed") as it began. The machines test met this now and then; here the gap is widened.
"""

from __future__ import annotations

import time
from pathlib import Path

from fleet_helpers import Scripts, marker

from watcher.fleet import Fleet, FleetConfig, TaskSpec
from watcher.fleet.tasks import SharedRun
from watcher.runtime import Journal
from watcher.testing import Reply

FAST = FleetConfig(watch_interval_s=0.05, sync_interval_s=0.05, min_task_age_s=0.0, command_poll_s=0.05)


async def test_a_task_started_while_the_run_looks_is_run_not_aborted(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite3")
    started = journal.start_task

    def slow_to_return(group: str, task: str, host: str) -> None:
        started(group, task, host)  # committed: every reader sees the task started...
        time.sleep(0.5)  # ...while this host has not begun to run it

    journal.start_task = slow_to_return  # type: ignore[method-assign]
    scripts = Scripts({"slow": lambda n, _request: Reply.text("Done.")})
    try:
        with scripts.server() as stub:
            fleet = Fleet(
                [TaskSpec("slow", f"{marker('slow')} go")],
                config=FAST,
                journal=journal,
                base_url=stub.base_url,
                api_key="k",
                shared=SharedRun("r1", max_tasks=1),
            )
            await fleet.start()
            results = await fleet.wait()
            await fleet.close()
    finally:
        journal.close()
    assert results["slow"].status == "completed", results  # type: ignore[union-attr]
