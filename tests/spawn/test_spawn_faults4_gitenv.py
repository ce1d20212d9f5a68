"""watcher's own git in a spawn acts on the spawn's repository, whatever GIT_DIR or GIT_INDEX_FILE says.

``watcher spawn`` started from a git hook, an alias or ``git rebase -x`` inherits git's variables
that name another repository or index; git obeys them over ``-C``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from asyncio.subprocess import PIPE
from pathlib import Path

import pytest
from spawn_helpers import Project, git, write_a, write_script

from watcher.testing.fake_cli import launcher

pytestmark = pytest.mark.slow

WATCHER = str(Path(sys.executable).parent / "watcher")


async def test_git_variables_naming_another_repository_leave_it_alone(project: Project, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "trunk")
    git(other, "-c", "user.name=O", "-c", "user.email=o@example.com", "commit", "-q", "--allow-empty", "-m", "other")
    before = git(other, "for-each-ref")
    env = {
        **os.environ, "GITHUB_TOKEN": "loopback-token", "ANTHROPIC_API_KEY": "sk-ant-test-0000",
        "GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other), "GIT_INDEX_FILE": str(other / ".git" / "index"),
    }  # fmt: skip
    cli = str(launcher(write_script(tmp_path / "script.jsonl", write_a()), tmp_path))
    args = ["spawn", "add a.txt", "--json", "--cli-path", cli, "--forge-api", project.forge.api_url]
    proc = await asyncio.create_subprocess_exec(
        WATCHER, *args, "--journal", str(tmp_path / "j.sqlite3"), cwd=project.repo, env=env, stdout=PIPE, stderr=PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    report = json.loads(out)
    assert git(other, "for-each-ref") == before and not (other / "a.txt").exists()
    assert [f["path"] for f in report["files"]] == ["a.txt"] and len(project.forge.pulls) == 1
    assert Path(report["worktree"]).is_relative_to(project.repo)
