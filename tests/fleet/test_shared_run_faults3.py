"""A shared run whose journal records a task's start but loses the answer (a server away longer than a
command retries): the host learns from the journal that the start landed, and runs the task.

Before, the task counted as started by every host, ran on none, and the run ended without it.
"""

from __future__ import annotations

from pathlib import Path

from fleet_helpers import Scripts, marker

from watcher.core.errors import JournalError
from watcher.fleet import Fleet, FleetConfig, TaskSpec
from watcher.fleet.tasks import SharedRun
from watcher.runtime import Journal
from watcher.testing import Reply

FAST = FleetConfig(watch_interval_s=0.05, sync_interval_s=0.05, min_task_age_s=0.0, command_poll_s=0.05)


async def test_a_start_whose_answer_was_lost_is_run_not_dropped(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite3")
    start_task = journal.start_task
    lost: list[str] = []

    def answer_lost(group: str, task: str, host: str) -> None:
        start_task(group, task, host)  # recorded...
        if not lost:
            lost.append(task)
            raise JournalError("the journal's server did not answer for 5s")  # ...but the host never heard so

    journal.start_task = answer_lost  # type: ignore[method-assign]
    scripts = Scripts({"t": lambda n, _request: Reply.text("Done.")})
    try:
        with scripts.server() as stub:
            fleet = Fleet(
                [TaskSpec("t", f"{marker('t')} go")],
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
    assert lost == ["t"]
    assert results["t"].status == "completed", results  # type: ignore[union-attr]
