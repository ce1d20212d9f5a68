"""The sandbox manifest: rules from the task, validation, widening, and the Claude/Gemini permission flags."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from watcher.core.errors import ConfigurationError
from watcher.spawn.claude import claude_permissions
from watcher.spawn.gemini import gemini_tools
from watcher.spawn.manifest import TIMEOUTS, SandboxManifest, infer_manifest

CASES = json.loads((Path(__file__).parent / "data" / "manifest_cases.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_rules(case: dict[str, Any]) -> None:
    manifest = infer_manifest(case["task"])
    assert list(manifest.writable_paths) == case["writable"]
    assert set(case["commands_include"]) <= set(manifest.allowed_commands)
    assert not set(case["commands_exclude"]) & set(manifest.allowed_commands)
    assert list(manifest.secrets) == case["secrets"]
    assert manifest.complexity == case["complexity"]
    assert manifest.timeouts == TIMEOUTS[case["complexity"]]
    assert "Task" in manifest.denied_tools and {"Read", "Write", "Edit", "Glob", "Grep", "Bash"} <= set(
        manifest.allowed_tools
    )


def test_round_trip_and_overrides() -> None:
    manifest = infer_manifest("add src/a.py and commit").with_timeouts(5, None)
    again = SandboxManifest.from_dict(json.loads(manifest.to_json()))
    assert again.timeouts == (5, TIMEOUTS["medium"][1]) and again.allowed_commands == manifest.allowed_commands


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "must be a JSON object"),
        ({"allowed_tools": "Bash"}, "'allowed_tools' must be a list of strings"),
        ({"complexity": "huge"}, "must be low, medium or high"),
        ({"idle_timeout_s": -1}, "'idle_timeout_s' must be a finite number of seconds above 0"),
        ({"total_timeout_s": float("nan")}, "'total_timeout_s' must be a finite number of seconds above 0"),
        ({"total_timeout_s": float("inf")}, "'total_timeout_s' must be a finite number of seconds above 0"),
        ({"environment": {"A": 1}}, "map names to string values"),
        ({"network": True}, "has no fields ['network']"),
    ],
)
def test_invalid_manifests_say_what_is_wrong(data: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        SandboxManifest.from_dict(data)


def test_widening_and_the_cli_permission_flags() -> None:
    manifest = SandboxManifest(allowed_commands=("git status",)).widen(tools=("Task",), commands=("git commit *",))
    allowed, denied = claude_permissions(manifest)
    assert "Bash(git commit *)" in allowed and "Bash(git status)" in allowed and "Bash" not in allowed
    assert "Task" in allowed and denied == []
    assert "run_shell_command(git commit)" in gemini_tools(manifest) and "write_file" in gemini_tools(manifest)


def test_plan_prints_the_manifest(capsys: pytest.CaptureFixture[str]) -> None:
    from watcher.cli import main

    assert main(["spawn", "--plan", "Add login() to src/auth/login.js and commit it"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["writable_paths"] == ["src/auth/login.js"] and "git commit *" in printed["allowed_commands"]
    assert main(["spawn"]) == 2
    assert "needs a TASK" in capsys.readouterr().err
