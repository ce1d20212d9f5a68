"""The fleet's tasks in one process, its supervision in another: they meet only in the journal.

Process A runs the tasks with no supervision (``Fleet(config=supervision=False)``, as
``watcher fleet run --no-supervision`` does); process B is ``watcher fleet supervise``. B's
watcher loop nudges and pauses A's stuck task and B's syncer relays A's learnings, with nothing
shared but the SQLite file; a person's abort from a third process ends it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from fleet_helpers import user_texts

from watcher.runtime.journal import Journal
from watcher.testing import FakeClock, RecordedRequest, Reply, StubAnthropicServer, wait_until

pytestmark = pytest.mark.slow

# the stuck task's one tool, in each script below that runs a fleet in a process of its own
BASH = '''def bash(command: str) -> str:
    """Run a shell command.

    Args:
        command: the command line
    """
    return "job 42: still running"
'''

TASKS = textwrap.dedent(
    """
    import asyncio, json, sys
    from watcher.agents import tool
    from watcher.fleet import Fleet, FleetConfig, TaskSpec

    @BASH@

    def read(path: str) -> str:
        \"\"\"Read a file.

        Args:
            path: the file
        \"\"\"
        return f"contents of {path}"

    async def main() -> None:
        config = FleetConfig(name="split", supervision=False, command_poll_s=0.05)
        specs = [
            TaskSpec("waiter", "[waiter] wait for job 42", tools=(tool(bash, name="Bash"),), max_steps=400),
            TaskSpec("client", "[client] write the client", tools=(tool(read, name="Read"),), tags=("api",)),
            TaskSpec("server", "[server] write the server", tools=(tool(read, name="Read"),), tags=("api",),
                     max_steps=200),
        ]
        fleet = Fleet(specs, config=config, journal=sys.argv[1], base_url=sys.argv[2], api_key="k")
        results = await fleet.run()
        print(json.dumps({name: getattr(r, "status", repr(r)) for name, r in results.items()}))

    asyncio.run(main())
    """
).replace("@BASH@\n", BASH)
NUDGE = re.compile(r'<system-nudge severity="(hint|warning|critical)">')


def _reply(request: RecordedRequest) -> Reply:
    body = request.body or {}
    first = body["messages"][0]["content"]
    prompt = first if isinstance(first, str) else first[0]["text"]
    turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if prompt.startswith("[waiter]"):
        return Reply.tool_use("Bash", {"command": "sleep 1"}, text="Still waiting for job 42.", delay_s=0.03)
    if prompt.startswith("[client]"):
        if turns == 0:
            return Reply.tool_use("Read", {"path": "api/client.py"}, text="Note: found that the API needs X-Token.")
        return Reply.text("Client done.")
    if any("<sync-message" in str(m["content"]) for m in body["messages"] if m["role"] == "user") or turns >= 150:
        return Reply.text("Server done.")
    return Reply.tool_use("Read", {"path": f"api/server{turns}.py"}, delay_s=0.05)


def _cli(*argv: str, journal: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "watcher", "fleet", *argv, "--journal", str(journal)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _beats(path: Path) -> int:
    return sum(k == "task_host_beat" for k, _, _ in _kinds(path))


def _kinds(path: Path) -> list[tuple[str, str, dict[str, object]]]:
    with Journal(path, create=False) as journal:
        return [(r.kind, r.session, r.payload) for r in journal.read(0, limit=100_000)]


def test_supervision_in_another_process_nudges_pauses_and_relays(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    Journal(path).close()
    script = tmp_path / "tasks.py"
    script.write_text(TASKS)
    requests: list[RecordedRequest] = []

    def reply(request: RecordedRequest) -> Reply:
        requests.append(request)
        return _reply(request)

    with StubAnthropicServer(*[Reply.dynamic(reply)] * 5000) as stub:
        tasks = subprocess.Popen(
            [sys.executable, str(script), str(path), stub.base_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
        supervisor = subprocess.Popen(
            [sys.executable, "-m", "watcher", "fleet", "supervise", "--journal", str(path), "--fleet", "split",
             "--watch-interval", "0.05", "--sync-interval", "0.05", "--for", "40", "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 40
            while time.monotonic() < deadline:
                if any(k == "watcher_pause" and s == "waiter" for k, s, _ in _kinds(path)):
                    break
                time.sleep(0.1)
            else:
                raise AssertionError("the stuck task was never paused by the other process")
            aborted = _cli("abort", "waiter", "--reason", "a person looked", journal=path)
            assert aborted.returncode == 0, aborted.stdout + aborted.stderr
            out, err = tasks.communicate(timeout=40)
        finally:
            supervisor.terminate()
            supervisor.communicate(timeout=20)
            if tasks.poll() is None:
                tasks.kill()
                tasks.communicate(timeout=20)
    assert tasks.returncode == 0, err
    assert json.loads(out) == {"waiter": "aborted", "client": "completed", "server": "completed"}
    rows = _kinds(path)
    nudges = [p["severity"] for k, s, p in rows if k == "watcher_nudge" and s == "waiter"]
    assert nudges[:5] == ["hint", "warning", "warning", "critical", "critical"]
    waiter = [r for r in requests if "[waiter]" in json.dumps((r.body or {})["messages"][0])]
    seen = [m for r in waiter for text in user_texts(r) for m in NUDGE.findall(text)]
    assert "hint" in seen and "critical" in seen, "the nudges written by the other process reached the task"
    server = [r for r in requests if "[server]" in json.dumps((r.body or {})["messages"][0])]
    assert any("<sync-message" in json.dumps(r.body) and "X-Token" in json.dumps(r.body) for r in server)
    assert any(k == "fleet_supervision" for k, _, _ in rows), "the other process reported its loops' health"


HOST = textwrap.dedent(
    """
    import asyncio, sys
    from watcher.agents import tool
    from watcher.fleet import Fleet, FleetConfig, TaskSpec

    @BASH@

    async def main() -> None:
        config = FleetConfig(name="lost", supervision=False, command_poll_s=0.05, host_beat_s=0.2)
        spec = TaskSpec("waiter", "[waiter] wait for job 42", tools=(tool(bash, name="Bash"),), max_steps=100_000)
        await Fleet([spec], config=config, journal=sys.argv[1], base_url=sys.argv[2], api_key="k").run()

    asyncio.run(main())
    """
).replace("@BASH@\n", BASH)


async def test_the_tasks_of_a_host_that_died_are_lost_not_nudged_on(tmp_path: Path) -> None:
    import asyncio
    import signal

    from watcher.fleet import FleetConfig, Supervisor

    path = tmp_path / "j.sqlite3"
    Journal(path).close()
    script = tmp_path / "host.py"
    script.write_text(HOST)
    config = FleetConfig(name="lost", watch_interval_s=0.1, sync_interval_s=0.1, min_task_age_s=0.0, host_lost_s=1.5)
    with StubAnthropicServer(*[Reply.dynamic(_reply)] * 20_000) as stub:
        log = (tmp_path / "host.log").open("wb")  # a pipe nobody reads could fill and stall the host
        host = await asyncio.create_subprocess_exec(
            sys.executable, str(script), str(path), stub.base_url, stdout=log, stderr=log
        )
        journal = Journal(path)
        clock = FakeClock()  # the host's silence is measured on it: moved on, never slept through
        supervisor = Supervisor(config, journal, clock=clock)
        await supervisor.start()

        async def cycles(n: int) -> None:
            start = supervisor.watcher.cycles
            await wait_until(lambda: supervisor.watcher.cycles >= start + n, within=20)

        try:
            await wait_until(lambda: any(k == "task_turn" for k, _, _ in _kinds(path)), within=30)
            for _ in range(3):  # three windows pass while the host beats: alive (stuck, nudged, paused), never lost
                clock.advance(config.host_lost_s)
                heard = _beats(path)
                await wait_until(lambda heard=heard: _beats(path) > heard)  # a beat after the clock moved
                await cycles(2)
                assert supervisor.status("waiter") in ("running", "paused"), (tmp_path / "host.log").read_text()
            host.send_signal(signal.SIGKILL)
            assert await asyncio.wait_for(host.wait(), 20) == -signal.SIGKILL
            await cycles(2)
            assert supervisor.status("waiter") in ("running", "paused"), "silent, but not for a whole window yet"
            clock.advance(config.host_lost_s + 0.1)
            await wait_until(lambda: supervisor.status("waiter") == "lost", within=20)
            await cycles(3)  # a few more cycles: nothing more is decided for a lost task
        finally:
            await supervisor.close()
            journal.close()
            if host.returncode is None:
                host.kill()
                await asyncio.wait_for(host.wait(), 20)
            log.close()
    rows = _kinds(path)
    lost = [i for i, (k, s, _) in enumerate(rows) if k == "task_lost" and s == "waiter"]
    assert len(lost) == 1 and "has not been heard from" in str(rows[lost[0]][2]["reason"])
    decided = ("watcher_nudge", "watcher_pause", "watcher_abort")
    assert not [k for k, s, _ in rows[lost[0] :] if k in decided and s == "waiter"]
    status = _cli("status", "--json", journal=path)
    assert status.returncode == 0, status.stderr
    (task,) = json.loads(status.stdout)
    assert task["task"] == "waiter" and task["status"] == "lost" and "heard from" in task["diagnosis"], task
