"""mini-swe-agent trajectories (``*.traj.json``): ``messages`` (OpenAI chat format) and ``info``.

Formats ``mini-swe-agent-1`` (the action is a fenced ```` ```bash ```` block in the assistant's
text, its output a user message starting ``<returncode>``) and ``mini-swe-agent-1.1`` (tool calls
and ``tool`` messages) are both read. The exit message (``role: exit``) or ``info.exit_status``
ends the session: ``Submitted`` is done, anything else a harness error first.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from watcher.core.observations import AssistantMessage, Observation, ToolCall, ToolResult, UserMessage
from watcher.transcripts._base import RecordReader, as_text, parse_args
from watcher.transcripts._swe_agent import end_of_run

__all__ = ["MiniSweAgentReader", "records", "sniff"]

_BASH_BLOCK = re.compile(r"```(?:bash|sh)\s*\n(.*?)\n```", re.DOTALL)
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")


def sniff(document: object) -> bool:
    """A mini-swe-agent trajectory: ``messages`` plus a mini-swe-agent format tag or ``info``."""
    if not isinstance(document, Mapping) or not isinstance(document.get("messages"), list):
        return False
    tag = document.get("trajectory_format")
    return (isinstance(tag, str) and tag.startswith("mini-swe-agent")) or isinstance(document.get("info"), Mapping)


def records(document: object) -> Iterator[object]:
    """A header (``instance_id``), each message, then ``{"info": ...}``."""
    if not isinstance(document, Mapping):
        yield document
        return
    yield {"instance_id": document.get("instance_id"), "trajectory_format": document.get("trajectory_format")}
    messages = document.get("messages")
    yield from messages if isinstance(messages, list) else ()
    yield {"info": document.get("info")}


def _returncode(text: str, extra: object) -> int | None:
    code = extra.get("returncode") if isinstance(extra, Mapping) else None
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    match = _RETURNCODE.search(text[:200])
    return int(match.group(1)) if match else None


class MiniSweAgentReader(RecordReader):
    """Reads a mini-swe-agent trajectory, message by message."""

    format = "mini-swe-agent"

    def __init__(self, *, session: str = "transcript", strict: bool = False) -> None:
        super().__init__(session=session, strict=strict)
        self._step = 0
        self._pending: str | None = None  # the fenced-block call awaiting its <returncode> message
        self._ended = False

    def type_of(self, record: Mapping[str, Any]) -> str:
        role = record.get("role")
        return (
            f"message/{role}"
            if isinstance(role, str)
            else next((k for k in ("info", "instance_id") if k in record), "<no role>")
        )

    def _feed(self, record: Mapping[str, Any]) -> list[Observation]:
        if "instance_id" in record and "role" not in record:
            sid = record.get("instance_id")
            if isinstance(sid, str) and sid:
                self.session = sid
            return self.ignore("header")
        if "info" in record and "role" not in record:
            info = record["info"]
            if self._ended:
                return self.ignore("info")
            self._ended = True
            return end_of_run(info.get("exit_status") if isinstance(info, Mapping) else None, self.session)
        role = record.get("role")
        text = as_text(record.get("content"))
        common: dict[str, Any] = {"session": self.session}
        if role == "system":
            return self.ignore("message/system")
        if role == "exit":
            extra = record.get("extra")
            self._ended = True
            return end_of_run(extra.get("exit_status") if isinstance(extra, Mapping) else "", self.session)
        if role == "tool":
            code = _returncode(text, record.get("extra"))
            call_id = str(record.get("tool_call_id", ""))
            return [
                ToolResult(**common, tool_call_id=call_id, output=text, exit_code=code, is_error=code not in (None, 0))
            ]
        if role == "user":
            if self._pending is not None and "<returncode>" in text[:200]:
                code = _returncode(text, record.get("extra"))
                call_id, self._pending = self._pending, None
                return [
                    ToolResult(
                        **common, tool_call_id=call_id, output=text, exit_code=code, is_error=code not in (None, 0)
                    )
                ]
            return [UserMessage(**common, text=text)]
        if role != "assistant":
            return self.skip(self.type_of(record))
        out: list[Observation] = []
        if text.strip():
            out.append(AssistantMessage(**common, text=text))
        calls = record.get("tool_calls")
        if isinstance(calls, list) and calls:
            for call in calls:
                function = call.get("function") if isinstance(call, Mapping) else None
                if isinstance(function, Mapping):
                    name = str(function.get("name", ""))
                    out.append(
                        ToolCall(
                            **common, id=str(call.get("id", "")), name=name, input=parse_args(function.get("arguments"))
                        )
                    )
            return out
        match = _BASH_BLOCK.search(text)
        if match:
            self._step += 1
            self._pending = f"step-{self._step}"
            out.append(ToolCall(**common, id=self._pending, name="bash", input={"command": match.group(1).strip()}))
        return out
