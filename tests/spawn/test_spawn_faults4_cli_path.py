"""Which agent CLI a spawn starts: the one the agent's own PATH names, by an absolute path.

The CLI runs with the environment the spawn passes down (its PATH, or the manifest's), in the
worktree: looking it up on watcher's own PATH, or keeping a relative path, started another
program than the one the user chose, or none.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from spawn_helpers import Project, write_a, write_script

from watcher.core.errors import ConfigurationError
from watcher.spawn import SpawnConfig, _adapter, run_spawn
from watcher.spawn.manifest import SandboxManifest
from watcher.testing.fake_cli import launcher

pytestmark = pytest.mark.slow

SYSTEM = "/usr/local/bin:/usr/bin:/bin"


def decoy(folder: Path, name: str = "claude") -> Path:
    """A ``claude`` that is not the user's choice: it leaves a mark when started, and fails."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\necho started > '{folder / 'decoy-ran'}'\nexit 1\n")
    path.chmod(0o755)
    return path


def chosen(tmp_path: Path, folder: Path, name: str = "claude") -> Path:
    """The CLI the user chose: the fake CLI writing a.txt."""
    folder.mkdir(parents=True, exist_ok=True)
    return launcher(write_script(tmp_path / "script.jsonl", write_a()), folder, name=name)


def config(project: Project, **options: object) -> SpawnConfig:
    defaults: dict[str, object] = {
        "agent": "claude", "repo": project.repo, "env": project.env(), "journal": project.journal,
        "idle_timeout_s": 20, "total_timeout_s": 60, "pr": False, "watchers": (),
    }  # fmt: skip
    return SpawnConfig("add a.txt", **{**defaults, **options})  # type: ignore[arg-type]


async def test_the_cli_on_the_agents_path_runs_not_another_on_watchers_own(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "watchers-bin"
    decoy(other)
    monkeypatch.setenv("PATH", f"{other}:{SYSTEM}")  # watcher's own PATH finds another claude first
    mine = tmp_path / "agents-bin"
    chosen(tmp_path, mine)
    spawned = await run_spawn(config(project, env=project.env(PATH=f"{mine}:{SYSTEM}")))
    assert spawned.status == "completed", spawned.detail
    assert not (other / "decoy-ran").exists()
    assert spawned.files[0].path == "a.txt"


async def test_a_cli_only_on_watchers_own_path_is_refused_naming_the_agents_path(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "watchers-bin"
    decoy(other)
    monkeypatch.setenv("PATH", f"{other}:{SYSTEM}")
    # and none in watcher's own checkout, where `make clis` puts the real CLIs (tried after the agent's PATH)
    monkeypatch.setattr(_adapter, "_PROJECT", tmp_path / "watcher-checkout")
    with pytest.raises(ConfigurationError) as raised:
        await run_spawn(config(project, env=project.env(PATH=SYSTEM)))
    said = str(raised.value)
    assert "on the PATH the agent runs with" in said and f"PATH={SYSTEM}" in said and "--cli-path" in said
    assert not (other / "decoy-ran").exists()
    assert not (project.repo / ".watcher" / "spawns").exists()  # refused before anything was made


async def test_a_relative_cli_path_names_the_file_where_watcher_was_started_not_in_the_worktree(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "tools"
    chosen(tmp_path, tools, name="agent")
    monkeypatch.chdir(tmp_path)
    spawned = await run_spawn(config(project, cli_path="tools/agent"))
    assert spawned.status == "completed", spawned.detail


async def test_a_cli_named_by_cli_path_is_looked_up_on_the_agents_path(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "watchers-bin"
    decoy(other, "my-claude")
    monkeypatch.setenv("PATH", f"{other}:{SYSTEM}")
    mine = tmp_path / "agents-bin"
    chosen(tmp_path, mine, name="my-claude")
    spawned = await run_spawn(config(project, cli_path="my-claude", env=project.env(PATH=f"{mine}:{SYSTEM}")))
    assert spawned.status == "completed", spawned.detail
    assert not (other / "decoy-ran").exists()


async def test_a_manifest_path_is_where_the_cli_is_found(project: Project, tmp_path: Path) -> None:
    mine = tmp_path / "tool-bin"
    chosen(tmp_path, mine)
    manifest = SandboxManifest(environment={"PATH": f"{mine}:{SYSTEM}"})
    spawned = await run_spawn(config(project, env=project.env(PATH=SYSTEM), manifest=manifest))
    assert spawned.status == "completed", spawned.detail


async def test_a_script_whose_interpreter_is_not_on_the_agents_path_is_refused_before_anything_is_made(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "node-bin"
    runtime.mkdir()
    node = runtime / "fakenode"
    node.write_text("#!/bin/sh\nexit 0\n")
    node.chmod(0o755)
    monkeypatch.setenv("PATH", f"{runtime}:{os.environ['PATH']}")  # watcher has it; the agent will not
    cli = tmp_path / "gemini.js"
    cli.write_text("#!/usr/bin/env fakenode\nconsole.log('hi')\n")
    cli.chmod(0o755)
    with pytest.raises(ConfigurationError) as raised:
        await run_spawn(config(project, cli_path=str(cli), env=project.env(PATH=SYSTEM)))
    said = str(raised.value)
    assert "run by 'fakenode'" in said and "not on the PATH the agent runs with" in said, said
    assert not (project.repo / ".watcher" / "spawns").exists()
