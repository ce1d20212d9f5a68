"""``watcher spawn`` as a command in its own process: progress lines, the JSON report, cleanup."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from spawn_helpers import Project, git, init, result, tool_result, tool_use, write_script

from watcher.testing.fake_cli import launcher

pytestmark = pytest.mark.slow


def watcher(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).parent / "watcher"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )


def test_spawn_command_reports_json_and_cleanup_removes_the_worktree(project: Project, tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "script.jsonl",
        [
            init(),
            tool_use("Write", {"file_path": "@CWD@/a.txt", "content": "a\n"}, "t1"),
            {"fake": "write", "path": "a.txt", "content": "a\n"},
            tool_result("t1", "File created"),
            result("Added a.txt."),
        ],
    )
    env = {**os.environ, "GITHUB_TOKEN": "loopback-token", "ANTHROPIC_API_KEY": "sk-ant-test-0000"}
    args = ["spawn", "add a.txt", "--cli-path", str(launcher(script, tmp_path)), "--forge-api", project.forge.api_url]
    done = watcher(*args, "--journal", str(tmp_path / "j.sqlite3"), "--json", cwd=project.repo, env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "completed" and report["pr"]["number"] == 1 and report["files"][0]["path"] == "a.txt"
    assert "] execute: 1 written" in done.stderr  # plain progress lines when stderr is not a terminal
    assert Path(report["worktree"]).is_dir()
    local = json.loads(
        watcher(*args, "--no-pr", "--journal", str(tmp_path / "j.sqlite3"), "--json", cwd=project.repo, env=env).stdout
    )
    cleaned = watcher("spawn", "--cleanup", cwd=project.repo, env=env)
    assert cleaned.returncode == 0 and report["id"] in cleaned.stdout and local["id"] in cleaned.stdout
    assert not Path(report["worktree"]).exists() and not Path(local["worktree"]).exists()
    branches = git(project.repo, "branch", "--list", "spawn/*")
    assert local["branch"] not in branches  # only here: deleted with its worktree
    assert (
        report["branch"] in branches and f"kept the branch {report['branch']} (pushed and not merged" in cleaned.stdout
    )


def test_a_missing_repository_or_cli_is_a_clear_error(tmp_path: Path) -> None:
    env = {
        k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GH_TOKEN") and not k.startswith("ANTHROPIC")
    }
    done = watcher("spawn", "do it", "--repo", str(tmp_path), "--no-pr", cwd=tmp_path, env=env)
    assert (
        done.returncode == 2
        and "set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN" in done.stderr
    )
    env["ANTHROPIC_API_KEY"] = "sk-ant-test-0000"
    done = watcher("spawn", "do it", "--repo", str(tmp_path), "--no-pr", cwd=tmp_path, env=env)
    assert done.returncode == 2 and "is not a git repository" in done.stderr and "Traceback" not in done.stderr
    done = watcher("spawn", "do it", "--repo", str(tmp_path), cwd=tmp_path, env=env)
    assert done.returncode == 2 and "needs a token: set GITHUB_TOKEN" in done.stderr
    done = watcher("spawn", "do it", "--cli-path", "/nonexistent/claude", "--no-pr", cwd=tmp_path, env=env)
    assert done.returncode == 2 and "is not an executable file" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (("-w", "nosuchrole"), "watcher: error: unknown role 'nosuchrole'"),
        (("--evaluator", "bogus"), "watcher: error: unknown evaluator 'bogus'"),
        (("--idle-timeout", "-5"), "argument --idle-timeout: '-5' is not a number of seconds above 0"),
        (("--total-timeout", "nan"), "argument --total-timeout: 'nan' is not a number of seconds above 0"),
        (("--max-escalations", "-3"), "argument --max-escalations: '-3' is not a whole number of at least 0"),
    ],
)
def test_a_bad_option_is_refused_before_a_worktree_or_branch_exists(
    project: Project, tmp_path: Path, argv: tuple[str, ...], said: str
) -> None:
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-test-0000"}
    args = ["spawn", "add a.txt", "--cli-path", "/bin/false", "--no-pr", "--journal", str(tmp_path / "j.sqlite3")]
    done = watcher(*args, *argv, cwd=project.repo, env=env)
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (project.repo / ".watcher" / "spawns").exists()
    assert git(project.repo, "branch", "--list", "spawn/*") == ""
    assert git(project.repo, "worktree", "list").count("\n") == 0  # the main checkout alone


def test_an_llm_watcher_whose_key_is_refused_is_said_before_a_worktree_exists(project: Project, tmp_path: Path) -> None:
    from watcher.testing import StubAnthropicServer

    with StubAnthropicServer(api_keys=["sk-ant-right-0000"]) as stub:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-wrong-0000", "ANTHROPIC_BASE_URL": stub.root_url}
        args = ["spawn", "add a.txt", "--cli-path", "/bin/false", "--no-pr", "--evaluator", "anthropic"]
        done = watcher(*args, "--journal", str(tmp_path / "j.sqlite3"), cwd=project.repo, env=env)
    assert done.returncode == 2 and "refused the key" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "sk-ant-wrong" not in done.stderr
    assert not (project.repo / ".watcher" / "spawns").exists()
    assert git(project.repo, "branch", "--list", "spawn/*") == ""
