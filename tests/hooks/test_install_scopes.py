"""``hooks install --scope local|project|user`` for Claude Code and Codex, in a temporary HOME.

What is written travels (``watcher-hook ...``, no path of this machine), and ``uninstall`` gives
back exactly the bytes that were there before, or no file (and no folder) when there was none,
with one backup at most on the way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a CLI process per step

# (agent, scope) -> the settings file, relative to the project ("P") or HOME ("H")
FILES = {
    ("claude", "local"): ("P", ".claude/settings.local.json"),
    ("claude", "project"): ("P", ".claude/settings.json"),
    ("claude", "user"): ("H", ".claude/settings.json"),
    ("codex", "project"): ("P", ".codex/hooks.json"),
    ("codex", "user"): ("H", ".codex/hooks.json"),
}
# a file as a person writes it: their own hook, other settings, odd spacing, no final newline
THEIRS = b'{\n    "permissions": {"allow": ["Bash(git *)"]},\n    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}\n}'


def _run(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WATCHER_", "CODEX_"))}
    done = subprocess.run(
        [sys.executable, "-m", "watcher", "hooks", *args],
        cwd=root,
        env={**env, "HOME": str(home)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def _tree(*roots: Path) -> dict[str, bytes | None]:
    return {str(p): (p.read_bytes() if p.is_file() else None) for r in roots for p in sorted(r.rglob("*"))}


@pytest.mark.parametrize("existing", [False, True], ids=["no-file", "their-file"])
@pytest.mark.parametrize(("agent", "scope"), list(FILES), ids=[f"{a}-{s}" for a, s in FILES])
def test_install_writes_a_command_that_travels_and_uninstall_restores_the_bytes(
    tmp_path: Path, agent: str, scope: str, existing: bool
) -> None:
    root, home = tmp_path / "project", tmp_path / "home"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    home.mkdir()
    base, relative = FILES[(agent, scope)]
    settings = (root if base == "P" else home) / relative
    if existing:
        settings.parent.mkdir(parents=True)
        settings.write_bytes(THEIRS)
    before = _tree(root, home)

    out = _run(root, home, "install", "--agent", agent, "--scope", scope).stdout
    assert str(settings) in out
    data = json.loads(settings.read_text())
    commands = [h["command"] for groups in data["hooks"].values() for g in groups for h in g["hooks"]]
    ours = [c for c in commands if c != "say done"]
    assert ours and all(c.startswith(f"watcher-hook {c.split()[1]} --agent {agent} ") for c in ours)
    text = settings.read_text()
    assert sys.executable not in text and str(Path(__file__).resolve().parents[2]) not in text  # nothing of here
    if existing:
        assert "say done" in commands and data["permissions"] == {"allow": ["Bash(git *)"]}
    _run(root, home, "install", "--agent", agent, "--scope", scope, "--mode", "manual")  # again
    if scope == "local":  # this checkout's own: git sees nothing to commit, not even the record or backup
        shown = subprocess.run(
            ["git", "status", "--porcelain", "--ignored=no"], cwd=root, capture_output=True, text=True
        )
        assert shown.stdout == "" and not shown.stderr
    assert len(list(settings.parent.glob("*.watcher-backup*"))) == (1 if existing else 0)  # one backup at most

    _run(root, home, "uninstall", "--agent", agent, "--scope", scope)
    assert _tree(root, home) == before  # the same files and folders, byte for byte


def test_codex_has_no_local_file_so_local_is_refused_and_its_default_is_the_users_file(tmp_path: Path) -> None:
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WATCHER_", "CODEX_"))}
    refused = subprocess.run(
        [sys.executable, "-m", "watcher", "hooks", "install", "--agent", "codex", "--scope", "local"],
        cwd=root,
        env={**env, "HOME": str(home)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode == 2 and "Codex has no local-only hooks file" in refused.stderr
    assert "--scope project or --scope user" in refused.stderr and _tree(root, home) == {}
    _run(root, home, "install", "--agent", "codex")
    assert (home / ".codex" / "hooks.json").is_file() and _tree(root) == {}


def test_without_watcher_on_path_install_refuses_and_says_how(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WATCHER_")}
    done = subprocess.run(
        [sys.executable, "-m", "watcher", "hooks", "install"],
        cwd=tmp_path,
        env={**env, "HOME": str(tmp_path), "PATH": "/nonexistent"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and "`watcher-hook` is not on PATH" in done.stderr
    assert str(Path(sys.executable).parent) in done.stderr and list(tmp_path.iterdir()) == []
