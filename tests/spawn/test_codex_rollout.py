"""Codex's rollout file fills in the failed commands its --json stream left out."""

from __future__ import annotations

import json
from pathlib import Path

from watcher.spawn._codex_rollout import RolloutReader
from watcher.spawn.codex import Codex


def line(payload: dict[str, object]) -> str:
    return json.dumps({"timestamp": "2026-11-23T13:08:03.460Z", "type": "response_item", "payload": payload}) + "\n"


def call(call_id: str, cmd: str) -> str:
    return line(
        {"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": cmd}), "call_id": call_id}
    )


def output(call_id: str, code: int, text: str) -> str:
    body = f"Chunk ID: 1\nWall time: 0.01 seconds\nProcess exited with code {code}\nOriginal token count: 3\nOutput:\n{text}"
    return line({"type": "function_call_output", "call_id": call_id, "output": body})


def test_commands_missing_from_the_stream_come_from_the_rollout(tmp_path: Path) -> None:
    rollout = tmp_path / "sessions" / "2026" / "11" / "23" / "rollout-2026-11-23T13-08-03-abc.jsonl"
    rollout.parent.mkdir(parents=True)
    rollout.write_text(call("c1", "git status") + output("c1", 0, "clean\n") + call("c2", "git commit -m x"))
    codex = Codex()
    codex.start_run()
    reader = codex._rollout = RolloutReader(tmp_path)
    shown = {
        "type": "item.completed",
        "item": {
            "id": "item_0",
            "type": "command_execution",
            "command": "/bin/bash -lc 'git status'",
            "aggregated_output": "clean\n",
            "exit_code": 0,
            "status": "completed",
        },
    }
    codex.observations(shown)  # the stream showed the first command
    assert reader.poll() == []
    with rollout.open("a") as handle:  # the failing one finishes; the stream never shows it
        handle.write(output("c2", 128, "fatal: Unable to create '.git/index.lock': Read-only file system\n"))
    (missing,) = reader.poll()
    assert missing["source"] == "rollout" and missing["item"]["command"] == "git commit -m x"
    assert missing["item"]["exit_code"] == 128 and missing["item"]["status"] == "failed"
    observed = codex.observations(missing)
    assert [o.kind for o in observed] == ["tool_call", "tool_result"] and observed[1].is_error
    assert observed[1].exit_code == 128
    (denial,) = codex.denials(missing)
    assert denial.tool == "sandbox" and denial.command == "git commit -m x"
    assert reader.poll() == []  # each command once
