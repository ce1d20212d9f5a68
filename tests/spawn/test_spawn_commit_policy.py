"""watcher's commit of the agent's leftovers runs the repository's hooks and signs as its config says.

A refused commit keeps the work staged in the worktree, pushes nothing, and says what refused it
and how to finish; a formatter hook that rewrote files gets a second commit; the agent's own
unsigned commits are said when the user signs every commit. Real git, real hooks, the fake CLI.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from spawn_helpers import Project, executable, git, init, result, write_script

from watcher.spawn import Recovery, SpawnConfig, SpawnResult, infer_manifest, run_spawn
from watcher.spawn._adapter import Denial
from watcher.testing.fake_cli import launcher


async def spawn(project: Project, tmp_path: Path, steps: list[dict[str, object]], **options: object) -> SpawnResult:
    script = write_script(tmp_path / "script.jsonl", [init(), *steps, result()])
    defaults: dict[str, object] = {
        "repo": project.repo, "cli_path": str(launcher(script, tmp_path)), "env": project.env(),
        "journal": project.journal, "forge_api": project.forge.api_url, "watchers": (),
        "idle_timeout_s": 20, "total_timeout_s": 60,
    }  # fmt: skip
    return await run_spawn(SpawnConfig("add a.txt", **{**defaults, **options}))  # type: ignore[arg-type]


WRITE = {"fake": "write", "path": "a.txt", "content": "a  \n"}


async def test_a_refusing_pre_commit_hook_keeps_the_work_staged_pushes_nothing_and_says_how_to_finish(
    project: Project, tmp_path: Path
) -> None:
    executable(
        project.repo / ".git" / "hooks" / "pre-commit",
        "#!/bin/sh\necho 'a.txt:1: trailing whitespace' >&2\nexit 1\n",
    )
    spawned = await spawn(project, tmp_path, [WRITE])

    assert spawned.status == "integration_failed"
    assert "hooks refused it" in spawned.detail and "a.txt:1: trailing whitespace" in spawned.detail
    assert f"git -C {spawned.worktree} commit" in spawned.detail and "not pushed" in spawned.detail
    assert git(Path(spawned.worktree), "diff", "--cached", "--name-only") == "a.txt"  # kept, staged
    assert project.forge.pulls == [] and "spawn/" not in git(project.repo, "ls-remote", "origin")


async def test_a_formatter_hook_that_rewrote_the_files_gets_a_second_commit(project: Project, tmp_path: Path) -> None:
    executable(
        project.repo / ".git" / "hooks" / "pre-commit",
        "#!/bin/sh\nif grep -q ' $' a.txt; then sed -i 's/ *$//' a.txt; echo 'fixed trailing whitespace'; exit 1; fi\n",
    )
    spawned = await spawn(project, tmp_path, [WRITE], pr=False)

    assert spawned.status == "completed", spawned.detail
    assert git(Path(spawned.worktree), "show", f"{spawned.branch}:a.txt") == "a"
    assert git(Path(spawned.worktree), "status", "--porcelain") == ""


async def test_a_commit_that_cannot_be_signed_is_not_made_unsigned(project: Project, tmp_path: Path) -> None:
    git(project.repo, "config", "commit.gpgsign", "true")
    git(project.repo, "config", "gpg.program", "false")  # as a missing key: the signer fails
    spawned = await spawn(project, tmp_path, [WRITE])

    assert spawned.status == "integration_failed"
    assert "could not sign" in spawned.detail and "commit.gpgsign" in spawned.detail
    assert git(Path(spawned.worktree), "log", "--format=%s", f"main..{spawned.branch}") == ""  # no unsigned commit
    assert git(Path(spawned.worktree), "diff", "--cached", "--name-only") == "a.txt"
    assert project.forge.pulls == []


async def test_the_agents_unsigned_commits_are_said_when_the_user_signs_every_commit(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    signer = executable(
        tmp_path / "fake-gpg",
        "#!/bin/sh\ncat >/dev/null\nprintf '\\n[GNUPG:] SIG_CREATED D 1 8 00 0 X\\n' >&2\n"
        "printf -- '-----BEGIN PGP SIGNATURE-----\\n\\nx\\n-----END PGP SIGNATURE-----\\n'\n",
    )
    config = tmp_path / "gitconfig"  # the user's global config: the agent, with a private HOME, does not see it
    config.write_text(f"[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = {signer}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    steps: list[dict[str, object]] = [
        {"fake": "write", "path": "b.txt", "content": "b\n"},
        {"fake": "run", "argv": ["git", "add", "b.txt"]},
        {"fake": "run", "argv": ["git", "commit", "-qm", "add b"]},
        WRITE,
    ]
    spawned = await spawn(project, tmp_path, steps, pr=False)

    assert spawned.status == "completed", spawned.detail
    assert len(spawned.commits) == 2
    (note,) = spawned.notes
    agent_commit = git(Path(spawned.worktree), "log", "-1", "--format=%h", "--", "b.txt")
    assert note.startswith(f"1 commit(s) on {spawned.branch} are not signed ({agent_commit})")
    assert "rebase --exec" in note and f"**Note:** {note}" in spawned.markdown()


async def test_a_very_large_change_is_integrated_quickly_and_proposed_with_a_readable_description(
    project: Project, tmp_path: Path
) -> None:
    many = "import pathlib\nfor i in range(3000): pathlib.Path(f'gen/f{i:04}.txt').write_text(f'{i}\\n' * 50)\n"
    steps: list[dict[str, object]] = [
        {"fake": "run", "argv": ["sh", "-c", 'mkdir gen && python3 -c "$0"', many]},
        {"fake": "run", "argv": ["git", "add", "-A"]},
        {"fake": "run", "argv": ["git", "commit", "-qm", "generate 3000 files"]},
        {"fake": "write", "path": "huge.txt", "content": "y" * (20 << 20)},  # and 20 MiB left uncommitted
    ]
    spawned = await spawn(project, tmp_path, steps, total_timeout_s=120)

    assert spawned.status == "completed", spawned.detail
    assert len(spawned.files) == 3001 and spawned.files[0].summary == "generate 3000 files"
    (pull,) = project.forge.pulls
    assert len(pull["body"]) < 60_000 and "... and 2901 more file(s) (+" in pull["body"]
    assert "... and 2901 more file(s)" in spawned.markdown()


async def test_a_remote_that_refuses_the_push_is_said_with_its_reason_and_how_to_finish(
    project: Project, tmp_path: Path
) -> None:
    executable(
        project.forge.root / "acme" / "shop.git" / "hooks" / "pre-receive",
        "#!/bin/sh\necho 'GH006: Protected branch policy: spawn/* branches need a signed commit' >&2\nexit 1\n",
    )
    spawned = await spawn(project, tmp_path, [WRITE])

    assert spawned.status == "integration_failed"
    assert "GH006: Protected branch policy" in spawned.detail and "Traceback" not in spawned.detail
    assert f"The work is committed on {spawned.branch} (nothing is lost)" in spawned.detail
    assert f"git -C {spawned.worktree} push origin {spawned.branch}" in spawned.detail
    assert project.forge.pulls == []


async def test_a_branch_of_the_same_name_on_the_remote_is_not_overwritten(project: Project, tmp_path: Path) -> None:
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(project.forge.root / "acme" / "shop.git"), other.name)
    git(other, "-c", "user.name=O", "-c", "user.email=o@example.com", "commit", "-q", "--allow-empty", "-m", "theirs")
    git(other, "push", "-q", "origin", "HEAD:refs/heads/spawn/cafe0001")
    theirs = git(other, "rev-parse", "HEAD")

    spawned = await spawn(project, tmp_path, [WRITE], spawn_id="cafe0001")

    assert spawned.status == "integration_failed"
    assert "already has a branch spawn/cafe0001 with other commits, which watcher does not overwrite" in spawned.detail
    assert git(project.repo, "ls-remote", "origin", "refs/heads/spawn/cafe0001").split()[0] == theirs


async def test_a_moved_base_is_checked_while_another_spawn_holds_the_remote_tracking_ref(
    project: Project, tmp_path: Path
) -> None:
    other = tmp_path / "upstream"
    git(tmp_path, "clone", "-q", str(project.forge.root / "acme" / "shop.git"), other.name)
    (other / "README.md").write_text("# shop, rewritten upstream\n")
    git(other, "-c", "user.name=O", "-c", "user.email=o@example.com", "commit", "-qam", "upstream")
    git(other, "push", "-q", "origin", "HEAD:main")
    # a fetch in another spawn of this repository holds origin/main's lock at this moment
    lock = project.repo / ".git" / "refs" / "remotes" / "origin" / "main.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    steps: list[dict[str, object]] = [{"fake": "write", "path": "README.md", "content": "# shop, rewritten here\n"}]

    spawned = await spawn(project, tmp_path, steps, watchers=())

    # the conflict was found (not skipped as 'the base is not on the remote') and went to a repair run
    assert spawned.status == "completed", spawned.detail
    assert spawned.repaired == ["README.md"] and spawned.runs == 2
    bare = project.forge.root / "acme" / "shop.git"
    git(bare, "merge-base", "--is-ancestor", "main", spawned.branch)  # the proposed branch has merged the moved base


async def test_an_agent_that_deletes_the_worktrees_git_link_never_reaches_the_main_checkout(
    project: Project, tmp_path: Path
) -> None:
    (project.repo / "README.md").write_text("# the user's own unfinished work\n")  # not committed, not the agent's
    main_before = git(project.repo, "rev-parse", "main")
    steps: list[dict[str, object]] = [
        {"fake": "write", "path": "a.txt", "content": "a\n"},
        {"fake": "run", "argv": ["rm", ".git"]},
        {"fake": "run", "argv": ["sh", "-c", "git add -A; git commit -qm sneaky > git-said.txt 2>&1"]},
    ]
    spawned = await spawn(project, tmp_path, steps)

    # the agent's git found no repository (not the main checkout above the worktree) ...
    assert "not a git repository" in (Path(spawned.worktree) / "git-said.txt").read_text()
    # ... and watcher relinked the worktree: the user's checkout, branch and changes are untouched
    assert (
        git(project.repo, "branch", "--show-current") == "main"
        and git(project.repo, "rev-parse", "main") == main_before
    )
    assert git(project.repo, "status", "--porcelain", "--untracked-files=no") == "M README.md"
    assert spawned.status == "completed", spawned.detail
    assert sorted(f.path for f in spawned.files) == ["a.txt", "git-said.txt"]
    assert "the user's own" not in project.forge_file(spawned.branch, "README.md")


async def test_a_base_branch_the_agent_moved_onto_its_own_commit_is_said(project: Project, tmp_path: Path) -> None:
    start = git(project.repo, "rev-parse", "main")
    steps: list[dict[str, object]] = [
        {"fake": "write", "path": "a.txt", "content": "a\n"},
        {
            "fake": "run",
            "argv": ["sh", "-c", "git add -A && git commit -qm 'add a' && git update-ref refs/heads/main HEAD"],
        },
    ]
    spawned = await spawn(project, tmp_path, steps, pr=False)

    (note,) = spawned.notes
    assert f"the base branch main was moved during the spawn from {start[:10]}" in note
    assert f"git branch -f main {start[:10]}" in note


def test_recovery_never_widens_to_moving_or_deleting_branches(tmp_path: Path) -> None:
    manifest = infer_manifest("add a.txt and commit it")
    for command in ("git branch -f main HEAD", "git update-ref refs/heads/main HEAD", "git branch -D main"):
        decision = Recovery().decide([Denial("Bash", {"command": command})], manifest, tmp_path)
        assert decision.outcome == "refused" and "moves, renames or deletes branches" in decision.detail, command


async def test_a_file_name_that_is_not_utf8_is_committed_proposed_and_reported(
    project: Project, tmp_path: Path
) -> None:
    make = "open(bytes([0x63, 0x61, 0x66, 0xe9]) + b'.txt', 'w').write('latin-1 name')"  # 'café' in Latin-1
    steps: list[dict[str, object]] = [{"fake": "run", "argv": [sys.executable, "-c", make]}]
    spawned = await spawn(project, tmp_path, steps)

    assert spawned.status == "completed", spawned.detail
    assert [f.path for f in spawned.files] == ["caf\ufffd.txt"]
    assert "`caf\ufffd.txt` (+1, -0)" in spawned.markdown() and project.forge.pulls
    json.dumps(spawned.to_dict(), ensure_ascii=False).encode("utf-8")  # printable as it is
