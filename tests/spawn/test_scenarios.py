"""Every scripted scenario of the spawn set ends in its expected outcome (fake CLI, real git and forge)."""

from __future__ import annotations

from pathlib import Path

import pytest
from spawn_helpers import Project

from watcher.spawn import SpawnConfig, run_spawn
from watcher.testing.fake_cli import launcher
from watcher.testing.spawn_scenarios import SCENARIOS, Scenario

pytestmark = pytest.mark.slow


def test_the_set_is_large_enough() -> None:
    assert len(SCENARIOS) >= 20 and len({s.name for s in SCENARIOS}) == len(SCENARIOS)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
async def test_scenario(scenario: Scenario, project: Project, tmp_path: Path) -> None:
    if scenario.prepare is not None:
        scenario.prepare(project.repo)
    options = {"idle_timeout_s": 10.0, "total_timeout_s": 30.0, **scenario.options}
    result = await run_spawn(
        SpawnConfig(
            scenario.task, agent="claude", repo=project.repo, cli_path=str(launcher(scenario.script(tmp_path), tmp_path)),
            forge_api=project.forge.api_url, env=project.env(), journal=project.journal, **options,
        )
    )  # fmt: skip
    assert result.status == scenario.expected, (result.status, result.detail, result.recoveries)
    if result.status == "completed" and scenario.options.get("pr", True):
        assert result.pr is not None and project.forge.pulls[-1]["head"] == result.branch
