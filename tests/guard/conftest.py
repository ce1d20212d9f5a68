"""What the guard's tests share: a temporary project (a git repository on a feature branch) and a
home folder beside it, for scripts written to disk and judged there."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Path]:
    project, home = tmp_path / "project", tmp_path / "home"
    home.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "my-feature", str(project)], check=True)
    return project, home
