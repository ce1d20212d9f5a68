"""A fleet on several "machines" (network namespaces) sharing one PostgreSQL journal over veth links.

Task hosts on three machines claim one run's tasks between them; one is killed (SIGKILL) and its
started tasks are lost while the rest run elsewhere, a person's abort from a fourth reaches its
task, and the server stops for 10 s mid-run. Two
supervisors on two more machines: the leader is cut off the network (its link down), the standby
leads within ``host_lost_s``, and the cut-off one stands down by itself.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest
from netns import Machine, can_make_machines

from watcher.runtime.journal import Journal
from watcher.testing import RecordedRequest, Reply, StubAnthropicServer, wait_until
from watcher.testing.postgres import LocalPostgres

pytestmark = [
    pytest.mark.skipif(not can_make_machines(), reason="network namespaces need root and iproute2 (CI has both)"),
    pytest.mark.slow,
    pytest.mark.timeout(300),  # hosts start as processes on a shared 2-core machine; the server is stopped 10 s
    pytest.mark.xdist_group("machines"),  # one worker makes the namespaces (their subnets must not overlap)
    pytest.mark.machines,  # `make unit` runs these on their own, after the rest: their timings need the cores
]

HOST_LOST_S = 4.0


@pytest.fixture(scope="module")
def machines() -> Iterator[tuple[LocalPostgres, list[Machine]]]:
    made = [Machine(i) for i in range(5)]
    try:
        listen = ",".join(["127.0.0.1", *(m.server_ip for m in made)])
        with LocalPostgres(listen=listen) as server:
            yield server, made
    finally:
        for machine in made:
            machine.close()


def supervise(machine: Machine, url: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "watcher", "fleet", "supervise", "--journal", url, "--fleet", "shared",
            "--host-lost", str(HOST_LOST_S), "--watch-interval", "0.2", "--sync-interval", "0.2", "--for", "90"]  # fmt: skip
    return subprocess.Popen(
        machine.command(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip


def line(stream: IO[str] | None) -> str:
    assert stream is not None
    return stream.readline().strip()


def test_a_partitioned_leader_is_replaced_and_stands_down(machines: tuple[LocalPostgres, list[Machine]]) -> None:
    server, (_, _, _, one, two) = machines
    server.create_database("partition")
    Journal(server.url("partition")).close()
    first = supervise(one, server.url("partition", host=one.server_ip))
    second: subprocess.Popen[str] | None = None
    try:
        assert line(first.stdout).startswith("leading the supervision of fleet shared"), first.stderr
        second = supervise(two, server.url("partition", host=two.server_ip))
        assert line(second.stdout) == "standing by: another supervisor leads fleet shared"
        one.down()
        cut = time.monotonic()
        assert line(second.stdout).startswith("leading the supervision of fleet shared")
        assert time.monotonic() - cut < HOST_LOST_S, "the standby leads within host_lost_s"
        assert line(first.stdout) == "standing by: another supervisor leads fleet shared", (
            "the cut-off leader stands down"
        )
        one.up()
        time.sleep(HOST_LOST_S / 2)  # a whole term with the link back: the first one does not take the lease back
        with Journal(server.url("partition"), create=False) as journal:
            assert not journal.hold_lease("fleet-supervisor:shared", "someone else", 1), "the second still holds it"
    finally:
        one.up()
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            if proc is not None:
                proc.communicate(timeout=60)


TASKS = '[fleet]\nname = "spread"\nhost_beat_s = 0.5\n' + "".join(
    f'\n[[tasks]]\nname = "t{i}"\nprompt = "[t{i}] take your time"\n' for i in range(6)
)


def host(machine: Machine, url: str, base_url: str, tasks: str, max_tasks: int) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "watcher", "fleet", "run", tasks, "--no-supervision", "--run", "r1",
            "--max-tasks", str(max_tasks), "--journal", url, "--base-url", base_url, "--json"]  # fmt: skip
    return subprocess.Popen(
        machine.command(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "ANTHROPIC_API_KEY": "k"},
    )  # fmt: skip


def heard(url: str) -> bool:
    """A supervision cycle was journaled after a host's beat: the supervisor knows that host is alive."""
    with Journal(url, create=False) as journal:
        rows = journal.read(kinds=("task_host_beat", "fleet_supervision"), limit=100_000)
    beats = [r.id for r in rows if r.kind == "task_host_beat"]
    # two cycles after the first beat: the second one began after the beat was committed
    return bool(beats) and sum(r.kind == "fleet_supervision" and r.id > beats[0] for r in rows) >= 2


