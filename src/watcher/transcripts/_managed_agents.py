"""Anthropic managed-agent session events (``sevt_`` ids), bare or wrapped as
``{role, kind, time, raw}`` lines as exported by some tools.

``user.message`` and ``user.define_outcome`` are user messages, ``agent.message`` assistant
text, ``agent.thinking`` thinking (when it carries text), ``agent.tool_use`` /
``agent.mcp_tool_use`` tool calls, ``agent.tool_result`` / ``agent.mcp_tool_result`` their
results (paired by ``tool_use_id``), ``session.status_idle`` the end of a turn and
``session.error`` a harness error. Spans and status changes are bookkeeping.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from watcher.core.observations import (
    AssistantMessage,
    Done,
    HarnessError,
    Observation,
    ToolCall,
    ToolResult,
    UserMessage,
)
from watcher.transcripts._base import RecordReader, as_text, parse_args, timestamp

__all__ = ["ManagedAgentsReader", "sniff"]

_QUIET_PREFIXES = (
    "span.",
    "session.status_",
    "session.thread_",
    "session.usage",
    "user.interrupt",
    "user.tool_confirmation",
)


def _event(record: Mapping[str, Any]) -> Mapping[str, Any]:
    raw = record.get("raw")
    return raw if isinstance(raw, Mapping) else record


def sniff(record: Mapping[str, Any]) -> bool:
    """A managed-agent event: a dotted ``type`` under ``agent.``/``user.``/``session.``/``span.``."""
    kind = _event(record).get("type")
    return isinstance(kind, str) and kind.split(".", 1)[0] in ("agent", "user", "session", "span") and "." in kind


class ManagedAgentsReader(RecordReader):
    """Reads managed-agent session events, one at a time."""

    format = "managed-agents"

    def type_of(self, record: Mapping[str, Any]) -> str:
        kind = _event(record).get("type")
        return kind if isinstance(kind, str) else "<no type>"

    def _feed(self, record: Mapping[str, Any]) -> list[Observation]:
        event = _event(record)
        kind = self.type_of(record)
        stamp = event.get("processed_at") or record.get("time")
        common: dict[str, Any] = {"ts": timestamp(stamp), "session": self.session}
        if kind == "user.message":
            return [UserMessage(**common, text=as_text(event.get("content")))]
        if kind == "user.define_outcome":
            return [UserMessage(**common, text=str(event.get("description", "")))]
        if kind == "agent.message":
            return [AssistantMessage(**common, text=as_text(event.get("content")))]
        if kind == "agent.thinking":
            text = as_text(event.get("content")) or str(event.get("thinking") or "")
            if not text:
                return self.ignore("agent.thinking (no text)")
            return [AssistantMessage(**common, text=text, extra={"thinking": True})]
        if kind in ("agent.tool_use", "agent.mcp_tool_use", "agent.custom_tool_use"):
            name = str(event.get("name", ""))
            return [ToolCall(**common, id=str(event.get("id", "")), name=name, input=parse_args(event.get("input")))]
        if kind in ("agent.tool_result", "agent.mcp_tool_result"):
            call_id = str(event.get("tool_use_id") or event.get("mcp_tool_use_id") or "")
            output = as_text(event.get("content"))
            return [ToolResult(**common, tool_call_id=call_id, output=output, is_error=bool(event.get("is_error")))]
        if kind == "session.status_idle":
            return [Done(**common)]
        if kind == "session.error":
            error = event.get("error")
            reason = error.get("message") if isinstance(error, Mapping) else error
            return [HarnessError(**common, text=str(reason or "session error"))]
        if kind == "span.model_request_end" and event.get("is_error"):
            return [HarnessError(**common, text="model request failed")]
        if kind.startswith(_QUIET_PREFIXES) or kind.startswith("span."):
            return self.ignore(kind)
        return self.skip(kind)
