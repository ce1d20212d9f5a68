"""Gemini CLI saved chat sessions (``~/.gemini/tmp/<project>/chats/session-*.json``).

One JSON document: ``sessionId`` and ``messages[]``, each of type ``user``, ``gemini``, ``info``,
``warning`` or ``error``. A ``gemini`` message carries its ``thoughts[]`` (assistant messages
marked ``thinking``), its text, and ``toolCalls[]`` with their results and ``status``. The
document is fed as a header record (everything but the messages) and then one message at a
time, so the reader works the same on a recording that is still being written.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from watcher.core.observations import (
    AssistantMessage,
    HarnessError,
    Observation,
    ToolCall,
    ToolResult,
    UserMessage,
)
from watcher.transcripts._base import RecordReader, as_text, exit_code_in, parse_args, timestamp

__all__ = ["GeminiChatReader", "records", "sniff"]


def sniff(document: object) -> bool:
    """A saved chat: an object with ``sessionId`` and a ``messages`` list."""
    return isinstance(document, Mapping) and "sessionId" in document and isinstance(document.get("messages"), list)


def records(document: object) -> Iterator[object]:
    """The header (without the messages), then each message."""
    if not isinstance(document, Mapping):
        yield document
        return
    yield {k: v for k, v in document.items() if k != "messages"}
    messages = document.get("messages")
    yield from messages if isinstance(messages, list) else ()


def _response_text(call: Mapping[str, Any]) -> str:
    parts: list[str] = []
    result = call.get("result")
    for part in result if isinstance(result, list) else ():
        response = part.get("functionResponse", {}).get("response") if isinstance(part, Mapping) else None
        if isinstance(response, Mapping):
            value = response.get("output", response.get("error", ""))
            parts.append(value if isinstance(value, str) else as_text(value))
    if parts:
        return "\n".join(parts)
    display = call.get("resultDisplay")
    return display if isinstance(display, str) else ""


class GeminiChatReader(RecordReader):
    """Reads a Gemini CLI chat recording, message by message."""

    format = "gemini-chat"

    def _feed(self, record: Mapping[str, Any]) -> list[Observation]:
        kind = record.get("type")
        if kind is None and "sessionId" in record:
            sid = record.get("sessionId")
            if isinstance(sid, str) and sid:
                self.session = sid
            return self.ignore("session header")
        common: dict[str, Any] = {"ts": timestamp(record.get("timestamp")), "session": self.session}
        if kind == "user":
            return [UserMessage(**common, text=as_text(record.get("content")))]
        if kind == "error":
            return [HarnessError(**common, text=as_text(record.get("content")) or "error")]
        if kind in ("info", "warning"):
            return self.ignore(str(kind))
        if kind != "gemini":
            return self.skip(self.type_of(record))
        out: list[Observation] = []
        thoughts = record.get("thoughts")
        for thought in thoughts if isinstance(thoughts, list) else ():
            if isinstance(thought, Mapping):
                text = f"{thought.get('subject', '')}: {thought.get('description', '')}".strip(": ")
                out.append(AssistantMessage(**common, text=text, extra={"thinking": True}))
        text = as_text(record.get("content"))
        if text:
            out.append(AssistantMessage(**common, text=text))
        calls = record.get("toolCalls")
        for call in calls if isinstance(calls, list) else ():
            if not isinstance(call, Mapping):
                continue
            at = {**common, "ts": timestamp(call.get("timestamp")) or common["ts"]}
            call_id = str(call.get("id", ""))
            out.append(ToolCall(**at, id=call_id, name=str(call.get("name", "")), input=parse_args(call.get("args"))))
            output = _response_text(call)
            code = exit_code_in(output, tail=True)  # the shell tool's output ends with "Exit Code: N"
            failed = call.get("status") in ("error", "cancelled") or code not in (None, 0)
            out.append(ToolResult(**at, tool_call_id=call_id, output=output, is_error=failed, exit_code=code))
        return out
