"""OpenHands event streams: an evaluation ``output.jsonl`` (one instance per line, its events in
``history``) and a trajectory (a JSON array of events).

An event is an *action* (``source: agent``: ``run``, ``read``, ``edit``, ``think``, ``finish``,
``message``, ...) or an *observation* whose ``cause`` is the id of the action it answers. Actions
become tool calls whose id is the event id, observations the tool results paired with them by
``cause``; exit codes come from ``extras.metadata.exit_code``. Each evaluation instance is its own
session, named by its ``instance_id``; its ``error`` is a harness error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
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
from watcher.transcripts._base import RecordReader, as_text, timestamp

__all__ = ["OpenHandsReader", "records", "sniff", "sniff_document"]

_QUIET_ACTIONS = frozenset({"system", "recall", "change_agent_state", "null"})
_QUIET_OBSERVATIONS = frozenset({"recall", "agent_state_changed", "null", "think"})
_TOOL_NAMES = {
    "run": "execute_bash",
    "run_ipython": "execute_ipython_cell",
    "read": "str_replace_editor",
    "edit": "str_replace_editor",
    "browse": "browser",
    "browse_interactive": "browser",
}


def _is_event(record: object) -> bool:
    return isinstance(record, Mapping) and "source" in record and ("action" in record or "observation" in record)


def sniff(record: Mapping[str, Any]) -> bool:
    """An evaluation instance (``instance_id`` + ``history``) or a single event."""
    return (isinstance(record.get("history"), list) and "instance_id" in record) or _is_event(record)


def sniff_document(document: object) -> bool:
    """A trajectory: a JSON array of events (or ``{"history": [...]}``)."""
    if isinstance(document, Mapping):
        return sniff(document)
    return isinstance(document, list) and bool(document) and _is_event(document[0])


def records(document: object) -> Iterator[object]:
    """The events of a trajectory array, or the instance itself."""
    if isinstance(document, list):
        yield from document
    else:
        yield document


class OpenHandsReader(RecordReader):
    """Reads OpenHands events (or whole evaluation instances), one at a time."""

    format = "openhands"

    def type_of(self, record: Mapping[str, Any]) -> str:
        if "history" in record:
            return "instance"
        action, observation = record.get("action"), record.get("observation")
        return f"action/{action}" if action else f"observation/{observation}" if observation else "<no type>"

    def _feed(self, record: Mapping[str, Any]) -> list[Observation]:
        history = record.get("history")
        if isinstance(history, list):
            return self._instance(record, history)
        if not _is_event(record):
            return self.skip(self.type_of(record))
        return self._event(record, {"ts": timestamp(record.get("timestamp")), "session": self.session})

    def _instance(self, record: Mapping[str, Any], history: list[Any]) -> list[Observation]:
        sid = record.get("instance_id")
        if isinstance(sid, str) and sid:
            self.session = sid
        out: list[Observation] = []
        for event in history:
            out.extend(self.feed(event))
            self.records -= 1  # events inside an instance are not records of the file
        error = record.get("error")
        if error:
            out.append(HarnessError(session=self.session, text=str(error)))
        return out

    def _event(self, event: Mapping[str, Any], common: dict[str, Any]) -> list[Observation]:
        action = event.get("action")
        args = event.get("args")
        args = args if isinstance(args, Mapping) else {}
        if action:
            if action in _QUIET_ACTIONS:
                return self.ignore(f"action/{action}")
            if action == "message":
                text = str(args.get("content") or event.get("message") or "")
                cls = UserMessage if event.get("source") == "user" else AssistantMessage
                return [cls(**common, text=text)]
            out: list[Observation] = []
            thought = args.get("thought")
            if isinstance(thought, str) and thought.strip():
                out.append(AssistantMessage(**common, text=thought, extra={"thinking": True}))
            if action == "think":
                return out
            if action == "finish":
                outputs = args.get("outputs")
                content = outputs.get("content") if isinstance(outputs, Mapping) else None
                final = args.get("final_thought") or content or event.get("message")
                if isinstance(final, str) and final.strip():
                    out.append(AssistantMessage(**common, text=final))
                out.append(Done(**common))
                return out
            meta = event.get("tool_call_metadata")
            name = meta.get("function_name") if isinstance(meta, Mapping) else None
            inputs = {
                k: v
                for k, v in args.items()
                if k not in ("thought", "confirmation_state", "hidden", "is_static", "blocking")
            }
            out.append(
                ToolCall(
                    **common,
                    id=str(event.get("id", "")),
                    name=str(name or _TOOL_NAMES.get(str(action), action)),
                    input=inputs,
                )
            )
            return out
        observation = event.get("observation")
        if observation in _QUIET_OBSERVATIONS:
            return self.ignore(f"observation/{observation}")
        cause = event.get("cause")
        text = as_text(event.get("content")) or str(event.get("message") or "")
        if cause is None:
            if observation == "error":
                return [HarnessError(**common, text=text)]
            return self.ignore(f"observation/{observation}")
        extras = event.get("extras")
        meta = extras.get("metadata") if isinstance(extras, Mapping) else None
        code = meta.get("exit_code") if isinstance(meta, Mapping) else None
        code = code if isinstance(code, int) and not isinstance(code, bool) and code >= 0 else None
        failed = observation == "error" or code not in (None, 0)
        return [ToolResult(**common, tool_call_id=str(cause), output=text, is_error=failed, exit_code=code)]
