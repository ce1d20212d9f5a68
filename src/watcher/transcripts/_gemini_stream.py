"""Gemini CLI ``--output-format stream-json``: ``init``, ``message``, ``tool_use``, ``tool_result``,
``error`` and ``result`` events.

Assistant text arrives as ``delta`` chunks; the reader joins them into one message, emitted when
the next non-chunk event arrives (or at ``end()``). Each ``init`` starts a session named by its
``session_id``, so several runs appended to one file stay apart. A ``tool_result`` with
``status: "error"`` is a failed tool result; ``error`` events and a failed ``result`` are
harness errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
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
from watcher.transcripts._base import RecordReader, as_text, exit_code_in, parse_args, timestamp

__all__ = ["GeminiStreamReader", "sniff"]

_TYPES = frozenset({"init", "message", "tool_use", "tool_result", "error", "result"})


def sniff(record: Mapping[str, Any]) -> bool:
    """A Gemini CLI stream event: ``init``/``tool_use``/``tool_result``, or a top-level ``role``."""
    kind = record.get("type")
    if not isinstance(kind, str):
        return False
    if kind in ("tool_use", "tool_result"):
        return "tool_id" in record
    if kind == "init":
        return "session_id" in record and "subtype" not in record
    return kind == "message" and "role" in record and not isinstance(record.get("message"), Mapping)


class GeminiStreamReader(RecordReader):
    """Reads Gemini CLI stream-json, event by event, joining streamed text."""

    format = "gemini-stream"

    def __init__(self, *, session: str = "transcript", strict: bool = False) -> None:
        super().__init__(session=session, strict=strict)
        self._chunks: list[str] = []
        self._chunk_ts: float | None = None
        self._before_init: list[UserMessage] | None = []  # a wrapper's prompt, logged before init

    def _held(self) -> list[Observation]:
        held, self._before_init = self._before_init or [], None
        return [replace(obs, session=self.session) for obs in held]

    def _flush(self) -> list[Observation]:
        if not self._chunks:
            return []
        text = "".join(self._chunks)
        self._chunks = []
        return [AssistantMessage(ts=self._chunk_ts, session=self.session, text=text)]

    def _end(self) -> list[Observation]:
        return self._held() + self._flush()

    def _feed(self, record: Mapping[str, Any]) -> list[Observation]:
        kind = record.get("type")
        if kind not in _TYPES:
            return self.skip(self.type_of(record))
        ts = timestamp(record.get("timestamp"))
        if kind == "message" and record.get("role") == "assistant" and record.get("delta"):
            if not self._chunks:
                self._chunk_ts = ts
            self._chunks.append(as_text(record.get("content")))
            return []
        out = self._flush()
        if kind == "init":
            sid = record.get("session_id")
            if isinstance(sid, str) and sid:
                self.session = sid
            self.ignore("init")
            return out + self._held()
        common: dict[str, Any] = {"ts": ts, "session": self.session}
        if self._before_init is not None and not (kind == "message" and record.get("role") == "user"):
            out = self._held() + out  # no init in this stream: the held prompt keeps its place
        if kind == "message":
            text = as_text(record.get("content"))
            if record.get("role") == "user" and self._before_init is not None:
                self._before_init.append(UserMessage(**common, text=text))  # named once init arrives
            elif record.get("role") == "user":
                out.append(UserMessage(**common, text=text))
            else:
                out.append(AssistantMessage(**common, text=text))
        elif kind == "tool_use":
            name = str(record.get("tool_name", ""))
            args = parse_args(record.get("parameters"))
            out.append(ToolCall(**common, id=str(record.get("tool_id", "")), name=name, input=args))
        elif kind == "tool_result":
            out.append(self._result(record, common))
        elif kind == "error":
            if record.get("severity") == "warning":
                self.ignore("error (warning)")
            else:
                out.append(HarnessError(**common, text=str(record.get("message", "error"))))
        else:  # result
            if record.get("status") == "error":
                error = record.get("error")
                reason = error.get("message") if isinstance(error, Mapping) else error
                out.append(HarnessError(**common, text=str(reason or "run failed")))
            out.append(Done(**common, extra={"stats": record.get("stats")}))
        return out

    @staticmethod
    def _result(record: Mapping[str, Any], common: dict[str, Any]) -> ToolResult:
        output = as_text(record.get("output"))
        error = record.get("error")
        if not output and isinstance(error, Mapping):
            output = str(error.get("message", ""))
        extra = {"error_type": error.get("type")} if isinstance(error, Mapping) else {}
        code = exit_code_in(output, tail=True)
        return ToolResult(
            **common,
            tool_call_id=str(record.get("tool_id", "")),
            output=output,
            is_error=record.get("status") == "error" or code not in (None, 0),
            exit_code=code,
            extra=extra,
        )
