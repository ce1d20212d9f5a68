"""The hook wire contract: a CLI's hook payload in, observations out; an answer in its JSON shape.

Claude Code and Codex call a command hook with one JSON object on stdin (``session_id``,
``hook_event_name``, the event's fields) and read one JSON object from stdout. What the fields are
and what each answer does was checked against the real Claude Code binary
(``docs/hooks-claude-code.md``); Codex copies the shape but refuses ``permissionDecision: "allow"``
and has no ``PostToolUseFailure``, so an answer never says ``allow``: it adds context and leaves
the permission to the CLI's own rules and prompts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from watcher.core.errors import HookInputError
from watcher.core.interjection import Interjection
from watcher.core.observations import (
    AssistantMessage,
    Condensation,
    Done,
    Observation,
    ToolCall,
    ToolResult,
    UserMessage,
)
from watcher.hooks._payload import read_payload

__all__ = ["AGENTS", "CONTEXT_EVENTS", "EVENTS", "STOP_EVENTS", "Answer", "HookCall", "render_interjections"]

AGENTS = ("claude", "codex")
# The events watcher installs a hook for, in the order a turn meets them.
EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PreCompact",
    "SubagentStop",
    "Stop",
    "SessionEnd",
)
# Events whose answer can carry ``hookSpecificOutput.additionalContext`` to the model.
CONTEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure"})
TURN_END_EVENTS = frozenset({"Stop", "SubagentStop"})
# Events on which Claude Code 2.1.330 was seen to honour ``continue: false`` (docs/hooks-claude-code.md).
STOP_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
_CODEX_EVENTS = frozenset(EVENTS) - {"PostToolUseFailure"}
_OUTPUT_CAP = 20_000  # characters of a tool's output kept in an observation

# "late": the hook stopped waiting before the evaluation finished; nothing goes on the wire
AnswerKind: TypeAlias = Literal["none", "deny", "context", "block", "late"]


def _text(value: Any) -> str:
    """A tool response as the text the agent saw: Bash's stdout and stderr, else the JSON."""
    if isinstance(value, str):
        return value[:_OUTPUT_CAP]
    if isinstance(value, Mapping):
        streams = [str(value[k]) for k in ("stdout", "stderr") if isinstance(value.get(k), str) and value[k]]
        if streams or "stdout" in value:
            return "\n".join(streams)[:_OUTPUT_CAP]
    return json.dumps(value, ensure_ascii=False, default=str)[:_OUTPUT_CAP]


@dataclass(frozen=True, slots=True)
class HookCall:
    """One hook invocation: which CLI, which event, and the payload the CLI sent."""

    agent: str
    event: str
    payload: Mapping[str, Any]

    @classmethod
    def parse(cls, agent: str, event: str, raw: str | bytes) -> HookCall:
        """Parse stdin; the event named in the payload wins over the command line's."""
        data = read_payload(raw)  # leniently: a BOM, UTF-16, a trailing newline or object
        if not isinstance(data, dict):
            raise HookInputError(f"the {event} hook payload is not a JSON object")
        return cls(agent, str(data.get("hook_event_name") or event), data)

    @property
    def session_id(self) -> str:
        return _storable(self.payload.get("session_id") or "unknown")

    @property
    def parent_session(self) -> str:
        """The journal name of the CLI session: ``claude:<session_id>``."""
        return f"{self.agent}:{self.session_id}"

    @property
    def session(self) -> str:
        """The session this call is about: the CLI session, or a subagent as its child session."""
        agent_id = self.payload.get("agent_id")
        return f"{self.parent_session}/{_storable(agent_id)}" if agent_id else self.parent_session

    @property
    def turn(self) -> str:
        """What identifies the current turn (Claude's ``prompt_id``, Codex's ``turn_id``)."""
        return str(self.payload.get("prompt_id") or self.payload.get("turn_id") or "")

    @property
    def cwd(self) -> str:
        return str(self.payload.get("cwd") or "")

    def observations(self) -> tuple[Observation, ...]:
        """What this call tells about the session, as observations (often one, sometimes none)."""
        p, ev = self.payload, self.event
        if ev == "PreToolUse":
            tool_input = p.get("tool_input")
            return (
                ToolCall(
                    id=str(p.get("tool_use_id") or ""),
                    name=str(p.get("tool_name") or ""),
                    input=tool_input if isinstance(tool_input, Mapping) else {"input": tool_input},
                ),
            )
        if ev == "PostToolUse":
            response = p.get("tool_response")
            interrupted = isinstance(response, Mapping) and bool(response.get("interrupted"))
            return (
                ToolResult(tool_call_id=str(p.get("tool_use_id") or ""), output=_text(response), is_error=interrupted),
            )
        if ev == "PostToolUseFailure":
            return (
                ToolResult(tool_call_id=str(p.get("tool_use_id") or ""), output=_text(p.get("error")), is_error=True),
            )
        if ev == "UserPromptSubmit":
            return (UserMessage(text=str(p.get("prompt") or "")),)
        if ev in TURN_END_EVENTS:
            last = p.get("last_assistant_message")
            said = (AssistantMessage(text=str(last)),) if isinstance(last, str) and last else ()
            return (*said, Done())
        if ev == "PreCompact":
            return (Condensation(),)
        return ()


def render_interjections(interjections: list[Interjection]) -> str:
    """The text the model reads: one paragraph per interjection, naming the watcher and where."""
    parts = []
    for i in interjections:
        where = f" (at {', '.join(loc.render() for loc in i.locations)})" if i.locations else ""
        fix = f"\nSuggested fix for {i.fix.location.render()}:\n{i.fix.replacement}" if i.fix else ""
        parts.append(f"[watcher {i.watcher or 'watcher'}] {i.content.strip()}{where}{fix}")
    return "\n\n".join(parts)


@dataclass(frozen=True, slots=True)
class Answer:
    """What a hook call answers: nothing, a denial, added context, or a blocked stop.

    ``stop`` (a watcher paused or aborted the session) also ends the CLI's processing with it as
    the reason shown to the person: Claude Code's ``continue: false``, which 2.1.330 honours on
    ``PreToolUse`` and ``PostToolUse`` (``STOP_EVENTS``) and ignores on ``PostToolUseFailure``.
    Codex refuses ``continue: false`` on ``PreToolUse``, so it is never sent to Codex.
    """

    kind: AnswerKind = "none"
    text: str = ""
    stop: str = ""

    def wire(self, event: str, agent: str = "claude") -> dict[str, Any] | None:
        """The JSON object to print on stdout (None: print nothing, exit 0)."""
        body = self._body(event, agent)
        if body is not None and self.stop and agent == "claude" and event in STOP_EVENTS:
            body = {"continue": False, "stopReason": self.stop, **body}
        return body

    def _body(self, event: str, agent: str) -> dict[str, Any] | None:
        if self.kind in ("none", "late") or not self.text:
            return None
        if agent == "codex" and event not in _CODEX_EVENTS:
            return None
        if self.kind == "deny" and event == "PreToolUse":
            return {
                "hookSpecificOutput": {
                    "hookEventName": event,
                    "permissionDecision": "deny",
                    "permissionDecisionReason": self.text,
                }
            }
        if self.kind == "block" and event in TURN_END_EVENTS:
            return {"decision": "block", "reason": self.text}
        if self.kind == "context" and event in CONTEXT_EVENTS:
            return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": self.text}}
        return None


def _storable(value: object) -> str:
    """``value`` as text that can be stored: a lone surrogate (``"\\ud800"`` in the JSON) becomes ``?``."""
    return str(value).encode("utf-8", "replace").decode("utf-8")
