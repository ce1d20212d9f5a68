"""One streamed record of an agent CLI → the observations watchers see.

Kept in one small module so the transcript readers (``watcher.transcripts``, incremental per
record) can replace it wholesale. Claude Code's stream-json goes through the Claude Code reader
of ``watcher.transcripts``; Codex ``exec --json`` and Gemini ``stream-json`` are mapped here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from watcher.core.observations import AssistantMessage, Done, HarnessError, Observation, ToolCall, ToolResult
from watcher.transcripts import reader_for

__all__ = ["claude_observations", "codex_observations", "gemini_observations"]

_CLAUDE_TYPES = {"assistant", "user", "result"}


def claude_observations(record: Mapping[str, Any]) -> list[Observation]:
    """Claude Code stream-json: assistant text and tool calls, tool results, the end of a turn."""
    if record.get("type") not in _CLAUDE_TYPES:
        return []  # system init/retries, control responses, stream events: nothing a watcher judges
    # each stream-json record names its session and subagent itself, so a fresh reader per record
    # reads it whole; the reader never raises (a record of an odd shape is skipped)
    return reader_for("claude-code", session="claude stream").feed(record)


def codex_observations(record: Mapping[str, Any]) -> list[Observation]:
    """Codex ``exec --json``: commands (call + result with exit code), messages, file changes, turns."""
    kind = record.get("type")
    if kind == "turn.completed":
        return [Done()]
    if kind in ("turn.failed", "error"):
        error = record.get("error")
        text = error.get("message") if isinstance(error, Mapping) else record.get("message")
        return [HarnessError(text=str(text or kind))]
    item = record.get("item")
    if kind != "item.completed" or not isinstance(item, Mapping):
        return []
    item_type, item_id = item.get("type"), str(item.get("id", ""))
    if item_type == "agent_message":
        return [AssistantMessage(text=str(item.get("text", "")))]
    if item_type == "command_execution":
        code = item.get("exit_code")
        return [
            ToolCall(id=item_id, name="shell", input={"command": str(item.get("command", ""))}),
            ToolResult(
                tool_call_id=item_id,
                output=str(item.get("aggregated_output", "")),
                is_error=item.get("status") == "failed" or (isinstance(code, int) and code != 0),
                exit_code=code if isinstance(code, int) else None,
            ),
        ]
    if item_type == "file_change":
        changes = item.get("changes") if isinstance(item.get("changes"), list) else []
        return [
            ToolCall(id=item_id, name="apply_patch", input={"changes": changes}),
            ToolResult(
                tool_call_id=item_id, output=str(item.get("status", "")), is_error=item.get("status") == "failed"
            ),
        ]
    return []


def gemini_observations(record: Mapping[str, Any]) -> list[Observation]:
    """Gemini CLI stream-json: assistant messages, tool use and results, the result record."""
    kind = record.get("type")
    if kind == "message" and record.get("role") == "assistant":
        return [AssistantMessage(text=str(record.get("content", "")))]
    if kind == "tool_use":
        params = record.get("parameters")
        return [
            ToolCall(
                id=str(record.get("tool_id", "")),
                name=str(record.get("tool_name", "")),
                input=dict(params) if isinstance(params, Mapping) else {},
            )
        ]
    if kind == "tool_result":
        error = record.get("error")
        text = str(record.get("output", "") or (error.get("message", "") if isinstance(error, Mapping) else ""))
        return [
            ToolResult(
                tool_call_id=str(record.get("tool_id", "")), output=text, is_error=record.get("status") == "error"
            )
        ]
    if kind == "result":
        out: list[Observation] = []
        if record.get("status") not in (None, "success"):
            error = record.get("error")
            out.append(
                HarnessError(text=str(error.get("message") if isinstance(error, Mapping) else record.get("status")))
            )
        return [*out, Done()]
    if kind == "error":
        return [HarnessError(text=str(record.get("message", "error")))]
    return []
