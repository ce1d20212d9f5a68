"""``watcher hooks check --json``: the guard's verdict as one JSON object, for scripts and CI checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _check(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WATCHER_")}
    return subprocess.run(
        [sys.executable, "-m", "watcher", "hooks", "check", "--json", *argv],
        cwd=cwd,
        env={**env, "HOME": str(cwd)},
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_denial_and_an_allow_as_json(tmp_path: Path) -> None:
    denied = _check(tmp_path, "rm -rf ~/")
    verdict = json.loads(denied.stdout)
    assert denied.returncode == 1 and verdict["decision"] == "deny" and verdict["tool"] == "Bash"
    assert verdict["category"] == "destructive-delete" and verdict["rule"] == "standard"
    assert verdict["reason"].startswith("deletes your home folder")
    allowed = _check(tmp_path, "rm -rf node_modules")
    assert allowed.returncode == 0 and json.loads(allowed.stdout)["decision"] == "allow"


def test_a_broken_project_file_is_a_problem_in_the_object_not_a_line_after_it(tmp_path: Path) -> None:
    (tmp_path / ".watcher").mkdir()
    (tmp_path / ".watcher" / "policy.toml").write_text("[[allow]\n")
    read = _check(tmp_path, "--tool", "Read", "--path", "~/.ssh/id_rsa")
    (line,) = read.stdout.splitlines()
    verdict = json.loads(line)
    assert read.returncode == 1 and verdict["category"] == "secret-read" and verdict["problems"]
