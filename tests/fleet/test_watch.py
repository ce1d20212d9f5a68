"""The watcher loop on real agent runs against the stub: escalation, pause, counter reset, commands."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from fleet_helpers import Scripts, fates, marker, user_texts

from watcher.agents import tool
from watcher.core.evaluation import EvaluationRequest
from watcher.evaluators import CallableEvaluator
from watcher.fleet import Fleet, FleetConfig, TaskSpec
from watcher.fleet.events import WatcherAbort, WatcherPause
from watcher.runtime import Journal
from watcher.testing import FakeClock, RecordedRequest, Reply, wait_until

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
            if fleet.status("waiter") == "paused":
                break
            await asyncio.sleep(0.02)
        assert fleet.status("waiter") == "paused", "the stuck task was paused"
        await wait_until(lambda: fleet.host is not None and fleet.host.channels["waiter"].held)  # the host applied it
        await fleet.close()
    seen = [m.group(1) for r in scripts.requests["waiter"] for t in user_texts(r) for m in NUDGE.finditer(t)]
    # every request resends the history: the distinct nudges in the last request are all that were delivered
    last = [m.group(1) for t in user_texts(scripts.requests["waiter"][-1]) for m in NUDGE.finditer(t)]
    assert last == ["hint", "warning", "warning", "critical", "critical"], last
    assert seen, "the nudges reached the agent"
    rows = [r.kind for r in journal.read(0, limit=100000)]
    assert rows.count("watcher_nudge") == 5 and rows.count("watcher_pause") == 1
    assert fleet.stats.nudges_sent == 5 and fleet.stats.tasks_paused == 1
    # the fleet's watcher said them to the task: each an interjection whose fate the journal's fold knows
    said = [(f.watcher, f.interjection.action, f.interjection.severity, f.status) for f in fates(journal, "waiter")]
    ladder = ["hint", "warning", "warning", "critical", "critical"]
    assert said == [("fleet", "nudge", s, "delivered") for s in ladder] + [("fleet", "pause", "warning", "delivered")]
    journal.close()


def write(file_path: str, content: str) -> str:
    """Write a file.

    Args:
        file_path: the file
        content: its content
    """
    return f"wrote {file_path}"


def _nudges(request: RecordedRequest) -> list[str]:
    return [m.group(1) for t in user_texts(request) for m in NUDGE.finditer(t)]


async def test_progress_resets_the_nudge_counter(tmp_path: Path) -> None:
    wrote: dict[str, int] = {}

    def fixer(n: int, request: RecordedRequest) -> Reply:
        if len(_nudges(request)) >= 2 and not wrote:
            wrote["at"] = n
            return Reply.tool_use("Write", {"file_path": "job.py", "content": "fixed"}, text="Changing approach.")
        return _waiting(n)

    scripts = Scripts({"fixer": fixer})
    journal = Journal(tmp_path / "j.sqlite3")
    tools = (tool(bash, name="Bash"), tool(write, name="Write"))
    spec = TaskSpec("fixer", f"{marker('fixer')} wait for job 42", tools=tools, max_steps=300)
    with scripts.server() as stub:
        fleet = Fleet([spec], config=FAST, journal=journal, base_url=stub.base_url, api_key="k")
        await fleet.start()
        await wait_until(
            lambda: bool(scripts.requests["fixer"]) and len(_nudges(scripts.requests["fixer"][-1])) >= 3, 20
        )
        await fleet.close()
    assert _nudges(scripts.requests["fixer"][-1])[:3] == ["hint", "warning", "hint"], "the ladder restarted"
    counts = [row.payload["count"] for row in journal.read(0, limit=100_000) if row.kind == "watcher_nudge"]
    assert counts[:3] == [1, 2, 1]
    assert not fleet.stats.tasks_paused
    journal.close()


LOCKER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
"""
HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()  # held until the test says so
conn.execute("COMMIT")
"""


async def test_a_crash_in_a_cycle_degrades_and_a_crashed_loop_restarts(tmp_path: Path) -> None:
    async def broken(request: EvaluationRequest) -> str:  # not an EvaluationError: a broken evaluator
        raise RuntimeError("the evaluator is down")

    def slow(n: int, request: RecordedRequest) -> Reply:
        return Reply.text("Thinking hard.", delay_s=4.0) if n == 0 else Reply.text("Done.")

    scripts = Scripts({"slow": slow})
    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    config = replace(FAST, stale_after_s=0.3, very_stale_after_s=60, restart_backoff_s=0.05, persist_timeout_s=0.2)
    with scripts.server() as stub:
        fleet = Fleet(
            [TaskSpec("slow", f"{marker('slow')} think")],
            config=config,
            journal=journal,
            base_url=stub.base_url,
            api_key="k",
            evaluator=CallableEvaluator(broken),
        )
        await fleet.start()
        await wait_until(lambda: fleet.health().degraded and fleet.stats.nudges_sent >= 1)
        # another process holds the journal locked: the next decision cannot be committed in time,
        # the cycle raises, and the loop is restarted (with backoff) rather than left dead
        locker = await asyncio.create_subprocess_exec(
            sys.executable, "-c", LOCKER, str(path), "1.0", stdout=asyncio.subprocess.PIPE
        )
        assert locker.stdout is not None and (await locker.stdout.readline()).strip() == b"locked"
        await wait_until(lambda: fleet.health().restarts["watcher"] >= 1)
        await locker.wait()
        cycles = fleet.stats.watcher_cycles
        await wait_until(lambda: fleet.stats.watcher_cycles >= cycles + 3)
        health = fleet.health()
        assert health.degraded and health.watcher_alive and health.syncer_alive
        results = await fleet.wait()
    assert results["slow"].status == "completed"  # type: ignore[union-attr]
    rows = journal.read(0, limit=100_000)
    checks = [r.payload for r in rows if r.kind == "task_health"]
    assert checks and all(c["degraded"] for c in checks)
    nudges = [r.payload["message"] for r in rows if r.kind == "watcher_nudge"]
    assert nudges and nudges[0].startswith("System check")
    reports = [r.payload for r in rows if r.kind == "fleet_supervision"]
    assert reports and reports[-1]["watcher_restarts"] >= 1 and reports[-1]["degraded"]
    journal.close()


async def test_nudge_pause_resume_abort_from_a_second_process(tmp_path: Path) -> None:
    slow = {"after_resume": False}

    def reader(n: int, request: RecordedRequest) -> Reply:
        # after the resume the agent thinks longer before each answer: cycles judge it before it moves on
        return Reply.tool_use("Read", {"path": f"src/f{n}.py"}, delay_s=0.4 if slow["after_resume"] else 0.03)

    def read(path: str) -> str:
        """Read a file.

        Args:
            path: the file
        """
        return f"contents of {path}"

    scripts = Scripts({"busy": reader})
    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    spec = TaskSpec("busy", f"{marker('busy')} read everything", tools=(tool(read, name="Read"),), max_steps=1000)

    async def cli(*argv: str) -> tuple[int, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "watcher",
            "fleet",
            *argv,
            "--journal",
            str(path),
            "--json",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode is not None
        return proc.returncode, out.decode() + err.decode()

    with scripts.server() as stub:
        fleet = Fleet([spec], config=FAST, journal=journal, base_url=stub.base_url, api_key="k")
        await fleet.start()
        code, out = await cli("nudge", "busy", "Focus on src/api first.")
        assert code == 0 and json.loads(out)["status"] == "applied", out
        await wait_until(lambda: any("Focus on src/api first." in t for t in user_texts(scripts.requests["busy"][-1])))
        assert '<system-nudge severity="warning">Focus on src/api first.</system-nudge>' in list(
            user_texts(scripts.requests["busy"][-1])
        )
        code, out = await cli("pause", "busy")
        assert code == 0 and fleet.status("busy") == "paused"
        await wait_until(lambda: fleet.host is not None and fleet.host.channels["busy"].held)
        held_at = len(scripts.requests["busy"])
        code, out = await cli("status")
        assert code == 0 and json.loads(out)[0]["status"] == "paused", out
        await asyncio.sleep(0.2)
        assert len(scripts.requests["busy"]) == held_at, "no request while paused"
        code, out = await cli("resume", "busy")
        assert code == 0
        await wait_until(lambda: len(scripts.requests["busy"]) > held_at)
        code, out = await cli("abort", "busy", "--reason", "enough")
        assert code == 0
        results = await fleet.wait()
    assert results["busy"].status == "aborted"  # type: ignore[union-attr]
    code, out = await cli("stats")
    stats = json.loads(out)
    assert stats["nudges_sent"] >= 1 and stats["tasks_paused"] == 1 and stats["tasks_aborted"] == 1
    said = {f.interjection.content: (f.interjection.action, f.status) for f in fates(journal, "busy")}
    assert said["Focus on src/api first."] == ("nudge", "delivered"), said  # a request carried it
    stops = [(action, status) for action, status in said.values() if action != "nudge"]
    assert stops == [("pause", "delivered"), ("abort", "delivered")], said  # held, then stopped
    code, out = await cli("nudge", "busy", "too late", "--wait", "0.5")
    assert code == 2 and "task 'busy' of fleet" in out and "has ended (aborted)" in out, out  # refused, not recorded
    journal.close()


async def test_a_task_younger_than_the_minimum_age_is_not_judged(tmp_path: Path) -> None:
    scripts = Scripts({"waiter": lambda n, r: _waiting(n)})
    journal = Journal(tmp_path / "j.sqlite3")
    spec = TaskSpec("waiter", f"{marker('waiter')} wait", tools=(tool(bash, name="Bash"),), max_steps=400)
    with scripts.server() as stub:
        fleet = Fleet(
            [spec], config=replace(FAST, min_task_age_s=60), journal=journal, base_url=stub.base_url, api_key="k"
        )
        await fleet.start()
        await wait_until(lambda: len(scripts.requests["waiter"]) >= 25 and fleet.stats.watcher_cycles >= 10)
        await fleet.close()
    assert fleet.stats.nudges_sent == 0 and not any(r.kind == "task_health" for r in journal.read(0, limit=100_000))
    journal.close()


async def test_a_task_resumed_after_a_long_pause_is_not_taken_for_stale(tmp_path: Path) -> None:
    slow = {"after_resume": False}

    def reader(n: int, request: RecordedRequest) -> Reply:
        # after the resume the agent thinks longer before each answer: cycles judge it before it moves on
        return Reply.tool_use("Read", {"path": f"src/f{n}.py"}, delay_s=0.4 if slow["after_resume"] else 0.03)

    def read(path: str) -> str:
        """Read a file.

        Args:
            path: the file
        """
        return f"contents of {path}"

    scripts = Scripts({"busy": reader})
    journal = Journal(tmp_path / "j.sqlite3")
    spec = TaskSpec("busy", f"{marker('busy')} read everything", tools=(tool(read, name="Read"),), max_steps=1000)
    config = replace(FAST, stale_after_s=0.5, very_stale_after_s=60)
    clock = FakeClock()  # the supervision's time moves only when the test moves it
    with scripts.server() as stub:
        fleet = Fleet([spec], config=config, journal=journal, base_url=stub.base_url, api_key="k", clock=clock)
        await fleet.start()
        await wait_until(lambda: len(scripts.requests["busy"]) >= 3)
        assert await fleet.actions.pause("busy", "a person looks", by="person")
        await wait_until(lambda: fleet.status("busy") == "paused")
        cycles = fleet.stats.watcher_cycles
        await wait_until(lambda: fleet.stats.watcher_cycles >= cycles + 2)  # the last turn before the hold is judged
        clock.advance(1.0)  # twice the stale threshold, held
        cycles = fleet.stats.watcher_cycles
        await wait_until(lambda: fleet.stats.watcher_cycles >= cycles + 2)  # the held task is judged at that time
        slow["after_resume"] = True
        assert await fleet.actions.resume("busy")
        resumed_at, cycles = len(scripts.requests["busy"]), fleet.stats.watcher_cycles
        await wait_until(
            lambda: len(scripts.requests["busy"]) >= resumed_at + 3 and fleet.stats.watcher_cycles >= cycles + 2
        )
        await fleet.actions.abort("busy", "test over", by="person")
        await fleet.wait()
    assert fleet.stats.nudges_sent == 0, "the pause was not idleness"
    health = [r.payload["health"] for r in journal.read(0, limit=100_000) if r.kind == "task_health"]
    assert "paused" in health and health[-1] == "healthy"
    journal.close()


async def test_a_command_written_before_the_task_started_is_not_applied_to_it(tmp_path: Path) -> None:
    scripts = Scripts({"busy": lambda n, r: Reply.text("Done.", delay_s=0.5)})
    journal = Journal(tmp_path / "j.sqlite3")
    stale = journal.submit_command("fleet:busy", "nudge", payload={"message": "meant for an earlier run"})
    await asyncio.sleep(0.05)  # the clock moves past the command before the task is announced
    with scripts.server() as stub:
        fleet = Fleet(
            [TaskSpec("busy", f"{marker('busy')} go")],
            config=FAST,
            journal=journal,
            base_url=stub.base_url,
            api_key="k",
        )
        await fleet.start()
        fresh = journal.submit_command("fleet:busy", "nudge", payload={"message": "for this run"})
        await wait_until(lambda: all(c.status != "new" for c in journal.commands(status=None)))
        results = await fleet.wait()
    by_id = {c.id: c for c in journal.commands(status=None)}
    assert by_id[stale].status == "failed" and "before this run" in by_id[stale].detail
    assert by_id[fresh].status == "applied"
    texts = [t for r in scripts.requests["busy"] for t in user_texts(r)]
    assert not any("earlier run" in t for t in texts)
    assert results["busy"].status == "completed"  # type: ignore[union-attr]
    journal.close()


async def test_a_journal_held_locked_is_logged_once_by_the_command_poller_not_every_poll(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    slow = {"after_resume": False}

    def reader(n: int, request: RecordedRequest) -> Reply:
        # after the resume the agent thinks longer before each answer: cycles judge it before it moves on
        return Reply.tool_use("Read", {"path": f"src/f{n}.py"}, delay_s=0.4 if slow["after_resume"] else 0.03)

    def read(path: str) -> str:
        """Read a file.

        Args:
            path: the file
        """
        return f"contents of {path}"

    scripts = Scripts({"busy": reader})
    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    spec = TaskSpec("busy", f"{marker('busy')} read", tools=(tool(read, name="Read"),), max_steps=1000)
    config = replace(FAST, supervision=False, persist_timeout_s=0.1)  # the command poller alone
    with scripts.server() as stub:
        fleet = Fleet([spec], config=config, journal=journal, base_url=stub.base_url, api_key="k")
        await fleet.start()
        await wait_until(lambda: len(scripts.requests["busy"]) >= 3)
        holder = await asyncio.create_subprocess_exec(
            sys.executable, "-c", HOLDER, str(path), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        assert holder.stdin is not None and holder.stdout is not None
        assert (await holder.stdout.readline()).strip() == b"locked"
        # held until the poller has met the lock (a loaded machine may take a while), then a while longer
        await wait_until(lambda: "applying journal commands failed" in caplog.text, 30, what="the poller's failure")
        # the task goes on meanwhile (its journal writes wait in the writer) while more polls fail: none may log again
        moved = len(scripts.requests["busy"])
        await wait_until(lambda: len(scripts.requests["busy"]) >= moved + 3, 30, what="the task to go on, locked out")
        holder.stdin.write(b"release\n")
        await holder.stdin.drain()
        await holder.wait()
        await wait_until(lambda: "journal commands are applied again" in caplog.text, 30, what="the recovery line")
        await fleet.actions.abort("busy", "test over", by="person")
        await fleet.wait()
    assert caplog.text.count("applying journal commands failed") == 1, caplog.text
    journal.close()


async def test_a_decision_that_finds_its_task_ended_is_journaled_undeliverable(tmp_path: Path) -> None:
    scripts = Scripts({"quick": lambda n, r: Reply.text("Done.")})
    journal = Journal(tmp_path / "j.sqlite3")
    spec = TaskSpec("quick", f"{marker('quick')} say done")
    with scripts.server() as stub:
        fleet = Fleet([spec], config=FAST, journal=journal, base_url=stub.base_url, api_key="k")
        await fleet.start()
        try:
            await fleet.runs["quick"].wait()
            # a supervisor elsewhere decided on the task as it ended: its rows race the task's end
            journal.append(WatcherPause(session="quick", fleet=fleet.config.name, reason="hold on", by="person"))
            journal.append(WatcherAbort(session="quick", fleet=fleet.config.name, reason="too late", by="person"))
            await wait_until(lambda: len(fates(journal, "quick")) == 2)
        finally:
            await fleet.close()
    said = [(f.interjection.action, f.status) for f in fates(journal, "quick")]
    assert said == [("pause", "undeliverable"), ("abort", "undeliverable")], said
    assert fleet.runs["quick"].status == "completed"  # what it ended as stays: nothing was applied to it
    journal.close()
