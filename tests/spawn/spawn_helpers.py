"""Helpers for spawn tests: the real CLIs' paths, git, and a project with a loopback forge as ``origin``."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from watcher.runtime.journal import Journal
from watcher.testing import LoopbackForge

PROJECT = Path(__file__).resolve().parents[2]
BIN = PROJECT / "node_modules" / ".bin"


def cli(name: str) -> Path:
    """The real CLI's path, or skip the test saying why."""
    path = BIN / name
    if not path.exists():
        pytest.skip(f"{path} is absent: run `make clis` (needs npm) to drive the real {name} CLI")
    return path


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


@dataclass
class Project:
    repo: Path
    forge: LoopbackForge
    journal: Journal

    def env(self, **extra: str) -> dict[str, str]:
        """The parent environment a spawn sees: PATH, a forge token, and the stub's endpoint/key."""
        return {"PATH": os.environ["PATH"], "GITHUB_TOKEN": "loopback-token", **extra}

    def forge_file(self, branch: str, path: str) -> str:
        bare = self.forge.root / "acme" / "shop.git"
        return git(bare, "show", f"{branch}:{path}")
