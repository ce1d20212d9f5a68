"""The end of a spawned run is a breakpoint: a loop in its last lines is judged (fake CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest
from spawn_helpers import SESSION, Project, init, tool_result, tool_use, write_script

from watcher.spawn import SpawnConfig, run_spawn
from watcher.testing.fake_cli import launcher

pytestmark = pytest.mark.slow


def said(text: str) -> dict[str, object]:
    content = [{"type": "text", "text": text}]
    return {"type": "assistant", "message": {"role": "assistant", "content": content}, "session_id": SESSION}


async def test_a_monologue_in_the_last_lines_is_paused_at_the_end(project: Project, tmp_path: Path) -> None:
    # after the tool result, the stuck role's every-third-observation check falls on the second
    # repeat; the third repeat is the last line (no result line, so no turn-end breakpoint either)
    lines = [init(), tool_use("Bash", {"command": "ls"}, "t1"), tool_result("t1", "README.md")]
    lines += [said("Checking."), *[said("I will add a.txt now.")] * 3]
    cli = str(launcher(write_script(tmp_path / "script.jsonl", lines), tmp_path))
    config = SpawnConfig(
        "add a.txt", agent="claude", repo=project.repo, cli_path=cli, forge_api=project.forge.api_url,
        env=project.env(), journal=project.journal, idle_timeout_s=20, total_timeout_s=60, watchers=("stuck",),
    )  # fmt: skip
    await run_spawn(config)
    project.journal.flush()
    evaluations = [row.payload for row in project.journal.read(limit=10_000) if row.kind == "evaluation"]
    assert not any(e["decision"] == "interject" for e in evaluations[:-1])
    last = evaluations[-1]
    assert last["breakpoint"] == "session_end"
    assert last["decision"] == "interject" and last["interjection"]["action"] == "pause"
