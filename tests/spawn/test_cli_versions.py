"""The agent CLI a spawn drives: missing, or of another version than the one its adapter is checked against."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from spawn_helpers import PROJECT, Project

from watcher.core.errors import ConfigurationError
from watcher.spawn import SpawnConfig, adapter_for, run_spawn
from watcher.spawn._adapter import find_executable


@pytest.mark.parametrize("agent", ["claude", "gemini", "codex"])
def test_each_adapter_is_checked_against_the_version_package_json_pins(agent: str) -> None:
    adapter = adapter_for(agent)
    pinned = json.loads((PROJECT / "package.json").read_text())["dependencies"]
    assert pinned[adapter.package] == adapter.checked_version


def old_claude(root: Path, version: str) -> Path:
    """An npm install of Claude Code at ``version`` that, like an old release, refuses a flag the adapter passes."""
    package = root / "node_modules" / "@anthropic-ai" / "claude-code"
    (package / "bin").mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "@anthropic-ai/claude-code", "version": version}))
    binary = package / "bin" / "claude"
    binary.write_text("#!/bin/sh\necho \"error: unknown option '--replay-user-messages'\" >&2\nexit 1\n")
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    link = root / "node_modules" / ".bin" / "claude"
    link.parent.mkdir()
    link.symlink_to(binary)
    return link


async def test_a_cli_of_another_version_that_will_not_run_is_said_with_the_checked_version_to_install(
    project: Project, tmp_path: Path
) -> None:
    claude = old_claude(tmp_path, "1.0.3")
    spawned = await run_spawn(
        SpawnConfig(
            "add a.txt", repo=project.repo, cli_path=str(claude), env=project.env(), journal=project.journal,
            pr=False, watchers=(), idle_timeout_s=20, total_timeout_s=60,
        )
    )  # fmt: skip

    assert spawned.status == "crashed"
    assert "unknown option '--replay-user-messages'" in spawned.detail
    assert "the claude CLI is version 1.0.3, and watcher spawn is checked against 2.1.330" in spawned.detail
    assert "npm install -g @anthropic-ai/claude-code@2.1.330" in spawned.detail
    assert any("version 1.0.3" in note for note in spawned.notes)


def test_a_cli_nowhere_to_be_found_names_the_package_and_version_to_install(project: Project) -> None:
    with pytest.raises(ConfigurationError) as raised:
        find_executable("no-such-agent-cli", None, project.repo, "@acme/agent-cli", "1.2.3", path="/usr/bin:/bin")
    assert "npm install -g @acme/agent-cli@1.2.3" in str(raised.value) and "--cli-path" in str(raised.value)
