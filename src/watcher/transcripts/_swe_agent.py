"""SWE-agent trajectories (``*.traj``): one JSON document with ``trajectory`` steps and ``info``.

Each step has a ``thought``, an ``action`` (a shell command or one of SWE-agent's tools, run in
its shell) and the ``observation`` it produced: an assistant message, a ``bash`` tool call and its
result. The task is the first non-demonstration user message of ``history``. ``info.exit_status``
ends the session: ``submitted`` is done, anything else (``exit_cost``, ``exit_format``,
``exit_error``, ...) is a harness error first.

A trajectory with only its ``history`` (SWE-agent's demonstrations are kept that way) is read from
the history: each assistant message with an ``action`` is a step, the message after it its
observation.
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
from watcher.transcripts._base import RecordReader, as_text, exit_code_in

__all__ = ["SweAgentReader", "records", "sniff"]


def sniff(document: object) -> bool:
    """A SWE-agent trajectory: an object with a ``trajectory`` list, or a ``history`` of its messages."""
    if not isinstance(document, Mapping):
        return False
    if isinstance(document.get("trajectory"), list):
        return True
    history = document.get("history")
    return isinstance(history, list) and any(_is_action(m) for m in history)


def _is_action(message: object) -> bool:
    """A history message of SWE-agent's own shape: the assistant's, with the ``action`` it ran."""
    return (
        isinstance(message, Mapping) and message.get("role") == "assistant" and isinstance(message.get("action"), str)
    )


def _steps_of(history: list[object]) -> Iterator[dict[str, Any]]:
    """The steps a ``history`` holds: each action with the thought before it and the observation after it."""
    for n, message in enumerate(history):
        if not _is_action(message):
            continue
        assert isinstance(message, Mapping)
        after = history[n + 1] if n + 1 < len(history) else None
        observed = after.get("content") if isinstance(after, Mapping) and after.get("role") in ("tool", "user") else ""
        yield {
            "thought": message.get("thought") or message.get("content"),
            "action": message["action"],
            "observation": observed,
        }


def records(document: object) -> Iterator[object]:
    """The task (as ``{"task": ...}``), each step, then ``{"info": ...}``."""
    if not isinstance(document, Mapping):
        yield document
        return
    history = document.get("history")
    for message in history if isinstance(history, list) else ():
        if isinstance(message, Mapping) and message.get("role") == "user" and not message.get("is_demo"):
            yield {"task": as_text(message.get("content"))}
            break
    steps = document.get("trajectory")
    if isinstance(steps, list):
        yield from steps
    elif isinstance(history, list):
        yield from _steps_of(history)
    yield {"info": document.get("info")}


def end_of_run(status: object, session: str) -> list[Observation]:
    """Done, after a harness error when the run did not end by submitting."""
    text = str(status or "")
    if text.lower() in ("submitted", ""):
        return [Done(session=session, extra={"exit_status": text})]
    return [
        HarnessError(session=session, text=f"the run ended with exit status {text!r}"),
        Done(session=session, extra={"exit_status": text}),
    ]


class SweAgentReader(RecordReader):
    """Reads a SWE-agent trajectory, step by step."""

    format = "swe-agent"

    def __init__(self, *, session: str = "transcript", strict: bool = False) -> None:
        super().__init__(session=session, strict=strict)
        self._step = 0

    def type_of(self, record: Mapping[str, Any]) -> str:
        return next((k for k in ("task", "info", "action") if k in record), "<no type>")

    def _feed(self, record: Mapping[str, Any]) -> list[Observation]:
        if "task" in record:
            return [UserMessage(session=self.session, text=str(record["task"]))]
        if "info" in record:
            info = record["info"]
            return end_of_run(info.get("exit_status") if isinstance(info, Mapping) else None, self.session)
        if "action" not in record:
            return self.skip(self.type_of(record))
        self._step += 1
        call_id = f"step-{self._step}"
        out: list[Observation] = []
        thought = record.get("thought") or record.get("response")
        if isinstance(thought, str) and thought.strip():
            out.append(AssistantMessage(session=self.session, text=thought))
        action = str(record.get("action") or "").strip()
        out.append(ToolCall(session=self.session, id=call_id, name="bash", input={"command": action}))
        output = as_text(record.get("observation"))
        code = exit_code_in(output, limit=200)
        out.append(
            ToolResult(
                session=self.session,
                tool_call_id=call_id,
                output=output,
                exit_code=code,
                is_error=code not in (None, 0),
            )
        )
        return out
