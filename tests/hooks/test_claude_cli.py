"""The real Claude Code CLI (pinned in package.json) with hooks installed by ``watcher hooks install``.

Each test makes a temporary git project, installs the hooks with the real command, and runs
``claude -p`` headless against the Anthropic stub, which plays the model from a script. What the
hooks answered is read where the model would read it: in the next request the stub receives.
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
from watcher.testing import RecordedRequest, Reply, StubAnthropicServer

CLAUDE = Path(__file__).resolve().parents[2] / "node_modules" / ".bin" / "claude"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CLAUDE.exists(), reason="the Claude Code CLI is not installed: run `make clis` (needs npm)"),
]


@dataclass
class Project:
    root: Path
    home: Path
    env: dict[str, str]

    @property
    def journal(self) -> Path:
        return self.root / ".watcher" / "journal.sqlite3"

    def watcher(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        if args[:2] == ("hooks", "install"):  # a verdict must not depend on how busy the test machine is
            args = (*args, "--budget", "8")
        return subprocess.run(
            [sys.executable, "-m", "watcher", *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            check=check,
        )

    def claude(
        self, stub: StubAnthropicServer, prompt: str = "do the task", *, key_in_env: bool = True
    ) -> list[dict[str, Any]]:
        """Run ``claude -p``; without ``key_in_env`` its key comes from an ``apiKeyHelper`` (as after a login),
        so the hooks it runs have no ``ANTHROPIC_API_KEY``."""
        if not key_in_env:
            (self.home / ".claude").mkdir(exist_ok=True)
            (self.home / ".claude" / "settings.json").write_text(json.dumps({"apiKeyHelper": "echo sk-ant-test-dummy"}))
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(self.home),
            "ANTHROPIC_BASE_URL": stub.root_url,
            **({"ANTHROPIC_API_KEY": "sk-ant-test-dummy"} if key_in_env else {}),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "WATCHER_SOCKET": self.env["WATCHER_SOCKET"],
            "WATCHER_SERVE_IDLE": "20",
        }
        done = subprocess.run(
            [
                str(CLAUDE),
                "-p",
                prompt,
                "--output-format",
                "stream-json",
                "--verbose",
                "--allowedTools",
                "Bash",
                "--tools",
                "Bash,Read,Write,Edit",
            ],
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
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WATCHER_", "ANTHROPIC_", "OPENAI_"))}
    env["WATCHER_SOCKET"] = str(tmp_path / "run" / "serve.sock")
    env["WATCHER_SERVE_IDLE"] = "20"
    proj = Project(root, home, env)
    try:
        yield proj
    finally:
        stop_started_daemon(env)


def last_message(request: RecordedRequest) -> str:
    messages = (request.body or {}).get("messages") or []
    return json.dumps(messages[-1]) if messages else ""


def test_a_scripted_rm_rf_home_is_denied_and_the_model_reads_why(project: Project) -> None:
    out = project.watcher("hooks", "install").stdout
    assert "installed watcher hooks for 9 events" in out
    settings = (project.root / ".claude" / "settings.local.json").read_text()  # the default: this checkout's
    commands = [h["command"] for groups in json.loads(settings)["hooks"].values() for g in groups for h in g["hooks"]]
    assert all(c.startswith("watcher-hook ") for c in commands)  # the script Claude Code finds on PATH...
    assert sys.executable not in settings and str(Path(__file__).parents[2]) not in settings  # ...nothing of here
    canary = project.home / "keep-me"
    canary.write_text("still here")
    with StubAnthropicServer(
        Reply.tool_use("Bash", {"command": "rm -rf ~/"}),
        Reply.text("Understood, I will not."),
        default_reply=Reply.text("side request"),
    ) as stub:
        lines = project.claude(stub)
        assert len(stub.requests) == 2
    after_denial = json.loads(last_message(stub.requests[1]))
    (result,) = after_denial["content"]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert "PreToolUse:Bash hook error: [watcher guard] [destructive-delete]" in result["content"]
    assert "deletes your home folder" in result["content"]
    assert canary.read_text() == "still here"  # no command ran
    assert lines[-1]["type"] == "result"
    status = _status_once_journaled(project)
    assert "deny 1" in status, status


def test_without_the_evaluator_s_key_the_guard_still_denies_and_everyone_is_told(project: Project) -> None:
    refused = project.watcher("hooks", "install", "--evaluator", "anthropic", check=False)
    assert refused.returncode == 2 and "ANTHROPIC_API_KEY is not set" in refused.stderr
    assert "--allow-missing-key" in refused.stderr and not (project.root / ".claude").exists()
    out = project.watcher("hooks", "install", "--evaluator", "anthropic", "--allow-missing-key").stdout
    assert "warning: the anthropic evaluator has no API key" in out
    canary = project.home / "keep-me"
    canary.write_text("still here")
    with StubAnthropicServer(
        Reply.tool_use("Bash", {"command": "rm -rf ~/"}),
        Reply.text("Understood, I will not."),
        default_reply=Reply.text("side request"),
    ) as stub:
        project.claude(stub, key_in_env=False)
        assert len(stub.requests) == 2
    (result,) = json.loads(last_message(stub.requests[1]))["content"]
    assert result["is_error"] is True and "[watcher guard] [destructive-delete]" in result["content"]
    told = [r for r in stub.requests if "ANTHROPIC_API_KEY is not set" in json.dumps(r.body)]
    assert told  # the session is told (with the first answer that can carry it: a context or the denial)
    assert "The watchers use the offline rules instead" in json.dumps(told[0].body)
    assert canary.read_text() == "still here"
    status = _status_once_journaled(project)
    assert "evaluator anthropic" in status and "ANTHROPIC_API_KEY is not set" in status, status
    assert "deny 1" in status, status


def _status_once_journaled(project: Project, *args: str) -> str:
    """``hooks status`` once the denial is journaled (the daemon answers a denial first, then journals it)."""
    deadline = time.monotonic() + 30
    while "deny 1" not in (status := project.watcher("hooks", "status", *args).stdout) and time.monotonic() < deadline:
        time.sleep(0.2)
    return status


def test_a_read_of_a_private_key_is_denied_and_the_model_reads_why(project: Project) -> None:
    project.watcher("hooks", "install")
    (project.home / ".ssh").mkdir()
    key = project.home / ".ssh" / "id_rsa"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nCANARY-KEY-MATERIAL\n-----END OPENSSH PRIVATE KEY-----\n")
    with StubAnthropicServer(
        Reply.tool_use("Read", {"file_path": str(key)}),
        Reply.text("I will not read it."),
        default_reply=Reply.text("side request"),
    ) as stub:
        project.claude(stub)
        assert len(stub.requests) == 2
    (result,) = json.loads(last_message(stub.requests[1]))["content"]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert "PreToolUse:Read hook error: [watcher guard] [secret-read]" in result["content"]
    assert "~/.ssh/id_rsa" in result["content"]
    assert all("CANARY-KEY-MATERIAL" not in json.dumps(r.body) for r in stub.requests)  # it never reached the model


def test_a_loop_of_a_failing_command_gets_the_stuck_nudge_as_context(project: Project) -> None:
    project.watcher("hooks", "install", "--watcher", "stuck", "--watcher", "security")
    failing = {"command": "python3 -c 'import sys; sys.exit(3)'"}
    script = [Reply.tool_use("Bash", failing) for _ in range(3)] + [Reply.text("I will try something else.")]
    with StubAnthropicServer(*script, default_reply=Reply.text("side request")) as stub:
        project.claude(stub)
        assert len(stub.requests) == 4
    assert "hook additional context" not in last_message(stub.requests[2])  # two failures are no loop yet
    nudge = json.loads(last_message(stub.requests[3]))
    assert nudge["role"] == "system"
    text = nudge["content"][0]["text"]
    assert text.startswith("PostToolUseFailure:Bash hook additional context: [watcher stuck] Stuck?")
    assert "has failed 3 times in a row" in text


def test_a_stop_with_a_pending_interjection_continues_the_turn_once(project: Project) -> None:
    project.watcher("hooks", "install", "--max-stop-blocks", "1")
    said = "Before you stop: run the test suite and report the result."

    def inject_then_finish(request: RecordedRequest) -> Reply:
        # a person clicks Inject in the editor while the model is thinking: the command goes
        # into the journal, and the hook that ends the turn carries it
        wait_for(project.journal.exists)
        journal = Journal(project.journal)
        try:
            wait_for(lambda: any(r.kind == "session" for r in journal.read(0)))
            session = next(r.session for r in journal.read(0) if r.kind == "session")
            journal.submit_command(session, "inject", watcher="stuck", payload={"content": said})
        finally:
            journal.close()
        return Reply.text("All done.")

    with StubAnthropicServer(
        Reply.dynamic(inject_then_finish),
        Reply.text("Ran the tests: all pass."),
        Reply.text("unexpected third turn"),
        default_reply=Reply.text("side request"),
    ) as stub:
        lines = project.claude(stub)
        assert len(stub.requests) == 2  # continued once, then stopped: the third reply was never asked for
    carried = json.loads(last_message(stub.requests[1]))
    assert carried["role"] == "system"
    assert "Stop hook blocking error" in carried["content"][0]["text"]
    assert f"[watcher stuck] {said}" in carried["content"][0]["text"]
    feedback = [line for line in lines if line.get("type") == "user" and line.get("isSynthetic")]
    assert feedback and said in json.dumps(feedback[0])
    assert lines[-1]["result"] == "Ran the tests: all pass."


def test_a_loop_the_stuck_role_pauses_stops_the_cli_at_the_next_call(project: Project) -> None:
    project.watcher("hooks", "install", "--watcher", "stuck")
    runs = project.root / "runs.log"
    failing = {"command": "echo ran >> runs.log; exit 1"}
    script = [Reply.tool_use("Bash", failing) for _ in range(5)] + [Reply.text("should not be asked for")]
    with StubAnthropicServer(*script, default_reply=Reply.text("side request")) as stub:
        lines = project.claude(stub)
        assert len(stub.requests) == 5  # the fifth call was stopped: the model was not asked again
    assert "[watcher stuck] Pausing:" in last_message(stub.requests[4])  # the pause, as context first
    assert runs.read_text().splitlines() == ["ran"] * 4  # four ran, the fifth never did
    assert lines[-1]["type"] == "result"
