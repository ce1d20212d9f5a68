"""Helpers for spawn tests: the real CLIs' paths, git, and a project with a loopback forge as ``origin``."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from watcher.runtime.journal import Journal
from watcher.testing import LoopbackForge

PROJECT = Path(__file__).resolve().parents[2]
BIN = PROJECT / "node_modules" / ".bin"


def cli(name: str) -> Path:
    """The real CLI's path (``node_modules/.bin`` of the checkout, else on PATH), or skip the test saying why."""
    path = BIN / name
    if path.exists():
        return path
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{path} is absent and {name} is not on PATH: run `make clis` (needs npm) to drive the real CLI")
    return Path(found)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


@dataclass
class Project:
    repo: Path
    forge: LoopbackForge
    journal: Journal

    def env(self, **extra: str) -> dict[str, str]:
        """The parent environment a spawn sees: PATH, a forge token, test keys, and the stub's endpoint/key."""
        keys = {"ANTHROPIC_API_KEY": "sk-ant-test-0000", "GEMINI_API_KEY": "test-key", "OPENAI_API_KEY": "sk-test-0000"}
        return {"PATH": os.environ["PATH"], "GITHUB_TOKEN": "loopback-token", **keys, **extra}

    def forge_file(self, branch: str, path: str) -> str:
        bare = self.forge.root / "acme" / "shop.git"
        return git(bare, "show", f"{branch}:{path}")


# --- recorded Claude Code stream lines for the fake CLI ------------------------------------------

SESSION = "5b0c1c7e-0000-4000-8000-000000000001"


def init() -> dict[str, object]:
    return {"type": "system", "subtype": "init", "cwd": "@CWD@", "session_id": SESSION, "tools": ["Write", "Bash"]}


def tool_use(name: str, tool_input: dict[str, object], tool_id: str) -> dict[str, object]:
    content = [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}]
    return {"type": "assistant", "message": {"role": "assistant", "content": content}, "session_id": SESSION}


def tool_result(tool_id: str, output: str, *, is_error: bool = False) -> dict[str, object]:
    content = [{"type": "tool_result", "tool_use_id": tool_id, "content": output, "is_error": is_error}]
    return {"type": "user", "message": {"role": "user", "content": content}, "session_id": SESSION}


def result(text: str = "done", *, denials: list[dict[str, object]] | None = None) -> dict[str, object]:
    return {
        "type": "result", "subtype": "success", "is_error": False, "result": text, "session_id": SESSION,
        "total_cost_usd": 0.01, "permission_denials": denials or [],
    }  # fmt: skip


def write_script(path: Path, lines: list[dict[str, object]]) -> Path:
    import json

    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def write_a() -> list[dict[str, object]]:
    """A scripted CLI run that writes ``a.txt`` with the Write tool and ends."""
    return [
        init(),
        tool_use("Write", {"file_path": "@CWD@/a.txt", "content": "a\n"}, "t1"),
        {"fake": "write", "path": "a.txt", "content": "a\n"},
        tool_result("t1", "File created"),
        result("Added a.txt."),
    ]


def new_repo(repo: Path, files: dict[str, str] | None = None) -> Path:
    """A git repository at ``repo`` on branch main, with an identity and one commit: a README and ``files``."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")
    for name, text in {"README.md": "# shop\n", **(files or {})}.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    return repo


def executable(path: Path, text: str) -> Path:
    """A script at ``path`` (its folder made), executable by its owner."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path
