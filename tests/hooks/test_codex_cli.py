"""The real Codex CLI (pinned in package.json) with hooks installed by ``watcher hooks install --agent codex``.

Codex runs a new hook only once a person has trusted it; these headless runs pass
``--dangerously-bypass-hook-trust`` instead, as automation that installed the hooks itself may.
The Responses-API stub plays the model; what the hooks answered is read in the next request.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hook_procs import stop_started_daemon, wait_for

from watcher.runtime.journal import Journal
from watcher.testing import RecordedRequest, Reply, StubResponsesServer

CODEX = Path(__file__).resolve().parents[2] / "node_modules" / ".bin" / "codex"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CODEX.exists(), reason="the Codex CLI is not installed: run `make clis` (needs npm)"),
]


@dataclass
class Project:
    root: Path
    codex_home: Path
    env: dict[str, str]

    def watcher(self, *args: str) -> str:
        if args[:2] == ("hooks", "install"):  # a verdict must not depend on how busy the test machine is
            args = (*args, "--budget", "8")
        done = subprocess.run(
            [sys.executable, "-m", "watcher", *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    def codex(self, stub: StubResponsesServer, prompt: str = "do the task") -> list[dict[str, Any]]:
        config = [
            "check_for_update_on_startup = false",
            'model_provider = "stub"',
            "",
            "[model_providers.stub]",
            'name = "stub"',
            f'base_url = "{stub.base_url}"',
            'env_key = "OPENAI_API_KEY"',
            'wire_api = "responses"',
            "request_max_retries = 0",
            "stream_max_retries = 0",
            "",
            "[analytics]",
            "enabled = false",
            "",
            "[feedback]",
            "enabled = false",
            "",
        ]
        (self.codex_home / "config.toml").write_text("\n".join(config))
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(self.codex_home.parent),
            "CODEX_HOME": str(self.codex_home),
            "OPENAI_API_KEY": "sk-test-dummy",
            "NO_COLOR": "1",
            "WATCHER_SOCKET": self.env["WATCHER_SOCKET"],
            "WATCHER_SERVE_IDLE": "20",
        }
        command = [
            str(CODEX),
            "exec",
            "--dangerously-bypass-hook-trust",
            "-s",
            "workspace-write",
            "--skip-git-repo-check",
        ]
        command += ["--disable", "plugins", "--disable", "remote_plugin", "--disable", "apps", "--json", prompt]
        done = subprocess.run(
            command,
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            start_new_session=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    root, codex_home = tmp_path / "project", tmp_path / "home" / ".codex"
    root.mkdir()
    codex_home.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("WATCHER_")}
    env.update(WATCHER_SOCKET=str(tmp_path / "run" / "serve.sock"), WATCHER_SERVE_IDLE="20", CODEX_HOME=str(codex_home))
    proj = Project(root, codex_home, env)
    try:
        yield proj
    finally:
        stop_started_daemon(env)


def outputs(request: RecordedRequest) -> list[dict[str, Any]]:
    return [i for i in (request.body or {}).get("input") or [] if isinstance(i, dict)]


def test_a_scripted_rm_rf_home_is_blocked_and_the_model_reads_why(project: Project) -> None:
    assert "/hooks" in project.watcher("hooks", "install", "--agent", "codex", "--user")
    with StubResponsesServer(
        Reply.tool_use("exec_command", {"cmd": "rm -rf ~/"}),
        Reply.text("Understood."),
        default_reply=Reply.text("side"),
    ) as stub:
        project.codex(stub)
        assert len(stub.requests) == 2
    (result,) = [i for i in outputs(stub.requests[1]) if i.get("type") == "function_call_output"]
    assert result["output"].startswith("Command blocked by PreToolUse hook: [watcher guard] [destructive-delete]")
    assert "deletes your home folder" in result["output"]
    deadline = time.monotonic() + 30  # the daemon answers a denial first, then journals it
    while "deny 1" not in (status := project.watcher("hooks", "status", "--agent", "codex", "--user")):
        if time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert "deny 1" in status, status


def test_a_repeated_command_gets_the_stuck_nudge_as_context(project: Project) -> None:
    project.watcher("hooks", "install", "--agent", "codex", "--user", "--watcher", "stuck")
    call = {"cmd": "python3 -c 'import sys; sys.exit(3)'"}
    script = [Reply.tool_use("exec_command", call) for _ in range(4)] + [Reply.text("Trying something else.")]
    with StubResponsesServer(*script, default_reply=Reply.text("side")) as stub:
        project.codex(stub)
        assert len(stub.requests) == 5
    said = [
        part.get("text", "")
        for item in outputs(stub.requests[4])
        if item.get("role") == "developer"
        for part in item.get("content") or []
    ]
    assert any("[watcher stuck]" in text and "4 times in a row" in text for text in said), said


def test_a_stop_with_a_pending_interjection_continues_the_turn_once(project: Project) -> None:
    project.watcher("hooks", "install", "--agent", "codex", "--user", "--max-stop-blocks", "1")
    said = "Before you stop: run the test suite and report the result."
    journal_path = project.root / ".watcher" / "journal.sqlite3"

    def inject_then_finish(request: RecordedRequest) -> Reply:
        wait_for(journal_path.exists)
        journal = Journal(journal_path)
        try:
            wait_for(lambda: any(r.kind == "session" for r in journal.read(0)))
            session = next(r.session for r in journal.read(0) if r.kind == "session")
            journal.submit_command(session, "inject", watcher="stuck", payload={"content": said})
        finally:
            journal.close()
        return Reply.text("All done.")

    with StubResponsesServer(
        Reply.dynamic(inject_then_finish),
        Reply.text("Ran the tests: all pass."),
        Reply.text("unexpected third turn"),
        default_reply=Reply.text("side"),
    ) as stub:
        project.codex(stub)
        assert len(stub.requests) == 2  # kept going once, then stopped
    assert said in json.dumps(outputs(stub.requests[1]))
