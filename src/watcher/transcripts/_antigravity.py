"""Google Antigravity step logs: one step per line (``step_index``, ``source``, ``type``).

``USER_INPUT`` steps are user messages; ``PLANNER_RESPONSE`` steps the model's text and its
``tool_calls`` (arguments JSON-encoded one by one); each later model step (``CODE_ACTION``,
``LIST_DIRECTORY``, ``SEARCH_WEB``, ...) is the result of the oldest call still waiting, and a
step whose ``status`` is ``ERROR`` a failed one.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from typing import Any

from watcher.core.observations import AssistantMessage, Observation, ToolCall, ToolResult, UserMessage
from watcher.transcripts._base import RecordReader, as_text, timestamp

__all__ = ["AntigravityReader", "sniff"]

_QUIET = frozenset({"CONVERSATION_HISTORY", "EPHEMERAL_MESSAGE", "CHECKPOINT", "SYSTEM_MESSAGE"})
_COMMAND_KEYS = ("CommandLine", "Command", "command")


def sniff(record: Mapping[str, Any]) -> bool:
    """An Antigravity step: ``step_index`` with an upper-case ``type``."""
    kind = record.get("type")
    return "step_index" in record and isinstance(kind, str) and kind.isupper()


def _decoded(value: object) -> object:
    """Antigravity JSON-encodes each argument on its own (``"\"npm init\""``)."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def _arguments(args: object) -> dict[str, Any]:
    decoded: dict[str, Any] = {}
    for key, value in args.items() if isinstance(args, Mapping) else ():
        decoded[str(key)] = _decoded(value)
    command = next((decoded[k] for k in _COMMAND_KEYS if isinstance(decoded.get(k), str)), None)
    return {**decoded, "command": command} if command is not None else decoded


class AntigravityReader(RecordReader):
    """Reads an Antigravity step log, step by step."""

    format = "antigravity"

    def __init__(self, *, session: str = "transcript", strict: bool = False) -> None:
        super().__init__(session=session, strict=strict)
        self._waiting: deque[str] = deque()

    def _feed(self, record: Mapping[str, Any]) -> list[Observation]:
        kind = record.get("type")
        if not isinstance(kind, str) or "step_index" not in record:
            return self.skip(self.type_of(record))
        common: dict[str, Any] = {"ts": timestamp(record.get("created_at")), "session": self.session}
        text = as_text(record.get("content"))
        if kind in _QUIET:
            return self.ignore(kind)
        if kind == "USER_INPUT":
            return [UserMessage(**common, text=text)]
        if kind == "PLANNER_RESPONSE":
            out: list[Observation] = [AssistantMessage(**common, text=text)] if text.strip() else []
            calls = record.get("tool_calls")
            for number, call in enumerate(calls if isinstance(calls, list) else ()):
                if isinstance(call, Mapping):
                    call_id = f"step-{record.get('step_index')}-{number}"
                    self._waiting.append(call_id)
                    out.append(
                        ToolCall(
                            **common, id=call_id, name=str(call.get("name", "")), input=_arguments(call.get("args"))
                        )
                    )
            return out
        call_id = self._waiting.popleft() if self._waiting else f"step-{record.get('step_index')}"
        failed = record.get("status") == "ERROR"
        return [ToolResult(**common, tool_call_id=call_id, output=text, is_error=failed, extra={"step": kind})]
