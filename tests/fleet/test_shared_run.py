"""A shared run (``watcher fleet run --run``) on one host, with the journal slow to confirm a start.

The host claims a task, journals it as started, and only then runs it. A run that read the journal
in between saw every task started and none running here, and closed on it: the task was aborted
("the fleet closed") as it began. The machines test met this now and then; here the gap is widened.
"""

from __future__ import annotations

import threading
from pathlib import Path

from fleet_helpers import Scripts, marker

from watcher.fleet import Fleet, FleetConfig, TaskSpec
from watcher.fleet.tasks import SharedRun
from watcher.runtime import Journal
from watcher.testing import Reply

FAST = FleetConfig(watch_interval_s=0.05, sync_interval_s=0.05, min_task_age_s=0.0, command_poll_s=0.05)


async def test_a_task_started_while_the_run_looks_is_run_not_aborted(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite3")
    start_task, started_tasks = journal.start_task, journal.started_tasks
    looked = threading.Event()  # the run read the claims after the start was committed

    def reading(group: str) -> set[str]:
        found = started_tasks(group)
        if "slow" in found:
            looked.set()
        return found

    def slow_to_return(group: str, task: str, host: str) -> None:
        start_task(group, task, host)  # committed: every reader sees the task started...
        looked.wait(10)  # ...and this host begins to run it only after the run has looked

    journal.started_tasks = reading  # type: ignore[method-assign]
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
    assert looked.is_set(), "the run never read the claims while the task was being started"
    assert results["slow"].status == "completed", results  # type: ignore[union-attr]
