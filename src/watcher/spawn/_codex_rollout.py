"""Codex's rollout file, read alongside its ``--json`` stream: the commands the stream left out.

Codex 0.169 drops failed commands from ``exec --json`` output in many runs (timing-dependent),
yet every command and its output are in ``$CODEX_HOME/sessions/.../rollout-*.jsonl``. The reader
tails the newest rollout and turns each finished command the stream did not show into the same
``item.completed`` / ``command_execution`` record the stream would have carried (marked
``"source": "rollout"``), so watchers, progress and permission recovery see it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["RolloutReader"]

_EXIT = re.compile(r"Process exited with code (-?\d+)")
_SHELL_TOOLS = ("exec_command", "shell", "shell_command", "local_shell")


class RolloutReader:
    """Tails the newest rollout under ``codex_home`` and reports commands missing from the stream."""

    def __init__(self, codex_home: Path) -> None:
        self.codex_home = codex_home
        self._path: Path | None = None
        self._offset = 0
        self._calls: dict[str, str] = {}
        self.seen_commands: list[str] = []  # commands the --json stream showed

    def _current(self) -> Path | None:
        found = sorted((self.codex_home / "sessions").glob("**/rollout-*.jsonl"), key=lambda p: p.stat().st_mtime)
        if found and found[-1] != self._path:
            self._path, self._offset = found[-1], 0
        return self._path

    def poll(self) -> list[dict[str, Any]]:
        """New finished commands the stream did not show, as ``item.completed`` records."""
        path = self._current()
        if path is None:
            return []
        with path.open("rb") as handle:
            handle.seek(self._offset)
            data = handle.read()
        end = data.rfind(b"\n") + 1  # a line being written is read next time
        self._offset += end
        out = []
        for raw in data[:end].splitlines():
            try:
                payload = json.loads(raw).get("payload") or {}
            except (ValueError, AttributeError):
                continue
            record = self._record(payload) if isinstance(payload, Mapping) else None
            if record is not None:
                out.append(record)
        return out

    def _record(self, payload: Mapping[str, Any]) -> dict[str, Any] | None:
        kind, call_id = payload.get("type"), str(payload.get("call_id", ""))
        if kind == "function_call" and payload.get("name") in _SHELL_TOOLS:
            try:
                args = json.loads(payload.get("arguments") or "{}")
            except ValueError:
                args = {}
            command = args.get("cmd") or args.get("command") or ""
            self._calls[call_id] = " ".join(command) if isinstance(command, list) else str(command)
            return None
        if kind != "function_call_output" or call_id not in self._calls:
            return None
        command = self._calls.pop(call_id)
        if any(command in shown for shown in self.seen_commands):
            return None
        output = str(payload.get("output", ""))
        code = _EXIT.search(output)
        exit_code = int(code[1]) if code else None
        text = output.split("Output:\n", 1)[-1]
        item = {
            "id": f"rollout-{call_id}",
            "type": "command_execution",
            "command": command,
            "aggregated_output": text,
            "exit_code": exit_code,
            "status": "completed" if exit_code == 0 else "failed",
        }
        return {"type": "item.completed", "item": item, "source": "rollout"}
