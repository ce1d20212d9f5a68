"""Provisioning with names a careless user gives: unicode branches, ids that are no branch or folder name."""

from __future__ import annotations

from pathlib import Path

import pytest
from spawn_helpers import git

from watcher.core.errors import ConfigurationError
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
