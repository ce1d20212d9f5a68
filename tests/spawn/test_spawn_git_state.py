"""After the agent, watcher runs git in the worktree outside the agent's sandbox: it runs none when the
agent changed what git would run there (the repository's hooks, its config), so nothing the agent
chose runs with your environment. Real git, the fake CLI standing in for an agent that can write the
main repository's git dir (as Codex can once commits are allowed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from spawn_helpers import Project, git, init, result, write_script

from watcher.runtime.session import EndState
from watcher.spawn import SpawnConfig, run_spawn
from watcher.testing.fake_cli import launcher

pytestmark = pytest.mark.slow


def _spawn(project: Project, tmp_path: Path, *steps: dict[str, object]) -> SpawnConfig:
    lines = [init(), {"fake": "write", "path": "a.txt", "content": "a\n"}, *steps, result("Added a.txt.")]
    cli = launcher(write_script(tmp_path / "script.jsonl", lines), tmp_path)
    return SpawnConfig(
        "add a.txt", agent="claude", repo=project.repo, cli_path=str(cli), env=project.env(),
        journal=project.journal, idle_timeout_s=20, total_timeout_s=60, pr=False,
    )  # fmt: skip


def _planting(path: Path, marker: Path) -> dict[str, object]:
    """A step that writes an executable script at ``path`` which, if ever run, leaves ``marker``."""
    code = (
        "import os, sys; p = sys.argv[1]; open(p, 'w').write('#!/bin/sh\\ntouch ' + sys.argv[2] + '\\n'); "
        "os.chmod(p, 0o755)"
    )
    return {"fake": "run", "argv": ["python3", "-c", code, str(path), str(marker)]}


async def test_a_hook_the_agent_planted_in_the_repository_never_runs(project: Project, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    hook = project.repo / ".git" / "hooks" / "pre-commit"
    spawned = await run_spawn(_spawn(project, tmp_path, _planting(hook, marker)))
    assert spawned.status == EndState.INTEGRATION_FAILED, spawned.detail
    assert str(hook.parent) in spawned.detail and "ran no git" in spawned.detail
    assert not marker.exists(), "the agent's hook ran outside its sandbox"


async def test_a_program_the_agent_set_in_the_repositorys_config_never_runs(project: Project, tmp_path: Path) -> None:
    marker = tmp_path / "fsmonitor-ran"
    script = tmp_path / "monitor.sh"
    steps = [_planting(script, marker), {"fake": "run", "argv": ["git", "config", "core.fsmonitor", str(script)]}]
    spawned = await run_spawn(_spawn(project, tmp_path, *steps))
    assert spawned.status == EndState.INTEGRATION_FAILED, spawned.detail
    assert str(project.repo / ".git" / "config") in spawned.detail
    assert not marker.exists(), "git status ran the agent's fsmonitor outside its sandbox"


async def test_hooks_kept_in_the_project_and_edited_by_the_agent_never_run(project: Project, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    (project.repo / ".githooks").mkdir()
    (project.repo / ".githooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (project.repo / ".githooks" / "pre-commit").chmod(0o755)
    git(project.repo, "add", ".githooks")
    git(project.repo, "commit", "-qm", "hooks")
    git(project.repo, "config", "core.hooksPath", ".githooks")
    spawned = await run_spawn(_spawn(project, tmp_path, _planting(Path(".githooks/pre-commit"), marker)))
    assert spawned.status == EndState.INTEGRATION_FAILED, spawned.detail
    assert ".githooks" in spawned.detail
    assert not marker.exists(), "the project's hook, as the agent rewrote it, ran outside its sandbox"


async def test_a_spawn_that_leaves_git_as_it_was_is_committed_as_before(project: Project, tmp_path: Path) -> None:
    (project.repo / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")  # the user's own hook
    (project.repo / ".git" / "hooks" / "pre-commit").chmod(0o755)
    spawned = await run_spawn(_spawn(project, tmp_path))
    assert spawned.status == "completed", spawned.detail
    assert [f.path for f in spawned.files] == ["a.txt"]