def announced(url: str) -> list[tuple[str, str]]:
    """(task, host) of every task start the journal holds."""
    with Journal(url, create=False) as journal:
        return [(r.session, str(r.payload.get("host"))) for r in journal.read(kinds=("fleet_task",), limit=10_000)]


def story(url: str) -> str:
    """What the journal holds of a fleet's tasks, hosts and decisions, for a failed assertion to show."""
    with Journal(url, create=False) as journal:
        rows = journal.read(limit=100_000)
    told = [
        f"{r.id} {r.kind} {r.session} {json.dumps(r.payload, default=str)[:240]}"
        for r in rows
        if r.kind not in ("fleet_supervision", "task_host_beat")
    ]
    beats = [r.id for r in rows if r.kind == "task_host_beat"]
    cycles = [r.id for r in rows if r.kind == "fleet_supervision"]
    return f"beats at {beats[:3]}..{beats[-3:]}, {len(cycles)} supervision cycles; rows:\n" + "\n".join(told)


def _status(boss: Machine, server: LocalPostgres) -> dict[str, str]:
    """Each task's status as `watcher fleet status` shows it to a person on the boss's machine."""
    shown = subprocess.run(
        boss.command([sys.executable, "-m", "watcher", "fleet", "status", "--journal",
                      server.url("spread", host=boss.server_ip), "--json"]),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    return {row["task"]: row["status"] for row in json.loads(shown.stdout)}


def test_hosts_on_three_machines_share_a_run_and_a_killed_host_loses_only_its_tasks(
    machines: tuple[LocalPostgres, list[Machine]], tmp_path: Path
) -> None:
    server, (a, b, c, boss, _) = machines
    server.create_database("spread")
    url = server.url("spread")
    Journal(url).close()
    tasks = tmp_path / "tasks.toml"
    tasks.write_text(TASKS)

    killed: list[bool] = []

    def reply(request: RecordedRequest) -> Reply:
        # each task answers once, slowly: killed hosts die mid-task; the later ones slower still, so a
        # person's abort (a process started on another machine, slow on a loaded one) finds its task running
        return Reply.text("Done.", delay_s=15.0 if killed else 6.0)

    with StubAnthropicServer(*[Reply.dynamic(reply)] * 100, host="0.0.0.0") as stub:
        port = stub.root_url.rsplit(":", 1)[1]
        started = [host(a, server.url("spread", host=a.server_ip), f"http://{a.server_ip}:{port}", str(tasks), 2)]
        supervisor = subprocess.Popen(
            boss.command([sys.executable, "-m", "watcher", "fleet", "supervise", "--journal",
                          server.url("spread", host=boss.server_ip), "--fleet", "spread", "--host-lost", "3",
                          "--watch-interval", "0.2", "--for", "120"]),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while len(announced(url)) < 2 and time.monotonic() < deadline:  # a's two slots are taken
                time.sleep(0.1)
            doomed = {task for task, _ in announced(url)}
            assert len(doomed) == 2
            killed.append(True)
            started[0].send_signal(signal.SIGKILL)  # host a dies with its two tasks
            started[0].communicate(timeout=30)
            for machine in (b, c):
                ip = machine.server_ip
                started.append(host(machine, server.url("spread", host=ip), f"http://{ip}:{port}", str(tasks), 2))
            while len(announced(url)) < 6 and time.monotonic() < deadline + 60:  # b and c run two each
                time.sleep(0.1)
            victim = next(task for task, _ in announced(url) if task not in doomed)
            aborted = subprocess.run(  # a person on yet another machine: the leader applies it, the task's host obeys
                boss.command([sys.executable, "-m", "watcher", "fleet", "abort", victim, "--journal",
                              server.url("spread", host=boss.server_ip), "--wait", "30"]),
                capture_output=True, text=True, timeout=90, check=False,
            )  # fmt: skip
            assert aborted.returncode == 0, aborted.stdout + aborted.stderr
            server.stop()  # the server is gone for 10 s while tasks run
            time.sleep(10)
            server.start()
            said = [proc.communicate(timeout=120) for proc in started[1:]]
            assert all(proc.returncode in (0, 1) for proc in started[1:]), said  # 1: one of its tasks was aborted
            results = [json.loads(out) for out, _ in said]
            # the supervisor journals the dead host's tasks as lost once the host has been silent past its
            # grace; a journal server that was away for 10 s can put that after the others end: wait for it
            asyncio.run(
                wait_until(
                    lambda: all(_status(boss, server).get(t) == "lost" for t in doomed),
                    within=90,
                    what="the killed host's tasks journaled lost",
                    every=1.0,  # each look runs `watcher fleet status` on the boss's machine
                )
            )
        finally:
            supervisor.send_signal(signal.SIGINT)
            supervisor.communicate(timeout=60)
            for proc in started:
                if proc.poll() is None:
                    proc.kill()
                    proc.communicate(timeout=30)
    ran = [task for result in results for task in result["tasks"]]
    assert sorted(ran) == sorted({f"t{i}" for i in range(6)} - doomed), "the others ran every other task, once each"
    ended = {name: t["status"] for result in results for name, t in result["tasks"].items()}
    assert ended == {name: "aborted" if name == victim else "completed" for name in ran}, ended
    starts = announced(url)
    assert sorted(task for task, _ in starts) == [f"t{i}" for i in range(6)], "each task started exactly once"
    assert len({h for _, h in starts}) == 3, "on three hosts"
    seen = _status(boss, server)
    assert {task: seen[task] for task in doomed} == dict.fromkeys(doomed, "lost"), seen
    assert all(seen[t] == ("aborted" if t == victim else "completed") for t in ran), seen


def test_a_host_cut_off_is_lost_then_its_task_completes_when_the_link_returns(
    machines: tuple[LocalPostgres, list[Machine]], tmp_path: Path
) -> None:
    server, (_, lone, _, boss, _) = machines
    server.create_database("cut")
    url = server.url("cut")
    Journal(url).close()
    tasks = tmp_path / "tasks.toml"
    tasks.write_text('[fleet]\nname = "cut"\nhost_beat_s = 0.5\n\n[[tasks]]\nname = "slow"\nprompt = "[slow] go"\n')

    def status() -> str:
        with Journal(url, create=False) as journal:
            from watcher.fleet.query import read_fleet

            row = read_fleet(journal, "cut").tasks.get("slow")
            return row.status if row is not None else ""

    with StubAnthropicServer(Reply.text("Done.", delay_s=14.0), host="0.0.0.0") as stub:
        port = stub.root_url.rsplit(":", 1)[1]
        ip = lone.server_ip
        running = host(lone, server.url("cut", host=ip), f"http://{ip}:{port}", str(tasks), 1)
        supervisor = subprocess.Popen(
            boss.command([sys.executable, "-m", "watcher", "fleet", "supervise", "--journal",
                          server.url("cut", host=boss.server_ip), "--fleet", "cut", "--host-lost", "3",
                          "--watch-interval", "0.2", "--for", "120"]),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while not announced(url) and time.monotonic() < deadline:
                time.sleep(0.1)
            while not heard(url) and time.monotonic() < deadline:  # its host has beaten: the supervisor knows it
                time.sleep(0.1)
            lone.down()
            try:
                while status() != "lost" and time.monotonic() < deadline:
                    time.sleep(0.2)
                assert status() == "lost", f"cut off for longer than host_lost_s: its task is lost; {story(url)}"
            finally:
                lone.up()
            out, err = running.communicate(timeout=90)
            assert running.returncode == 0, err
        finally:
            supervisor.send_signal(signal.SIGINT)
            supervisor.communicate(timeout=60)
            if running.poll() is None:
                running.kill()
                running.communicate(timeout=30)
    assert json.loads(out)["tasks"]["slow"]["status"] == "completed"
    assert status() == "completed", "held up, not dead: the task finished on its host"
