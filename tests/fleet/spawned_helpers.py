"""Shared pieces of the spawned-CLI fleet tests: the real CLIs' paths, a repository, the CLI's model on its stub."""

from __future__ import annotations

import asyncio
import re
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fleet_helpers import marker

from watcher.agents import tool
from watcher.fleet import Fleet, FleetConfig, TaskSpec
from watcher.runtime import Journal
from watcher.testing import RecordedRequest, Reply, StubAnthropicServer, wait_until

BIN = Path(__file__).resolve().parents[2] / "node_modules" / ".bin"
FAST = FleetConfig(watch_interval_s=0.05, sync_interval_s=0.05, min_task_age_s=0.0, command_poll_s=0.05)
NUDGE = re.compile(r'<system-nudge severity="(hint|warning|critical)">')


def cli(name: str) -> str:
    """The real CLI's path, or skip the test saying why."""
    path = BIN / name
    if not path.exists():
        pytest.skip(f"{path} is absent: run `make clis` (needs npm) to drive the real {name} CLI")
    return str(path)


def make_repo(tmp_path: Path) -> Path:
    """A real git repository with one commit: the spawned CLI works in a worktree of it."""
    root = tmp_path / "shop"
    root.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.email", "dev@example.com"],
        ["config", "user.name", "Dev"],
    ):
        subprocess.run(["git", "-C", str(root), *args], check=True)
    (root / "README.md").write_text("# shop\n")
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "init"], check=True)
    return root


def texts(request: RecordedRequest) -> Iterator[str]:
    """Every text block of a request's messages, whatever the role (Claude Code surfaces a mid-turn line as ``system``)."""
    for message in (request.body or {}).get("messages") or []:
        content = message.get("content")
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
            if isinstance(block, dict) and block.get("type") == "text":
                yield str(block["text"])


class CLIModel:
    """The Claude Code task's model on its own stub: ``step(request)`` answers, every tool request is recorded."""

    def __init__(self, step: Callable[[int, RecordedRequest], Reply]) -> None:
        self.step = step
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            return self.step(len(self.requests) - 1, request)

    def server(self) -> StubAnthropicServer:
        return StubAnthropicServer(*[Reply.dynamic(self)] * 500, default_reply=Reply.text("ok"))


def agent_run(
    name: str, text: str, tags: tuple[str, ...] = ()
) -> tuple[TaskSpec, Callable[[int, RecordedRequest], Reply]]:
    """One of watcher's own agent runs: says ``text`` while reading a file, then finishes."""

    def read_file(path: str) -> str:
        """Read a file.

        Args:
            path: the file
        """
        return f"contents of {path}"

    def script(n: int, request: RecordedRequest) -> Reply:
        return Reply.tool_use("Read", {"path": "api/client.py"}, text=text) if n == 0 else Reply.text("Done.")

    spec = TaskSpec(name, f"{marker(name)} do your part", tools=(tool(read_file, name="Read"),), tags=tags)
    return spec, script


def claude_env(monkeypatch: pytest.MonkeyPatch, stub: StubAnthropicServer) -> None:
    """The fleet process's environment, which the spawned Claude Code takes its endpoint and key from."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.root_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy")


def rows(journal: Journal, kind: str, session: str) -> list[dict[str, object]]:
    journal.flush()
    return [r.payload for r in journal.read(0, limit=100_000) if r.kind == kind and r.session == session]


async def held_still(fleet: Fleet, task: str, model: CLIModel) -> int:
    """Wait until ``task`` is held at a boundary and check that its CLI sends nothing more; the request count."""
    host = fleet.host
    assert host is not None
    await wait_until(lambda: host.channels[task].held, 10)
    await asyncio.sleep(0.3)  # the request in flight at the boundary, and the interrupt's answer
    count = len(model.requests)
    await asyncio.sleep(1.0)
    assert len(model.requests) == count, "a paused Claude Code sends no more requests"
    return count


def nudges(request: RecordedRequest) -> int:
    return len(NUDGE.findall(" ".join(texts(request))))
