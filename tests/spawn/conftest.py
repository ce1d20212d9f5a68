"""Fixtures for spawn tests: a real repository with a loopback forge as ``origin``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from spawn_helpers import Project, git, new_repo

from watcher.runtime.journal import Journal
from watcher.testing import LoopbackForge


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    repo = new_repo(tmp_path / "shop", {"src/db.js": "module.exports = { query: async () => [] };\n"})
    with LoopbackForge() as forge:
        git(repo, "remote", "add", "origin", forge.create_repo("acme", "shop", seed=repo))
        journal = Journal(tmp_path / "journal.sqlite3")
        try:
            yield Project(repo, forge, journal)
        finally:
            journal.close()
