"""Codex CLI session rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Records are ``{timestamp, type, payload}`` with type ``session_meta`` (the session id),
``turn_context``, ``response_item`` (what the model saw and said: messages, reasoning, function
calls and their outputs), ``event_msg`` (the UI's mirror of the same things, plus turn ends and
errors) and ``compacted``. Messages and tool calls are read from ``response_item`` only, so the
``event_msg`` copies (``user_message``, ``agent_message``, ``exec_command_end``, ...) are never
counted twice; the context Codex sends in the user's role (AGENTS.md, the environment) is no user
message. Exit codes come from the function call's output ("Process exited with code 1",
or the older ``{"metadata": {"exit_code": 1}}``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from watcher.core.observations import (
    AssistantMessage,
    Condensation,
    Done,
    HarnessError,
    Observation,
    ToolCall,
    ToolResult,
    UserMessage,
)
from watcher.transcripts._base import RecordReader, as_text, exit_code_in, parse_args, timestamp

__all__ = ["CodexRolloutReader", "shell_input", "sniff"]

_ENVELOPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
_BOOKKEEPING = frozenset({"world_state", "token_usage_record"})  # 0.16x: settings and usage, no content
_ITEMS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
    }
)
_ENDS = frozenset({"task_complete", "turn_complete"})
# Context Codex itself sends in the user's role (AGENTS.md, the sandbox, the cwd): not the user
_HARNESS_CONTEXT = (
    "# AGENTS.md instructions",
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
)
_ERRORS = frozenset({"error", "stream_error", "turn_aborted"})


def sniff(record: Mapping[str, Any]) -> bool:
    """A rollout record: a known envelope type with a ``payload``."""
    kind = record.get("type")
    return isinstance(kind, str) and kind in _ENVELOPES and "payload" in record


def shell_input(args: dict[str, Any]) -> dict[str, Any]:
    """Tool input with ``command`` as one string, whatever the shell tool called it."""
    command = args.get("command", args.get("cmd"))
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        command = command[-1] if len(command) >= 3 and command[1] in ("-lc", "-c") else " ".join(command)
    if isinstance(command, str):
        args = {**args, "command": command}
    return args


def _output_of(value: object) -> tuple[str, int | None, bool]:
    """(text, exit code, failed) of a function call's output in any of its shapes."""
    if isinstance(value, Mapping):  # {"content": ..., "success": bool}
        text = as_text(value.get("content"))
        return text, exit_code_in(text), value.get("success") is False
    text = value if isinstance(value, str) else as_text(value)
    if text.startswith("{"):
        try:
            decoded = json.loads(text)
        except ValueError:
            decoded = None
        if isinstance(decoded, Mapping) and "output" in decoded:
            meta = decoded.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, Mapping) else None
            code = code if isinstance(code, int) and not isinstance(code, bool) else None
            return str(decoded["output"]), code, code not in (None, 0)
    code = exit_code_in(text)
    return text, code, code not in (None, 0)


def _harness_context(content: object) -> bool:
    blocks = content if isinstance(content, list) else [content]
    texts = [as_text([block]).lstrip() for block in blocks]
    return bool(texts) and all(text.startswith(_HARNESS_CONTEXT) for text in texts)


class CodexRolloutReader(RecordReader):
    """Reads a Codex rollout file, record by record."""

    format = "codex"

    def type_of(self, record: Mapping[str, Any]) -> str:
        payload = record.get("payload")
        inner = payload.get("type") if isinstance(payload, Mapping) else None
        kind = super().type_of(record)
        return f"{kind}/{inner}" if isinstance(inner, str) else kind

    def _feed(self, record: Mapping[str, Any]) -> list[Observation]:
        kind = record.get("type")
        payload = record.get("payload")
        if kind in _BOOKKEEPING:
            return self.ignore(str(kind))
        if kind not in _ENVELOPES and kind in _ITEMS:  # the oldest rollouts: bare response items
            kind, payload = "response_item", record
        if kind not in _ENVELOPES or not isinstance(payload, Mapping):
            return self.skip(self.type_of(record))
        common: dict[str, Any] = {"ts": timestamp(record.get("timestamp")), "session": self.session}
        if kind == "session_meta":
            sid = payload.get("id")
            if isinstance(sid, str) and sid:
                self.session = sid
            return self.ignore(kind)
        if kind == "turn_context":
            return self.ignore(kind)
        if kind == "compacted":
            return [Condensation(**common)]
        if kind == "event_msg":
            return self._event(payload, common)
        return self._item(payload, common)

    def _event(self, payload: Mapping[str, Any], common: dict[str, Any]) -> list[Observation]:
        inner = payload.get("type")
        if inner in _ENDS:
            return [Done(**common)]
        if inner in _ERRORS:
            text = payload.get("message") or payload.get("reason") or inner
            return [HarnessError(**common, text=f"{inner}: {text}" if inner == "turn_aborted" else str(text))]
        return self.ignore(f"event_msg/{inner}")  # the UI's copies of response items, token counts

    def _item(self, payload: Mapping[str, Any], common: dict[str, Any]) -> list[Observation]:
        inner = payload.get("type")
        if inner == "message":
            role = payload.get("role")
            text = as_text(payload.get("content"))
            if role == "user":
                if _harness_context(payload.get("content")):
                    return self.ignore("response_item/message (user, harness context)")
                return [UserMessage(**common, text=text)]
            if role == "assistant":
                return [AssistantMessage(**common, text=text)]
            return self.ignore(f"response_item/message ({role})")
        if inner == "reasoning":
            text = as_text(payload.get("summary")) or as_text(payload.get("content"))
            if not text:
                return self.ignore("response_item/reasoning (encrypted)")
            return [AssistantMessage(**common, text=text, extra={"thinking": True})]
        if inner in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            return [self._call(inner, payload, common)]
        if inner == "additional_tools":
            return self.ignore("response_item/additional_tools")
        if inner in ("function_call_output", "custom_tool_call_output"):
            text, code, failed = _output_of(payload.get("output"))
            call_id = str(payload.get("call_id", ""))
            return [ToolResult(**common, tool_call_id=call_id, output=text, exit_code=code, is_error=failed)]
        return self.skip(f"response_item/{inner}")

    def _call(self, inner: str, payload: Mapping[str, Any], common: dict[str, Any]) -> ToolCall:
        call_id = str(payload.get("call_id") or payload.get("id") or "")
        if inner == "function_call":
            name = str(payload.get("name", ""))
            return ToolCall(**common, id=call_id, name=name, input=shell_input(parse_args(payload.get("arguments"))))
        if inner == "custom_tool_call":
            return ToolCall(
                **common, id=call_id, name=str(payload.get("name", "")), input={"input": payload.get("input")}
            )
        action = payload.get("action")
        args = dict(action) if isinstance(action, Mapping) else {}
        name = "shell" if inner == "local_shell_call" else "web_search"
        return ToolCall(**common, id=call_id, name=name, input=shell_input(args))
