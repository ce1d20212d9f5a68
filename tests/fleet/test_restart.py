"""A supervisor restarted on a running fleet picks up where the last one stopped, from the journal."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from fleet_helpers import Scripts, marker

from watcher.agents import tool
from watcher.fleet import Fleet, FleetConfig, Supervisor, TaskSpec
from watcher.runtime import Journal
from watcher.testing import RecordedRequest, Reply, wait_until

CONFIG = FleetConfig(
    name="restart", watch_interval_s=0.05, sync_interval_s=0.05, min_task_age_s=0.0, command_poll_s=0.05
)


def bash(command: str) -> str:
    """Run a shell command.

    Args:
        command: the command line
    """
    return "job 42: still running"


def read(path: str) -> str:
    """Read a file.

    Args:
        path: the file
    """
    return f"contents of {path}"


def reader(n: int, request: RecordedRequest) -> Reply:
    return Reply.tool_use("Read", {"path": f"src/module{n}.py"}, delay_s=0.05)


def waiter(n: int, request: RecordedRequest) -> Reply:
    return Reply.tool_use("Bash", {"command": "sleep 1"}, text="Still waiting.", delay_s=0.03)


def client(n: int, request: RecordedRequest) -> Reply:
    if n == 0:
        return Reply.tool_use("Read", {"path": "api/c.py"}, text="Note: found that the API needs X-Token.")
    return Reply.text("Client done.")


def server(n: int, request: RecordedRequest) -> Reply:
    return Reply.tool_use("Read", {"path": f"api/s{n}.py"}, delay_s=0.05) if n < 60 else Reply.text("Server done.")


def _rows(journal: Journal, kind: str) -> list[dict[str, object]]:
    journal.flush()
    return [{"session": r.session, **r.payload} for r in journal.read(0, limit=100_000, kinds=(kind,))]


async def test_a_restarted_supervisor_keeps_the_ladder_and_relays_nothing_twice(tmp_path: Path) -> None:
    scripts = Scripts({"waiter": waiter, "client": client, "server": server})
    journal = Journal(tmp_path / "j.sqlite3")
    specs = [
        TaskSpec("waiter", f"{marker('waiter')} wait", tools=(tool(bash, name="Bash"),), max_steps=500),
        TaskSpec("client", f"{marker('client')} client", tools=(tool(read, name="Read"),), tags=("api",)),
        TaskSpec("server", f"{marker('server')} server", tools=(tool(read, name="Read"),), tags=("api",), max_steps=80),
    ]
    with scripts.server() as stub:
        fleet = Fleet(
            specs, config=replace(CONFIG, supervision=False), journal=journal, base_url=stub.base_url, api_key="k"
        )
        await fleet.start()
        first = Supervisor(CONFIG, journal)
        await first.start()
        await wait_until(lambda: first.stats.nudges_sent >= 2 and first.stats.syncs_relayed >= 1)
        await first.close()  # the supervising process goes away...
        relayed = len([r for r in _rows(journal, "sync_message") if r["status"] == "sent"])
        second = Supervisor(CONFIG, journal)  # ...and a new one starts on the same journal
        await second.start()
        await wait_until(lambda: second.status("waiter") == "paused", 20)
        await asyncio.sleep(0.3)  # a few more syncer cycles
        await second.close()
        await fleet.actions.abort("waiter", "test over", by="person")
        results = await fleet.wait()
    counts = [r["count"] for r in _rows(journal, "watcher_nudge") if r["session"] == "waiter"]
    assert counts == [1, 2, 3, 4, 5][: len(counts)] and counts[-1] == 5, counts
    assert [r["session"] for r in _rows(journal, "watcher_pause")] == ["waiter"]
    syncs = [r for r in _rows(journal, "sync_message") if r["status"] == "sent"]
    assert len(syncs) == relayed == 1, "the restarted syncer did not relay the learning again"
    assert results["server"].status == "completed"  # type: ignore[union-attr]
    journal.close()


async def test_a_fleet_run_again_is_a_new_run_with_a_fresh_ladder_and_its_own_status(tmp_path: Path) -> None:
    from watcher.fleet.query import read_fleet
    from watcher.fleet.runs import run_start

    journal = Journal(tmp_path / "j.sqlite3")
    specs = [TaskSpec("waiter", f"{marker('waiter')} wait", tools=(tool(bash, name="Bash"),), max_steps=500)]
    unsupervised = replace(CONFIG, supervision=False)
    with Scripts({"waiter": waiter}).server(4000) as stub:
        first = Fleet(specs, config=CONFIG, journal=journal, base_url=stub.base_url, api_key="k")
        await first.start()
        await wait_until(lambda: first.actions.stats.nudges_sent >= 3, 20)
        await first.actions.abort("waiter", "first run over", by="person")
        await first.wait()
        await first.close()
        before = len(_rows(journal, "watcher_nudge"))
        # `watcher fleet supervise` started now reads the latest run; the tasks file is then run again
        supervisor = Supervisor(CONFIG, journal, after=run_start(journal, CONFIG.name))
        await supervisor.start()
        again = Fleet(specs, config=unsupervised, journal=journal, base_url=stub.base_url, api_key="k")
        await again.start()
        await wait_until(lambda: len(_rows(journal, "watcher_nudge")) >= before + 2, 20)
        view = read_fleet(journal)
        await supervisor.close()
        await again.actions.abort("waiter", "second run over", by="person")
        await again.wait()
        await again.close()
    counts = [r["count"] for r in _rows(journal, "watcher_nudge")]
    assert counts[:before] == list(range(1, before + 1)) and counts[before : before + 2] == [1, 2], counts
    # `watcher fleet status` shows the second run alone: its task, its own ladder, not the sum of both
    assert list(view.tasks) == ["waiter"] and view.tasks["waiter"].status == "running"
    assert [n.count for n in view.nudges] == list(range(1, len(view.nudges) + 1)) and len(view.nudges) >= 2
    assert view.tasks["waiter"].nudges == len(view.nudges)
    ended = read_fleet(journal)
    assert ended.tasks["waiter"].status == "aborted" and len(ended.aborts) == 1
    journal.close()


async def test_a_command_claimed_by_a_process_that_died_is_applied_after_its_lease(tmp_path: Path) -> None:
    import subprocess
    import sys

    from watcher.fleet.supervisor import COMMAND_PREFIX

    journal = Journal(tmp_path / "j.sqlite3")
    config = replace(CONFIG, command_lease_s=0.6)
    specs = [TaskSpec("reader", f"{marker('reader')} read", tools=(tool(read, name="Read"),), max_steps=500)]
    crash = (  # a poller that claims the command and dies before applying it
        "import os, sys; from watcher.runtime.journal import Journal; j = Journal(sys.argv[1]); "
        "cid = j.submit_command(sys.argv[2], 'pause', payload={'reason': 'a person looks first'}); "
        "assert [c.id for c in j.claim_commands([sys.argv[2]])] == [cid]; print(cid, flush=True); os._exit(9)"
    )
    with Scripts({"reader": reader}).server(4000) as stub:  # a task making progress: no nudge, no pause of its own
        fleet = Fleet(specs, config=config, journal=journal, base_url=stub.base_url, api_key="k")
        await fleet.start()
        try:
            await wait_until(lambda: fleet.status("reader") == "running", 10)
            argv = [sys.executable, "-c", crash, str(journal.path), COMMAND_PREFIX + "reader"]
            died = await asyncio.to_thread(subprocess.run, argv, capture_output=True, text=True, timeout=60)
            assert died.returncode == 9, died.stderr
            cid = int(died.stdout)
            await wait_until(lambda: fleet.status("reader") == "paused", 10)
            # the task pauses, then the poller marks the command applied: wait for the mark, not a moment
            command = await wait_until(
                lambda: next((c for c in journal.commands(status=None) if c.id == cid and c.status != "claimed"), None),
                10,
                what="the command marked after the pause",
            )
            assert command.status == "applied" and command.detail == "paused at its next boundary"
            assert not _rows(journal, "watcher_nudge")
        finally:
            await fleet.actions.abort("reader", "test over", by="person")
            await fleet.close()
    journal.close()
