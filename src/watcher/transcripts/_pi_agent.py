"""pi coding-agent sessions: a tree of entries (``id``/``parentId``), one per line.

``message`` entries hold ``user``, ``assistant`` (``text``, ``thinking`` and ``toolCall``
blocks) and ``toolResult`` messages (``toolCallId``, ``isError``); an assistant message that
stopped with an error is a harness error. ``compaction`` entries are condensations; the
``session`` header names the session; ``custom`` entries and model changes are bookkeeping.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from watcher.core.observations import (
    AssistantMessage,
    Condensation,
    HarnessError,
    Observation,
    ToolCall,
    ToolResult,
    UserMessage,
)
from watcher.transcripts._base import RecordReader, as_text, exit_code_in, parse_args, timestamp

__all__ = ["PiAgentReader", "sniff"]

_QUIET = frozenset({"custom", "custom_message", "model_change", "thinking_level_change", "branch_summary", "label"})


def sniff(record: Mapping[str, Any]) -> bool:
    """A pi entry: a ``message`` entry with ``parentId`` and a nested message, or its header."""
    kind = record.get("type")
    if not isinstance(kind, str):
        return False
    if kind == "session":
        return "cwd" in record and "id" in record
    return kind in _QUIET | {"message", "compaction"} and "parentId" in record


class PiAgentReader(RecordReader):
    """Reads a pi session file, entry by entry."""

    format = "pi"

    def _feed(self, record: Mapping[str, Any]) -> list[Observation]:
        kind = record.get("type")
        if kind == "session":
            sid = record.get("id")
            if isinstance(sid, str) and sid:
                self.session = sid
            return self.ignore("session")
        common: dict[str, Any] = {"ts": timestamp(record.get("timestamp")), "session": self.session}
        if kind in _QUIET:
            return self.ignore(str(kind))
        if kind == "compaction":
            return [Condensation(**common)]
        message = record.get("message")
        if kind != "message" or not isinstance(message, Mapping):
            return self.skip(self.type_of(record))
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            return [UserMessage(**common, text=as_text(content))]
        if role == "toolResult":
            output = as_text(content)
            failed = bool(message.get("isError"))
            call_id = str(message.get("toolCallId", ""))
            code = exit_code_in(output) if failed else None
            return [ToolResult(**common, tool_call_id=call_id, output=output, is_error=failed, exit_code=code)]
        if role != "assistant":
            return self.ignore(f"message/{role}")
        out: list[Observation] = []
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, Mapping):
                continue
            btype = block.get("type")
            if btype == "text":
                out.append(AssistantMessage(**common, text=str(block.get("text", ""))))
            elif btype == "thinking":
                out.append(AssistantMessage(**common, text=str(block.get("thinking", "")), extra={"thinking": True}))
            elif btype == "toolCall":
                args = parse_args(block.get("arguments"))
                out.append(ToolCall(**common, id=str(block.get("id", "")), name=str(block.get("name", "")), input=args))
        if message.get("stopReason") == "error":
            out.append(HarnessError(**common, text=str(message.get("errorMessage") or "the model request failed")))
        return out
