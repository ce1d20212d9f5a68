"""Gemini CLI saved chat sessions (``~/.gemini/tmp/<project>/chats/session-*.json`` or ``.jsonl``).

Older releases write one JSON document: ``sessionId`` and ``messages[]``; 0.61 appends JSONL: a
header record (``sessionId``, ``projectHash``), one record per message, ``$set`` records that
update the header (or restate the whole history on a resume), and a message written again under
the same ``id`` once its tool calls finish. Messages are of type ``user``, ``gemini``, ``info``,
``warning`` or ``error``; a ``gemini`` message carries its ``thoughts[]`` (assistant messages
marked ``thinking``), its text, and ``toolCalls[]`` with their results and ``status``. A message
seen again yields only what is new in it, and the user-role copies of tool responses are not
user messages. A whole document is fed as its header and then one message at a time.
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

__all__ = ["GeminiChatReader", "records", "sniff", "sniff_record"]


def sniff(document: object) -> bool:
    """A saved chat: an object with ``sessionId`` and a ``messages`` list."""
    return isinstance(document, Mapping) and "sessionId" in document and isinstance(document.get("messages"), list)


def sniff_record(record: Mapping[str, Any]) -> bool:
    """A JSONL chat recording: its header (``sessionId`` + ``projectHash``) or a ``$set`` update."""
    return ("sessionId" in record and "projectHash" in record) or isinstance(record.get("$set"), Mapping)


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

    def __init__(self, *, session: str = "transcript", strict: bool = False) -> None:
        super().__init__(session=session, strict=strict)
        self._seen: dict[str, set[str]] = {}  # message id -> the parts already turned into observations

    def type_of(self, record: Mapping[str, Any]) -> str:
        return "$set" if "$set" in record else super().type_of(record)

    def _feed(self, record: Mapping[str, Any]) -> list[Observation]:
        kind = record.get("type")
        if "$set" in record:
            return self.ignore("$set")  # header updates, or the history restated on a resume
        if kind is None and "sessionId" in record:
            sid = record.get("sessionId")
            if isinstance(sid, str) and sid:
                self.session = sid
            return self.ignore("session header")
        common: dict[str, Any] = {"ts": timestamp(record.get("timestamp")), "session": self.session}
        mid = record.get("id")
        seen = self._seen.setdefault(mid, set()) if isinstance(mid, str) and mid else set()
        if kind == "user":
            content = record.get("content")
            if (
                isinstance(content, list)
                and content
                and all(isinstance(part, Mapping) and "functionResponse" in part for part in content)
            ):
                return self.ignore("user (tool responses)")  # the gemini message's toolCalls hold them
            if "text" in seen:
                return self.ignore("user (again)")
            seen.add("text")
            return [UserMessage(**common, text=as_text(content))]
        if kind == "error":
            return [HarnessError(**common, text=as_text(record.get("content")) or "error")]
        if kind in ("info", "warning"):
            return self.ignore(str(kind))
        if kind != "gemini":
            return self.skip(self.type_of(record))
        out: list[Observation] = []
        thoughts = record.get("thoughts")
        for number, thought in enumerate(thoughts if isinstance(thoughts, list) else ()):
            if isinstance(thought, Mapping) and f"thought-{number}" not in seen:
                seen.add(f"thought-{number}")
                text = f"{thought.get('subject', '')}: {thought.get('description', '')}".strip(": ")
                out.append(AssistantMessage(**common, text=text, extra={"thinking": True}))
        text = as_text(record.get("content"))
        if text and "text" not in seen:
            seen.add("text")
            out.append(AssistantMessage(**common, text=text))
        calls = record.get("toolCalls")
        for call in calls if isinstance(calls, list) else ():
            if not isinstance(call, Mapping) or f"call-{call.get('id')}" in seen:
                continue
            seen.add(f"call-{call.get('id')}")
            at = {**common, "ts": timestamp(call.get("timestamp")) or common["ts"]}
            call_id = str(call.get("id", ""))
            out.append(ToolCall(**at, id=call_id, name=str(call.get("name", "")), input=parse_args(call.get("args"))))
            output = _response_text(call)
            code = exit_code_in(output, tail=True)  # the shell tool's output ends with "Exit Code: N"
            failed = call.get("status") in ("error", "cancelled") or code not in (None, 0)
            out.append(ToolResult(**at, tool_call_id=call_id, output=output, is_error=failed, exit_code=code))
        return out
