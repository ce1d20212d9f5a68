"""Fixtures for spawn tests: a real repository with a loopback forge as ``origin``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from spawn_helpers import Project, git

from watcher.runtime.journal import Journal
from watcher.testing import LoopbackForge


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    repo = tmp_path / "shop"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")
    (repo / "README.md").write_text("# shop\n")
    (repo / "src").mkdir()
    (repo / "src" / "db.js").write_text("module.exports = { query: async () => [] };\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    with LoopbackForge() as forge:
        git(repo, "remote", "add", "origin", forge.create_repo("acme", "shop", seed=repo))
        journal = Journal(tmp_path / "journal.sqlite3")
        try:
            yield Project(repo, forge, journal)
        finally:
            journal.close()
