"""A spawn's worktree has its submodules checked out, from the main checkout's own copies where it has them.

Real repositories only: the submodules' remotes are local bare repositories, removed before the
spawn when the test shows that the main checkout's copies are enough (nothing is fetched).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from spawn_helpers import Project, git, result, write_script

from watcher.spawn import SpawnConfig, provision, run_spawn
from watcher.testing.fake_cli import launcher

ALLOW = ("-c", "protocol.file.allow=always")  # git refuses local submodule clones unless told


def repo_with(path: Path, files: dict[str, str]) -> Path:
    git(path.parent, "init", "-q", "-b", "main", path.name)
    for name, text in files.items():
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", "init")
    return path


def bare(source: Path) -> Path:
    target = source.with_suffix(".git")
    git(source.parent, "clone", "-q", "--bare", source.name, target.name)
    return target


def add_submodule(repo: Path, url: str, path: str) -> None:
    git(repo, *ALLOW, "submodule", "add", "-q", url, path)
    git(repo, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", f"add {path}")


def test_submodules_nested_ones_too_come_from_the_main_checkouts_copies_with_their_remotes_gone(
    tmp_path: Path,
) -> None:
    deep = bare(repo_with(tmp_path / "deep", {"deep.txt": "deep\n"}))
    lib = repo_with(tmp_path / "lib", {"lib.txt": "lib\n"})
    add_submodule(lib, str(deep), "deep")
    lib_remote = bare(lib)
    app = repo_with(tmp_path / "app", {"a.txt": "a\n"})
    add_submodule(app, str(lib_remote), "vendor/lib")
    git(app, *ALLOW, "submodule", "update", "--init", "--recursive", "-q")
    config_before = git(app, "config", "--list", "--local")
    shutil.rmtree(deep)  # no remote left to reach: only the main checkout's copies can serve
    shutil.rmtree(lib_remote)

    sandbox = provision(app)

    assert sandbox.notes == ()
    assert (sandbox.worktree / "vendor" / "lib" / "lib.txt").read_text() == "lib\n"
    assert (sandbox.worktree / "vendor" / "lib" / "deep" / "deep.txt").read_text() == "deep\n"
    assert git(sandbox.worktree, "status", "--porcelain") == ""  # at the commits the branch names
    # the clone's own remote is the real one again (not the main checkout's .git), and the user's config is untouched
    assert git(sandbox.worktree / "vendor" / "lib", "remote", "get-url", "origin") == str(lib_remote)
    assert git(app, "config", "--list", "--local") == config_before


def test_a_submodule_the_main_checkout_never_checked_out_is_cloned_from_its_relative_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lib_remote = bare(repo_with(tmp_path / "lib", {"lib.txt": "lib\n"}))
    app = repo_with(tmp_path / "app", {"a.txt": "a\n"})
    add_submodule(app, "../lib.git", "vendor/lib")  # relative to the superproject's remote
    app_remote = bare(app)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(app_remote), clone.name)  # a fresh clone: its submodule folder is empty
    policy = tmp_path / "gitconfig"
    policy.write_text('[protocol "file"]\n\tallow = always\n')  # the user's own policy allows local URLs
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(policy))
    assert not any((clone / "vendor" / "lib").iterdir())

    sandbox = provision(clone)

    assert sandbox.notes == ()
    assert (sandbox.worktree / "vendor" / "lib" / "lib.txt").read_text() == "lib\n"
    assert git(sandbox.worktree / "vendor" / "lib", "remote", "get-url", "origin") == str(lib_remote)
    registered = [k for k in git(clone, "config", "--list", "--local").splitlines() if k.startswith("submodule.")]
    assert registered == []  # nothing registered in the main checkout


async def test_a_submodule_that_cannot_be_checked_out_is_said_in_the_report_and_the_spawn_goes_on(
    project: Project, tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere" / "lib.git"
    (project.repo / ".gitmodules").write_text(f'[submodule "lib"]\n\tpath = vendor/lib\n\turl = {missing}\n')
    git(project.repo, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},vendor/lib")
    git(project.repo, "add", ".gitmodules")
    git(project.repo, "commit", "-qm", "vendor lib")
    script = write_script(tmp_path / "script.jsonl", [{"fake": "write", "path": "a.txt", "content": "a\n"}, result()])

    spawned = await run_spawn(
        SpawnConfig(
            "add a.txt", repo=project.repo, cli_path=str(launcher(script, tmp_path)), env=project.env(),
            journal=project.journal, pr=False, watchers=(), idle_timeout_s=20, total_timeout_s=60,
        )
    )  # fmt: skip

    assert spawned.status == "completed", spawned.detail
    (note,) = spawned.notes
    assert "submodule vendor/lib" in note and str(missing) in note and "empty folder" in note
    assert "git submodule update --init vendor/lib" in note
    assert f"**Note:** {note}" in spawned.markdown()
    assert (Path(spawned.worktree) / "vendor" / "lib").is_dir()
    project.journal.flush()
    (created,) = [r for r in project.journal.read(kinds={"sandbox_created"})]
    assert created.payload["notes"] == [note]
