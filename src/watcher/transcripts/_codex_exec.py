"""``codex exec --json`` streams: ``thread.started``, ``turn.*``, ``item.started/updated/completed``.

A ``command_execution`` item becomes a tool call when it starts (so a watcher sees the command
before it finishes) and a tool result, with its exit code, when it completes; ``file_change``
and ``mcp_tool_call`` items likewise. Turn ends are breakpoints; ``turn.failed`` and ``error``
are harness errors.
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
)
from watcher.transcripts._base import RecordReader, as_text, parse_args

__all__ = ["CodexExecReader", "sniff"]

_EVENTS = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
        "error",
    }
)
_TOOLS = frozenset({"command_execution", "file_change", "mcp_tool_call", "web_search"})


def sniff(record: Mapping[str, Any]) -> bool:
    """A ``codex exec --json`` event: a dotted thread/turn/item type."""
    kind = record.get("type")
    return isinstance(kind, str) and kind in _EVENTS and kind != "error"


class CodexExecReader(RecordReader):
    """Reads ``codex exec --json`` output, event by event."""

    format = "codex-exec"

    def __init__(self, *, session: str = "transcript", strict: bool = False) -> None:
        super().__init__(session=session, strict=strict)
        self._started: set[str] = set()

    def type_of(self, record: Mapping[str, Any]) -> str:
        item = record.get("item")
        inner = item.get("type") if isinstance(item, Mapping) else None
        kind = super().type_of(record)
        return f"{kind}/{inner}" if isinstance(inner, str) else kind

    def _feed(self, record: Mapping[str, Any]) -> list[Observation]:
        kind = record.get("type")
        common: dict[str, Any] = {"session": self.session}
        if kind == "thread.started":
            tid = record.get("thread_id")
            if isinstance(tid, str) and tid:
                self.session = tid
            return self.ignore(kind)
        if kind == "turn.started":
            return self.ignore(kind)
        if kind == "turn.completed":
            return [Done(**common, extra={"usage": record.get("usage")})]
        if kind == "turn.failed":
            error = record.get("error")
            text = error.get("message") if isinstance(error, Mapping) else error
            return [HarnessError(**common, text=str(text or "turn failed")), Done(**common)]
        if kind == "error":
            return [HarnessError(**common, text=str(record.get("message") or "error"))]
        item = record.get("item")
        if kind not in ("item.started", "item.updated", "item.completed") or not isinstance(item, Mapping):
            return self.skip(self.type_of(record))
        if kind == "item.updated":
            return self.ignore(self.type_of(record))
        return self._item(kind == "item.completed", item, common)

    def _item(self, completed: bool, item: Mapping[str, Any], common: dict[str, Any]) -> list[Observation]:
        itype = item.get("type")
        item_id = str(item.get("id", ""))
        if itype in _TOOLS:
            out: list[Observation] = []
            if item_id not in self._started:
                self._started.add(item_id)
                out.append(self._call(itype, item_id, item, common))
            if completed and itype != "web_search":
                self._started.discard(item_id)
                out.append(self._result(itype, item_id, item, common))
            return out
        if not completed:
            return self.ignore(f"item.started/{itype}")
        if itype == "agent_message":
            return [AssistantMessage(**common, text=str(item.get("text", "")))]
        if itype == "reasoning":
            return [AssistantMessage(**common, text=str(item.get("text", "")), extra={"thinking": True})]
        if itype == "error":
            return [HarnessError(**common, text=str(item.get("message", "")))]
        if itype == "todo_list":
            return self.ignore("item.completed/todo_list")
        return self.skip(f"item.completed/{itype}")

    @staticmethod
    def _call(itype: str, item_id: str, item: Mapping[str, Any], common: dict[str, Any]) -> ToolCall:
        if itype == "command_execution":
            return ToolCall(**common, id=item_id, name="shell", input={"command": str(item.get("command", ""))})
        if itype == "file_change":
            return ToolCall(**common, id=item_id, name="apply_patch", input={"changes": item.get("changes")})
        if itype == "web_search":
            return ToolCall(**common, id=item_id, name="web_search", input={"query": item.get("query")})
        name = f"{item.get('server', '')}.{item.get('tool', '')}".strip(".")
        return ToolCall(**common, id=item_id, name=name, input=parse_args(item.get("arguments")))

    @staticmethod
    def _result(itype: str, item_id: str, item: Mapping[str, Any], common: dict[str, Any]) -> ToolResult:
        status = item.get("status")
        failed = status in ("failed", "declined")
        if itype == "command_execution":
            code = item.get("exit_code")
            code = code if isinstance(code, int) and not isinstance(code, bool) else None
            output = str(item.get("aggregated_output", ""))
            return ToolResult(
                **common, tool_call_id=item_id, output=output, exit_code=code, is_error=failed or code not in (None, 0)
            )
        if itype == "file_change":
            changes = item.get("changes")
            paths = (
                [f"{c.get('kind')} {c.get('path')}" for c in changes if isinstance(c, Mapping)]
                if isinstance(changes, list)
                else []
            )
            return ToolResult(**common, tool_call_id=item_id, output="\n".join(paths) or str(status), is_error=failed)
        error = item.get("error")
        result = item.get("result")
        text = (
            error.get("message")
            if isinstance(error, Mapping)
            else as_text(result.get("content"))
            if isinstance(result, Mapping)
            else ""
        )
        return ToolResult(
            **common, tool_call_id=item_id, output=str(text or ""), is_error=failed or isinstance(error, Mapping)
        )
