"""Provisioning with names a careless user gives: unicode branches, ids that are no branch or folder name."""

from __future__ import annotations

from pathlib import Path

import pytest
from spawn_helpers import git

from watcher.core.errors import ConfigurationError, SpawnError
from watcher.spawn import provision


def repo(tmp_path: Path, branch: str) -> Path:
    path = tmp_path / "app"
    git(tmp_path, "init", "-q", "-b", branch, path.name)
    (path / "a.txt").write_text("a\n")
    git(path, "add", "-A")
    git(path, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", "init")
    return path


def test_a_unicode_base_and_spawn_id_make_a_worktree_and_a_branch_by_those_names(tmp_path: Path) -> None:
    sandbox = provision(repo(tmp_path, "fonctionnalité/café-☕"), spawn_id="thé-☕")

    assert sandbox.base == "fonctionnalité/café-☕" and sandbox.branch == "spawn/thé-☕"
    assert git(sandbox.worktree, "symbolic-ref", "--short", "HEAD") == "spawn/thé-☕"
    assert (sandbox.worktree / "a.txt").read_text() == "a\n"


@pytest.mark.parametrize("spawn_id", ["../../outside", "a/b", "a b", "x..y", "end.lock"])
def test_a_spawn_id_that_is_no_folder_or_branch_name_is_refused_before_anything_is_made(
    tmp_path: Path, spawn_id: str
) -> None:
    app = repo(tmp_path, "main")

    with pytest.raises(ConfigurationError, match="cannot name both a folder and a git branch"):
        provision(app, spawn_id=spawn_id)

    assert not (app / ".watcher").exists() and not (tmp_path / "outside").exists()
    assert git(app, "branch", "--list", "spawn/*") == ""


LFS_POINTER = "version https://git-lfs.github.com/spec/v1\noid sha256:{}\nsize 12345\n".format("4d" * 32)


def lfs_repo(tmp_path: Path) -> Path:
    app = repo(tmp_path, "main")
    (app / ".gitattributes").write_text("*.bin filter=lfs diff=lfs merge=lfs -text\n")
    (app / "model.bin").write_text(LFS_POINTER)
    git(app, "add", "-A")
    git(app, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", "lfs")
    return app


def test_lfs_pointers_without_git_lfs_set_up_are_a_note(tmp_path: Path) -> None:
    sandbox = provision(lfs_repo(tmp_path))

    assert (sandbox.worktree / "model.bin").read_text() == LFS_POINTER
    (note,) = sandbox.notes
    assert "Git LFS" in note and "pointer files" in note and "git lfs install" in note


def test_an_lfs_filter_that_cannot_run_is_said_before_anything_is_left(tmp_path: Path) -> None:
    app = lfs_repo(tmp_path)
    git(app, "config", "filter.lfs.process", "git-lfs-not-installed filter-process")
    git(app, "config", "filter.lfs.required", "true")

    with pytest.raises(SpawnError) as raised:
        provision(app)

    assert "failed on a git filter the repository configures" in str(raised.value)
    assert "install git-lfs" in str(raised.value)
    assert git(app, "branch", "--list", "spawn/*") == "" and list((app / ".watcher" / "spawns").iterdir()) == []
