"""End to end with the real Claude Code CLI against the stub: a vulnerable login is interrupted and fixed, then a PR."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from spawn_helpers import Project, cli

from watcher.spawn import SpawnConfig, run_spawn
from watcher.testing import Reply, StubAnthropicServer
from watcher.testing.scripted_agents import CommitTask, LoginTask

pytestmark = pytest.mark.slow

TASK = "Add a login(username, password) to src/auth/login.js that checks the users table with db.query, and commit it."


async def test_security_watcher_interrupts_claude_code_and_the_fix_is_proposed(project: Project) -> None:
    claude = cli("claude")
    model = LoginTask("claude")
    with StubAnthropicServer(*model.replies()) as stub:
        env = project.env(ANTHROPIC_BASE_URL=stub.root_url, ANTHROPIC_API_KEY="sk-ant-dummy")
        result = await run_spawn(
            SpawnConfig(
                TASK, agent="claude", repo=project.repo, cli_path=str(claude), forge_api=project.forge.api_url,
                env=env, journal=project.journal, idle_timeout_s=30, total_timeout_s=120, watchers=("security",),
            )
        )  # fmt: skip
    assert result.status == "completed", (result.status, result.detail, model.steps)
    # the security watcher interrupted the running CLI, urgently, over its live channel
    (interjection,) = result.interjections
    assert interjection["watcher"] == "security" and interjection["urgent"] and interjection["via"] == "live"
    # ... journaled delivered when the CLI echoed it as taken, and in every request it sent from then on
    project.journal.flush()
    rows = project.journal.read(session=f"spawn-{result.id}")
    delivered = [r for r in rows if r.kind == "delivery" and r.payload["outcome"] == "delivered"]
    assert len(delivered) == 1 and "taken by the CLI" in delivered[0].payload["detail"]
    stream = [json.loads(line) for line in (Path(result.logs) / "stream.jsonl").read_text().splitlines()]
    (taken,) = [r for r in stream if r.get("isReplay") and "[SUPERVISOR]" in str(r["message"]["content"])]
    taken_at = datetime.fromisoformat(taken["timestamp"]).timestamp()  # the CLI's own clock, in ms
    assert delivered[0].ts >= taken_at
    after = [i for i, ts in enumerate(model.requests_at) if ts >= taken_at]
    assert after and model.seen_supervisor_at == after[0], (model.requests_at, taken_at, model.steps)
    # the interrupt cut the turn short (a streaming response, or a tool call about to run)
    assert "[Request interrupted by user" in (Path(result.logs) / "stream.jsonl").read_text()
    # the fix was committed, pushed and proposed
    assert result.pr is not None and result.pr.number == 1
    (pull,) = project.forge.pulls
    assert pull["head"] == result.branch and pull["base"] == "main"
    pushed = project.forge_file(result.branch, "src/auth/login.js")
    assert "${username}" not in pushed and "[username, password]" in pushed
    subjects = [c.split(" ", 1)[1] for c in result.commits]
    # the vulnerable commit exists unless the interrupt landed while Claude Code was about to run it
    assert subjects[0] == "login(): pass the credentials as query parameters"
    assert subjects[1:] in ([], ["Add login()"])
    # the report lists the file; the journal holds every phase
    assert "`src/auth/login.js` (+" in result.markdown() and result.pr.url in result.markdown()
    kinds = [r.kind for r in rows]
    for kind in ("sandbox_created", "llm_started", "interjection", "delivery", "llm_completed", "pr_created"):
        assert kind in kinds, kind
    assert json.loads(json.dumps(result.to_dict()))["files"][0]["path"] == "src/auth/login.js"


async def test_a_denied_git_commit_is_widened_and_the_same_session_resumed(project: Project) -> None:
    claude = cli("claude")
    model = CommitTask("claude")
    with StubAnthropicServer(*model.replies()) as stub:
        env = project.env(ANTHROPIC_BASE_URL=stub.root_url, ANTHROPIC_API_KEY="sk-ant-dummy")
        result = await run_spawn(
            SpawnConfig(
                "Write NOTES.md with a heading.", agent="claude", repo=project.repo, cli_path=str(claude),
                env=env, journal=project.journal, pr=False, idle_timeout_s=30, total_timeout_s=120,
            )
        )  # fmt: skip
    assert result.status == "completed", (result.detail, model.steps)
    assert model.steps == ["write", "commit", "summary_refused", "commit_again", "summary_committed"]
    assert result.runs == 2 and result.recoveries[0]["outcome"] == "resumed"
    assert result.recoveries[0]["fix"] == "command `git add *`, command `git commit *`"
    assert [c.split(" ", 1)[1] for c in result.commits] == [
        "Add NOTES.md"
    ]  # the agent's own commit, after the widening
    project.journal.flush()
    rows = project.journal.read(session=f"spawn-{result.id}")
    started = [r.payload for r in rows if r.kind == "llm_started"]
    assert started[1]["resume"] == result.cli_session and "--resume" in started[1]["argv"]
    assert any("Bash(git commit *)" in a for a in started[1]["argv"])
    assert [r.payload["tool"] for r in rows if r.kind == "permission_error"] == ["Bash"]


async def test_a_stalled_model_stream_is_ended_by_the_idle_timeout_and_the_group_killed(project: Project) -> None:
    import os
    import time

    claude = cli("claude")
    with StubAnthropicServer(Reply.stall(60)) as stub:
        env = project.env(ANTHROPIC_BASE_URL=stub.root_url, ANTHROPIC_API_KEY="sk-ant-dummy")
        started = time.monotonic()
        result = await run_spawn(
            SpawnConfig(
                "Write NOTES.md.", agent="claude", repo=project.repo, cli_path=str(claude), env=env,
                journal=project.journal, pr=False, idle_timeout_s=3, total_timeout_s=60,
            )
        )  # fmt: skip
        elapsed = time.monotonic() - started
    assert result.status == "timeout" and "idle timeout" in result.detail
    assert elapsed < 20
    project.journal.flush()
    (started_event,) = [
        r.payload for r in project.journal.read(session=f"spawn-{result.id}") if r.kind == "llm_started"
    ]
    pid = int(started_event["pid"])
    try:
        os.killpg(pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive, "the CLI's process group outlived the timeout"


async def test_an_overload_storm_ends_the_run_as_failed_with_the_clis_words(project: Project) -> None:
    claude = cli("claude")
    with StubAnthropicServer(*[Reply.error(529, "overloaded_error", "Overloaded")] * 10) as stub:
        env = project.env(
            ANTHROPIC_BASE_URL=stub.root_url, ANTHROPIC_API_KEY="sk-ant-dummy", CLAUDE_CODE_MAX_RETRIES="1"
        )
        result = await run_spawn(
            SpawnConfig(
                "Write NOTES.md.", agent="claude", repo=project.repo, cli_path=str(claude), env=env,
                journal=project.journal, idle_timeout_s=30, total_timeout_s=60, forge_api=project.forge.api_url,
            )
        )  # fmt: skip
    assert result.status == "failed" and result.pr is None, (result.status, result.detail)
    assert "529" in result.summary or "verloaded" in result.summary, result.summary
    assert 1 < len(stub.requests) <= 4  # retried as told, then gave up


async def test_a_small_conflict_is_repaired_by_a_second_claude_code_run(project: Project) -> None:
    from watcher.testing.scripted_agents import ReadmeTask
    from watcher.testing.spawn_scenarios import SCENARIOS

    claude = cli("claude")
    moved = next(s for s in SCENARIOS if s.name == "small-conflict-repaired").prepare
    assert moved is not None
    moved(project.repo)  # upstream rewrote README.md meanwhile
    model = ReadmeTask("claude")
    with StubAnthropicServer(*model.replies()) as stub:
        env = project.env(ANTHROPIC_BASE_URL=stub.root_url, ANTHROPIC_API_KEY="sk-ant-dummy")
        result = await run_spawn(
            SpawnConfig(
                "Rewrite README.md and commit it.", agent="claude", repo=project.repo, cli_path=str(claude),
                forge_api=project.forge.api_url, env=env, journal=project.journal, idle_timeout_s=30, total_timeout_s=120,
            )
        )  # fmt: skip
    assert result.status == "completed", (result.status, result.detail, model.steps)
    assert model.steps == ["write", "commit", "summary", "resolve", "conclude", "resolved"]
    assert result.repaired == ["README.md"] and result.runs == 2 and result.pr is not None
    assert project.forge_file(result.branch, "README.md") == "# shop, rewritten here and upstream"
