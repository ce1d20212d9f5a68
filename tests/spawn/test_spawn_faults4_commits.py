"""The agent's own commits pass the repository's hooks, as configured by the user, before anything is pushed.

The agent's git runs with a private HOME (the user's global config unseen: a global
``core.hooksPath``) and may commit with ``--no-verify``; watcher runs the hooks over those commits
at integration. Real git, real hooks, the fake CLI committing in the worktree.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from spawn_helpers import Project, executable, git, init, result, write_script

from watcher.spawn import SpawnConfig, SpawnResult, run_spawn
from watcher.testing.fake_cli import launcher

pytestmark = pytest.mark.slow

REFUSE_FORBIDDEN = (
    "#!/bin/sh\nif git diff --cached | grep -q FORBIDDEN; then echo 'a.txt: FORBIDDEN found' >&2; exit 1; fi\n"
)


def committing(content: str, *flags: str, message: str = "add a") -> list[dict[str, object]]:
    return [
        {"fake": "write", "path": "a.txt", "content": content},
        {"fake": "run", "argv": ["git", "add", "a.txt"]},
        {"fake": "run", "argv": ["git", "commit", *flags, "-qm", message]},
    ]


async def spawn(project: Project, tmp_path: Path, steps: list[dict[str, object]], **options: object) -> SpawnResult:
    script = write_script(tmp_path / "script.jsonl", [init(), *steps, result()])
    defaults: dict[str, object] = {
        "repo": project.repo, "cli_path": str(launcher(script, tmp_path)), "env": project.env(),
        "journal": project.journal, "forge_api": project.forge.api_url, "watchers": (),
        "idle_timeout_s": 20, "total_timeout_s": 60,
    }  # fmt: skip
    return await run_spawn(SpawnConfig("add a.txt and commit it", **{**defaults, **options}))  # type: ignore[arg-type]


def nothing_pushed(project: Project, spawned: SpawnResult) -> None:
    assert project.forge.pulls == [] and project.forge.branch_head("acme", "shop", spawned.branch) is None


async def test_an_agent_commit_made_with_no_verify_past_a_refusing_hook_is_not_pushed(
    project: Project, tmp_path: Path
) -> None:
    executable(project.repo / ".git" / "hooks" / "pre-commit", REFUSE_FORBIDDEN)
    spawned = await spawn(project, tmp_path, committing("FORBIDDEN\n", "--no-verify"))

    assert spawned.status == "integration_failed", spawned.detail
    assert "the agent's own commits (" in spawned.detail and "add a) do not pass the repository's pre-commit" in (
        spawned.detail
    )
    assert "a.txt: FORBIDDEN found" in spawned.detail and "--no-verify" in spawned.detail
    nothing_pushed(project, spawned)
    worktree = Path(spawned.worktree)  # the branch and the worktree are as the agent left them
    assert git(worktree, "symbolic-ref", "--short", "HEAD") == spawned.branch
    assert git(worktree, "status", "--porcelain") == "" and git(worktree, "log", "-1", "--format=%s") == "add a"


async def test_a_hook_in_the_users_global_hooks_path_gates_the_agents_commits_and_watchers_own(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hooks = tmp_path / "global-hooks"
    executable(hooks / "pre-commit", REFUSE_FORBIDDEN)
    config = tmp_path / "gitconfig"  # the user's global config: the agent, with a private HOME, does not see it
    config.write_text(f"[core]\n\thooksPath = {hooks}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))

    spawned = await spawn(project, tmp_path, committing("FORBIDDEN\n"))  # the agent's hooks ran: none it could see
    assert spawned.status == "integration_failed", spawned.detail
    assert "pre-commit hook" in spawned.detail and "a.txt: FORBIDDEN found" in spawned.detail
    nothing_pushed(project, spawned)

    (tmp_path / "again").mkdir()
    leftovers = await spawn(project, tmp_path / "again", [{"fake": "write", "path": "a.txt", "content": "FORBIDDEN\n"}])
    assert leftovers.status == "integration_failed" and "hooks refused it" in leftovers.detail, leftovers.detail


async def test_a_commit_message_the_commit_msg_hook_refuses_is_named(project: Project, tmp_path: Path) -> None:
    executable(
        project.repo / ".git" / "hooks" / "commit-msg",
        "#!/bin/sh\ngrep -qE '^(feat|fix): ' \"$1\" || { echo 'commit message must start with feat: or fix:' >&2; exit 1; }\n",
    )
    spawned = await spawn(project, tmp_path, committing("a\n", "--no-verify", message="wip"))

    assert spawned.status == "integration_failed", spawned.detail
    assert "commit-msg hook" in spawned.detail and "wip" in spawned.detail
    assert "must start with feat: or fix:" in spawned.detail
    nothing_pushed(project, spawned)


async def test_a_formatter_hook_the_agent_skipped_gets_its_fixes_committed_and_the_work_proposed(
    project: Project, tmp_path: Path
) -> None:
    executable(
        project.repo / ".git" / "hooks" / "pre-commit",
        "#!/bin/sh\nif grep -q ' $' a.txt; then sed -i 's/ *$//' a.txt; echo 'fixed trailing whitespace'; exit 1; fi\n",
    )
    spawned = await spawn(project, tmp_path, committing("a  \n", "--no-verify"))

    assert spawned.status == "completed", spawned.detail
    assert [c.split(" ", 1)[1] for c in spawned.commits] == [
        f"spawn {spawned.id}: the repository's hooks' fixes to the agent's commits",
        "add a",
    ]
    assert project.forge_file(spawned.branch, "a.txt") == "a" and len(project.forge.pulls) == 1


async def test_agent_commits_that_pass_the_hooks_are_proposed_under_the_users_global_identity(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    executable(project.repo / ".git" / "hooks" / "pre-commit", REFUSE_FORBIDDEN)
    git(project.repo, "config", "--unset", "user.name")
    git(project.repo, "config", "--unset", "user.email")
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = Global Person\n\temail = global@example.com\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    spawned = await spawn(project, tmp_path, committing("fine\n"))

    assert spawned.status == "completed", spawned.detail
    assert len(spawned.commits) == 1 and len(project.forge.pulls) == 1
    author = git(project.repo, "log", "-1", "--format=%an <%ae> / %cn <%ce>", spawned.branch)
    assert author == "Global Person <global@example.com> / Global Person <global@example.com>"


async def test_what_the_users_global_ignore_file_excludes_stays_out_of_the_agents_commits(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ignore = tmp_path / "global-ignore"
    ignore.write_text("*.env\n")
    config = tmp_path / "gitconfig"  # the user's global config: the agent's private HOME hides it
    config.write_text(f"[core]\n\texcludesFile = {ignore}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    steps: list[dict[str, object]] = [
        {"fake": "write", "path": "local.env", "content": "API_KEY=not-for-the-forge\n"},
        {"fake": "write", "path": "a.txt", "content": "a\n"},
        {"fake": "run", "argv": ["git", "add", "-A"]},
        {"fake": "run", "argv": ["git", "commit", "-qm", "add a"]},
    ]
    spawned = await spawn(project, tmp_path, steps)

    assert spawned.status == "completed", spawned.detail
    assert [f.path for f in spawned.files] == ["a.txt"] and len(project.forge.pulls) == 1
    assert git(project.forge.root / "acme" / "shop.git", "ls-tree", "--name-only", spawned.branch).split() == [
        "README.md",
        "a.txt",
        "src",
    ]
