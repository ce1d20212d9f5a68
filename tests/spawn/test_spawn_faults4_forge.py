"""The forge's pull-request call at a spawn's end: a forge that hangs neither outlives a signal nor holds for ever.

The branch goes to the loopback forge's git; the pull request to a loopback API that accepts and
never answers, or trickles an answer that never ends (no socket timeout fires on either).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
import threading
import time
from asyncio.subprocess import PIPE
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from spawn_helpers import Project, git, write_a, write_script

from watcher.runtime.journal import Journal
from watcher.spawn import SpawnConfig, finish, run_spawn
from watcher.testing import wait_until
from watcher.testing.fake_cli import launcher

pytestmark = pytest.mark.slow

WATCHER = str(Path(sys.executable).parent / "watcher")


class HungForge:
    """A pull-request API on 127.0.0.1 that takes the request and never finishes answering it.

    ``trickle``: it starts a 201 answer and sends one more byte of a header every 0.1 s, for ever.
    """

    def __init__(self, *, trickle: bool = False) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.trickle = trickle
        self.accepted: list[socket.socket] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/api/v3"

    def _serve(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        self.accepted.append(conn)
        if not self.trickle:
            return
        try:
            conn.sendall(b"HTTP/1.1 201 Created\r\nX-Slow: ")
            while not self.stopped.wait(0.1):
                conn.sendall(b"a")
        except OSError:
            return

    def close(self) -> None:
        self.stopped.set()
        for sock in (*self.accepted, self.listener):
            sock.close()
        self.thread.join(5)


@contextmanager
def hung_forge(*, trickle: bool = False) -> Iterator[HungForge]:
    forge = HungForge(trickle=trickle)
    try:
        yield forge
    finally:
        forge.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
async def test_a_signal_while_the_forge_does_not_answer_the_pull_request_stops_at_once_with_the_report(
    project: Project, tmp_path: Path, sig: signal.Signals
) -> None:
    cli = launcher(write_script(tmp_path / "script.jsonl", write_a()), tmp_path)
    journal = tmp_path / "j.sqlite3"
    env = {**os.environ, "GITHUB_TOKEN": "loopback-token", "ANTHROPIC_API_KEY": "sk-ant-test-0000"}
    with hung_forge() as forge:
        args = [
            "spawn",
            "add a.txt",
            "--json",
            "--cli-path",
            str(cli),
            "--forge-api",
            forge.api,
            "--journal",
            str(journal),
        ]
        proc = await asyncio.create_subprocess_exec(WATCHER, *args, cwd=project.repo, env=env, stdout=PIPE, stderr=PIPE)
        try:
            await wait_until(lambda: forge.accepted, 60, what="the pull request to reach the forge")
            proc.send_signal(sig)
            stopped = time.monotonic()
            out, err = await asyncio.wait_for(proc.communicate(), 60)
            took = time.monotonic() - stopped
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    assert proc.returncode == 143, err.decode()
    assert took < 10, f"watcher waited {took:.1f}s for the forge after the signal"  # it waited out the 30 s timeout
    assert "Traceback" not in err.decode()
    report = json.loads(out)
    assert report["status"] == "interrupted" and report["pr"] is None
    assert [c.split(" ", 1)[1] for c in report["commits"]] == [
        f"spawn {report['id']}: changes the agent left uncommitted"
    ]
    assert any(
        "stopped while the forge was opening the pull request" in n and "see whether the forge opened" in n
        for n in report["notes"]
    ), report["notes"]
    assert project.forge.branch_head("acme", "shop", report["branch"]) is not None  # the branch went out
    with Journal(journal) as read:
        ends = [r.payload for r in read.read(kinds={"session"}) if r.payload.get("status") != "started"]
    assert ends[-1]["status"] == "interrupted", ends


async def test_a_forge_that_trickles_its_answer_for_ever_is_given_up_on_with_the_branch_pushed(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(finish, "FORGE_DEADLINE_S", 2.0)
    cli = str(launcher(write_script(tmp_path / "script.jsonl", write_a()), tmp_path))
    with hung_forge(trickle=True) as forge:
        config = SpawnConfig(
            "add a.txt", agent="claude", repo=project.repo, cli_path=cli, forge_api=forge.api, env=project.env(),
            journal=project.journal, idle_timeout_s=20, total_timeout_s=60, watchers=(),
        )  # fmt: skip
        started = time.monotonic()
        spawned = await asyncio.wait_for(run_spawn(config), 30)
        took = time.monotonic() - started
    assert spawned.status == "integration_failed", spawned.detail
    assert f"did not answer the pull request within 2s; {spawned.branch} is pushed to 'origin'" in spawned.detail
    assert "see whether the forge opened the pull request" in spawned.detail
    assert project.forge.branch_head("acme", "shop", spawned.branch) == git(project.repo, "rev-parse", spawned.branch)
    assert took < 25
