"""Spawns driven by the fake CLI replaying Claude Code stream lines: outcomes without npm."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

import pytest
from spawn_helpers import Project, git, init, result, tool_result, tool_use, write_script

from watcher.spawn import SpawnConfig, run_spawn
from watcher.testing.fake_cli import launcher

pytestmark = pytest.mark.slow

DENIED_COMMIT = [{"tool_name": "Bash", "tool_use_id": "t2", "tool_input": {"command": "git commit -m 'add a'"}}]


def fake(tmp_path: Path, lines: list[dict[str, object]]) -> str:
    return str(launcher(write_script(tmp_path / "script.jsonl", lines), tmp_path))


def config(project: Project, cli: str, task: str = "add a.txt", **options: object) -> SpawnConfig:
    defaults: dict[str, object] = {
        "agent": "claude", "repo": project.repo, "cli_path": cli, "forge_api": project.forge.api_url,
        "env": project.env(), "journal": project.journal, "idle_timeout_s": 20, "total_timeout_s": 60,
    }  # fmt: skip
    return SpawnConfig(task, **{**defaults, **options})  # type: ignore[arg-type]


WRITE_A = [
    init(),
    tool_use("Write", {"file_path": "@CWD@/a.txt", "content": "a\n"}, "t1"),
    {"fake": "write", "path": "a.txt", "content": "a\n"},
    tool_result("t1", "File created"),
]


async def test_clean_run_commits_leftovers_pushes_and_opens_a_pr(project: Project, tmp_path: Path) -> None:
    spawned = await run_spawn(config(project, fake(tmp_path, [*WRITE_A, result("Added a.txt.")])))
    assert spawned.status == "completed" and spawned.summary == "Added a.txt."
    assert [f.path for f in spawned.files] == ["a.txt"] and spawned.files[0].added == 1
    assert spawned.pr is not None and project.forge.pulls[0]["head"] == spawned.branch
    assert project.forge_file(spawned.branch, "a.txt") == "a"
    assert "`a.txt` (+1, -0)" in spawned.markdown()


async def test_no_pr_keeps_the_branch_local(project: Project, tmp_path: Path) -> None:
    spawned = await run_spawn(config(project, fake(tmp_path, [*WRITE_A, result()]), pr=False))
    assert spawned.status == "completed" and spawned.pr is None and project.forge.pulls == []
    assert project.forge.branch_head("acme", "shop", spawned.branch) is None and len(spawned.commits) == 1


async def test_a_stalled_cli_is_stopped_by_the_idle_timeout(project: Project, tmp_path: Path) -> None:
    started = time.monotonic()
    spawned = await run_spawn(config(project, fake(tmp_path, [init(), {"fake": "hang"}]), idle_timeout_s=1))
    assert spawned.status == "timeout" and "idle timeout" in spawned.detail
    assert time.monotonic() - started < 15 and spawned.pr is None


async def test_a_crash_is_reported_as_such(project: Project, tmp_path: Path) -> None:
    spawned = await run_spawn(config(project, fake(tmp_path, [init(), {"fake": "exit", "code": 3}])))
    assert spawned.status == "crashed" and "status 3" in spawned.detail and spawned.pr is None


async def test_a_denied_commit_is_refused_after_the_escalation_limit(project: Project, tmp_path: Path) -> None:
    lines = [*WRITE_A, result("could not commit", denials=DENIED_COMMIT)]
    spawned = await run_spawn(config(project, fake(tmp_path, lines), max_escalations=0))
    assert spawned.status == "permission_denied" and spawned.detail == "escalation limit reached (0)"
    assert spawned.recoveries == [
        {
            "strategy": "moderate",
            "fix": "command `git commit *`",
            "outcome": "refused",
            "detail": "escalation limit reached (0)",
        }
    ]
    assert spawned.runs == 1 and spawned.pr is None


async def test_a_widening_the_security_role_objects_to_is_not_made(project: Project, tmp_path: Path) -> None:
    denied = [{"tool_name": "Bash", "tool_use_id": "t2", "tool_input": {"command": "rm -rf /var/lib/shop"}}]
    spawned = await run_spawn(config(project, fake(tmp_path, [*WRITE_A, result("blocked", denials=denied)])))
    assert spawned.status == "permission_denied" and "security role objects" in spawned.detail
    assert spawned.permission_errors[0]["objection"] == "removes /var/lib/shop, outside the worktree"


async def test_interactive_recovery_asks_and_a_no_ends_the_run(project: Project, tmp_path: Path) -> None:
    asked: list[str] = []
    lines = [*WRITE_A, result("could not commit", denials=DENIED_COMMIT)]
    spawned = await run_spawn(
        config(project, fake(tmp_path, lines), recovery="interactive", ask=lambda q: asked.append(q) or False)
    )
    assert asked == ["Allow command `git commit *` and resume?"]
    assert spawned.status == "permission_denied" and spawned.recoveries[0]["outcome"] == "declined"


async def test_a_small_conflict_with_a_moved_base_is_repaired_by_a_second_run(project: Project, tmp_path: Path) -> None:
    from watcher.testing.spawn_scenarios import SCENARIOS

    scenario = next(s for s in SCENARIOS if s.name == "small-conflict-repaired")
    assert scenario.prepare is not None
    scenario.prepare(project.repo)
    spawned = await run_spawn(config(project, str(launcher(scenario.script(tmp_path), tmp_path))))
    assert spawned.status == "completed" and spawned.repaired == ["README.md"] and spawned.runs == 2
    assert "Conflicts resolved by a repair run" in spawned.markdown()
    pushed_log = project.forge.root / "acme" / "shop.git"
    from spawn_helpers import git

    parents = git(pushed_log, "log", "-1", "--format=%P", spawned.branch).split()
    assert len(parents) == 2  # the base was merged into the branch, then proposed
    assert project.forge_file(spawned.branch, "README.md") == "# shop, rewritten here"


async def test_a_manual_watchers_interjection_waits_for_an_inject_from_another_process(
    project: Project, tmp_path: Path
) -> None:
    import asyncio
    import subprocess
    import sys

    from watcher.testing.spawn_scenarios import SCENARIOS

    scenario = next(s for s in SCENARIOS if s.name == "vulnerable-write-interrupted")
    cli = str(launcher(scenario.script(tmp_path), tmp_path))
    task = asyncio.create_task(run_spawn(config(project, cli, watchers=("security:manual",))))
    pending: list[dict[str, object]] = []
    for _ in range(200):
        await asyncio.sleep(0.05)
        project.journal.flush()
        pending = [r.payload for r in project.journal.read(limit=10_000) if r.kind == "interjection"]
        if pending:
            break
    assert pending and pending[0]["status"] == "pending" and not task.done()
    interjection = pending[0]["interjection"]
    assert isinstance(interjection, dict)
    session = next(r.session for r in project.journal.read(limit=10_000) if r.kind == "interjection")
    code = (
        "import sys; from watcher.runtime.journal import Journal; "
        "Journal(sys.argv[1]).submit_command(sys.argv[2], 'inject', sys.argv[3], watcher='security')"
    )
    path = str(project.journal.path)
    argv = [sys.executable, "-c", code, path, session, str(interjection["id"])]
    await asyncio.to_thread(subprocess.run, argv, check=True, timeout=30)
    spawned = await asyncio.wait_for(task, timeout=60)
    assert spawned.status == "completed"  # the fake CLI exits 3 when no message ever arrives
    assert [i["via"] for i in spawned.interjections] == ["live"]


async def test_without_a_token_a_pr_spawn_stops_before_it_starts(project: Project, tmp_path: Path) -> None:
    from watcher.core.errors import ConfigurationError

    env = {"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "sk-ant-test-0000"}
    with pytest.raises(ConfigurationError, match="needs a token: set GITHUB_TOKEN"):
        await run_spawn(config(project, fake(tmp_path, [*WRITE_A, result()]), env=env))
    assert not (project.repo / ".watcher" / "spawns").exists()


async def test_a_forge_that_refuses_leaves_the_work_on_the_branch_and_says_why(
    project: Project, tmp_path: Path
) -> None:
    spawned = await run_spawn(config(project, fake(tmp_path, [*WRITE_A, result()]), forge_repo="acme/missing"))
    assert spawned.status == "integration_failed" and "404" in spawned.detail
    assert project.forge.branch_head("acme", "shop", spawned.branch) is not None  # pushed, not proposed
    assert "**Detail:**" in spawned.markdown()


async def test_a_cli_path_that_does_not_exist_stops_before_anything_is_made(project: Project, tmp_path: Path) -> None:
    from watcher.core.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="is not an executable file"):
        await run_spawn(config(project, str(tmp_path / "no-such-cli")))
    assert not (project.repo / ".watcher" / "spawns").exists()
    assert "spawn/" not in git(project.repo, "branch", "--list")


@pytest.mark.parametrize(
    ("agent", "variable"), [("claude", "ANTHROPIC_API_KEY"), ("gemini", "GEMINI_API_KEY"), ("codex", "OPENAI_API_KEY")]
)
async def test_a_spawn_without_credentials_stops_before_a_worktree_or_a_branch(
    project: Project, tmp_path: Path, agent: str, variable: str
) -> None:
    from watcher.core.errors import MissingCredentialsError

    env = {"PATH": os.environ["PATH"], "GITHUB_TOKEN": "loopback-token"}
    with pytest.raises(MissingCredentialsError, match=variable):
        await run_spawn(replace(config(project, fake(tmp_path, [*WRITE_A, result()]), env=env), agent=agent))
    assert not (project.repo / ".watcher" / "spawns").exists()
    assert "spawn/" not in git(project.repo, "branch", "--list")


async def test_a_subscription_token_signs_in_and_reaches_the_cli(project: Project, tmp_path: Path) -> None:
    lines = [init(), {"fake": "run", "argv": ["sh", "-c", "env > ../cli-env.txt"]}, result()]
    env = {"PATH": os.environ["PATH"], "GITHUB_TOKEN": "loopback-token", "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-x"}
    spawned = await run_spawn(config(project, fake(tmp_path, lines), env=env, pr=False))
    assert spawned.status == "completed", spawned.detail
    assert "CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-x" in (Path(spawned.logs) / "cli-env.txt").read_text()


async def test_the_cli_gets_env_i_plus_secrets_by_name_and_no_secret_reaches_the_journal(
    project: Project, tmp_path: Path
) -> None:
    secret = "tok_live_5f3c9a7e1b2d4c6f8a0b"
    lines = [
        init(),
        {"fake": "run", "argv": ["sh", "-c", "env > ../cli-env.txt"]},
        tool_use("Bash", {"command": "echo using the token"}, "t1"),
        tool_result("t1", "using the token"),
        result(f"Used SHOP_API_TOKEN ({secret})."),
    ]
    env = project.env(SHOP_API_TOKEN=secret, UNRELATED_PASSWORD="hunter2-unrelated")
    spawned = await run_spawn(
        config(project, fake(tmp_path, lines), task="Call the shop API with SHOP_API_TOKEN", env=env, pr=False)
    )
    assert spawned.status == "completed" and spawned.plan["manifest"]["secrets"] == ["SHOP_API_TOKEN"]
    seen = dict(
        line.split("=", 1) for line in (Path(spawned.logs) / "cli-env.txt").read_text().splitlines() if "=" in line
    )
    assert seen["SHOP_API_TOKEN"] == secret and "UNRELATED_PASSWORD" not in seen and "GITHUB_TOKEN" not in seen
    assert seen["HOME"] == str(Path(spawned.logs) / "home")
    project.journal.flush()
    raw = project.journal.path.read_bytes() + b"".join(
        p.read_bytes() for p in project.journal.path.parent.glob("*-wal")
    )
    assert secret.encode() not in raw and b"hunter2-unrelated" not in raw


async def test_interactive_recovery_asks_and_a_yes_resumes_the_session(project: Project, tmp_path: Path) -> None:
    from watcher.testing.spawn_scenarios import SCENARIOS

    scenario = next(s for s in SCENARIOS if s.name == "denied-git-recovered")
    asked: list[str] = []
    cli = str(launcher(scenario.script(tmp_path), tmp_path))
    spawned = await run_spawn(
        config(project, cli, task=scenario.task, recovery="interactive", ask=lambda q: asked.append(q) or True)
    )
    assert asked == ["Allow command `git commit *` and resume?"]
    assert spawned.status == "completed" and spawned.runs == 2 and spawned.recoveries[0]["outcome"] == "resumed"


async def test_a_message_the_cli_never_took_goes_with_the_resumed_session(project: Project, tmp_path: Path) -> None:
    from watcher.testing.scripted_agents import FIXED_LOGIN, VULNERABLE_LOGIN

    login = "@CWD@/src/auth/login.js"
    lines = [  # the security watcher interjects while this CLI never reads stdin again, then it exits
        init(),
        tool_use("Write", {"file_path": login, "content": VULNERABLE_LOGIN}, "v1"),
        {"fake": "write", "path": "src/auth/login.js", "content": VULNERABLE_LOGIN},
        tool_result("v1", "File created"),
        {"fake": "sleep", "s": 1.5},
        result("Added login()."),
    ]
    resumed = [  # the resumed run takes the message as its prompt
        init(),
        tool_use("Write", {"file_path": login, "content": FIXED_LOGIN}, "v2"),
        {"fake": "write", "path": "src/auth/login.js", "content": FIXED_LOGIN},
        tool_result("v2", "File updated"),
        result("login() now passes the credentials as parameters."),
    ]
    write_script(tmp_path / "script.resume.jsonl", resumed)
    spawned = await run_spawn(config(project, fake(tmp_path, lines), watchers=("security",), pr=False))
    assert spawned.status == "completed", (spawned.status, spawned.detail)
    assert spawned.runs == 2 and [i["via"] for i in spawned.interjections] == ["resume"]
    project.journal.flush()
    fates = [r.payload for r in project.journal.read(session=f"spawn-{spawned.id}") if r.kind == "delivery"]
    assert [(f["outcome"], f["detail"]) for f in fates] == [
        ("queued", ""), ("delivered", "carried by the resumed CLI session")
    ]  # fmt: skip


async def test_a_cli_that_exits_says_its_own_last_error_line_in_the_report(project: Project, tmp_path: Path) -> None:
    said = "When using Gemini API, you must specify the GEMINI_API_KEY environment variable."
    lines = [{"fake": "stderr", "text": "Loaded cached credentials.\n" + said}, {"fake": "exit", "code": 41}]
    spawned = await run_spawn(config(project, fake(tmp_path, lines), pr=False))
    assert spawned.status == "crashed"
    assert "exited with status 41" in spawned.detail and f"it said: {said}" in spawned.detail


async def test_the_report_shows_findings_whole_with_paths_from_the_repository(project: Project, tmp_path: Path) -> None:
    from watcher.demo.spawn import RECORDED

    spawned = await run_spawn(config(project, str(launcher(RECORDED, tmp_path)), pr=False))
    report = spawned.markdown()
    assert spawned.interjections, report
    assert spawned.worktree not in report and str(project.repo) not in report
    assert "src/auth/login.js:4" in report and "Debug logs: `.watcher/spawns/" in report
    security = next(line for line in report.splitlines() if line.startswith("- security"))
    assert security.endswith((".", "…", ";", ")")), security  # a whole sentence, or cut at a word with a mark


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"watchers": ("security", "nosuchrole")}, "unknown role 'nosuchrole'"),
        ({"watchers": ("security:loud",)}, "the mode after ':' is manual or autonomous"),
        ({"evaluator": "bogus"}, "unknown evaluator 'bogus'"),
        ({"base": "no-such-branch"}, "base branch 'no-such-branch' does not exist"),
        ({"pr": True, "remote": "upstream"}, "has no remote 'upstream' to push the spawn's branch to"),
    ],
    ids=["role", "mode", "evaluator", "base", "remote"],
)
async def test_a_bad_watcher_or_evaluator_stops_before_a_worktree_or_branch_exists(
    project: Project, tmp_path: Path, options: dict[str, object], said: str
) -> None:
    from watcher.core.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=said):
        await run_spawn(config(project, fake(tmp_path, [*WRITE_A, result()]), **{"pr": False, **options}))
    assert not (project.repo / ".watcher" / "spawns").exists()
    assert (
        git(project.repo, "branch", "--list", "spawn/*") == ""
        and git(project.repo, "worktree", "list").count("\n") == 0
    )  # the main checkout alone


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"idle_timeout_s": -5}, "idle_timeout_s must be a finite number of seconds above 0"),
        ({"idle_timeout_s": 0}, "idle_timeout_s must be a finite number of seconds above 0"),
        ({"total_timeout_s": float("nan")}, "total_timeout_s must be a finite number of seconds above 0"),
        ({"total_timeout_s": float("inf")}, "total_timeout_s must be a finite number of seconds above 0"),
        ({"max_escalations": -3}, "max_escalations must be a whole number of at least 0"),
    ],
)
def test_limits_that_never_or_always_fire_are_refused(project: Project, options: dict[str, object], said: str) -> None:
    from watcher.core.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=said):
        config(project, "/bin/false", **options)
