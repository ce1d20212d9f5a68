"""Scripted replies for the stub LLM servers: what the next request gets.

A stub server answers requests from a script of ``Reply`` values, consumed in order. One reply
describes an outcome independently of the wire format, so the same ``Reply.text("...")`` works
for the Anthropic stub (non-streaming JSON or SSE with ``event:`` lines) and the OpenAI stub
(chat completion or ``data:`` chunks ending with ``[DONE]``).
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RecordedRequest", "Reply", "ToolUse"]

_ids = itertools.count(1)
# A real CLI keeps ids across processes (``--resume`` of a session, a hook's ``tool_use_id``): a
# per-process prefix keeps two stub processes from handing out the same id.
_RUN = secrets.token_hex(3)


def next_id(prefix: str) -> str:
    """A unique, readable id such as ``toolu_stub3fa9c20001`` (unique across processes too)."""
    return f"{prefix}_stub{_RUN}{next(_ids):04d}"


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """A request a stub received: header names are lower-case, ``body`` is the parsed JSON.

    ``raw`` is the body exactly as it arrived, so tests can assert byte-identical prefixes.
    """

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    raw: bytes = b""

    @property
    def stream(self) -> bool:
        """True when the client asked for a streamed response."""
        return bool(self.body and self.body.get("stream"))


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One tool call in a reply."""

    name: str
    input: Mapping[str, Any]
    id: str = field(default_factory=lambda: next_id("toolu"))


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted outcome. Build it with the factories (``Reply.text`` …), not directly.

    ``usage`` overrides the token counts the stub would compute (keys ``input_tokens``,
    ``output_tokens``, ``cache_creation_input_tokens``, ``cache_read_input_tokens``).
    """

    kind: str
    content: str = ""
    tools: tuple[ToolUse, ...] = ()
    stop_reason: str = "end_turn"
    usage: Mapping[str, int] | None = None
    status: int = 200
    error_type: str = ""
    message: str = ""
    retry_after_ms: int | None = None
    should_retry: bool | None = None
    seconds: float = 0.0
    after_events: int = 0
    interval_s: float = 0.005
    delay_s: float = 0.0
    fn: Callable[[RecordedRequest], Reply] | None = None

    @classmethod
    def text(
        cls, text: str, *, usage: Mapping[str, int] | None = None, stop_reason: str = "end_turn", delay_s: float = 0.0
    ) -> Reply:
        """An assistant message holding ``text``; ``delay_s`` waits before answering."""
        return cls("message", content=text, usage=usage, stop_reason=stop_reason, delay_s=delay_s)

    @classmethod
    def tool_use(
        cls,
        name: str,
        input: Mapping[str, Any],
        *,
        id: str | None = None,
        text: str | None = None,
        usage: Mapping[str, int] | None = None,
        delay_s: float = 0.0,
    ) -> Reply:
        """An assistant message calling one tool (after optional ``text``); stop reason ``tool_use``."""
        call = ToolUse(name, dict(input), id or next_id("toolu"))
        return cls("message", content=text or "", tools=(call,), stop_reason="tool_use", usage=usage, delay_s=delay_s)

    @classmethod
    def tool_uses(
        cls,
        calls: Sequence[ToolUse | tuple[str, Mapping[str, Any]]],
        *,
        text: str | None = None,
        usage: Mapping[str, int] | None = None,
    ) -> Reply:
        """An assistant message calling several tools in parallel: ``[("Read", {...}), ...]``."""
        tools = tuple(c if isinstance(c, ToolUse) else ToolUse(c[0], dict(c[1])) for c in calls)
        return cls("message", content=text or "", tools=tools, stop_reason="tool_use", usage=usage)

    @classmethod
    def error(
        cls,
        status: int,
        type: str = "overloaded_error",
        message: str | None = None,
        *,
        retry_after_ms: int | None = 1,
        should_retry: bool | None = None,
    ) -> Reply:
        """An HTTP error with a provider-style error body and a tiny ``retry-after-ms``.

        ``should_retry`` sends ``x-should-retry``, which overrides the SDK's retry policy.
        """
        text = message or f"stub {type} (HTTP {status})"
        return cls(
            "error",
            status=status,
            error_type=type,
            message=text,
            retry_after_ms=retry_after_ms,
            should_retry=should_retry,
        )

    @classmethod
    def stall(cls, seconds: float) -> Reply:
        """Accept the request and say nothing for ``seconds`` (a stream sends its start first), then hang up."""
        return cls("stall", seconds=seconds)

    @classmethod
    def stream_error(
        cls,
        after_events: int = 3,
        *,
        type: str = "overloaded_error",
        message: str = "Overloaded",
        text: str = "partial answer",
    ) -> Reply:
        """A stream that starts normally, then sends an ``error`` event after ``after_events`` events."""
        return cls("stream_error", content=text, error_type=type, message=message, after_events=after_events)

    @classmethod
    def truncated(cls, after_events: int = 3, *, text: str = "partial answer") -> Reply:
        """A stream that hangs up without finishing after ``after_events`` events."""
        return cls("truncated", content=text, after_events=after_events)

    @classmethod
    def endless(cls, interval_s: float = 0.005, *, text: str = "tick ") -> Reply:
        """A stream of text deltas every ``interval_s`` until the client disconnects (interrupt tests)."""
        return cls("endless", content=text, interval_s=interval_s)

    @classmethod
    def dynamic(cls, fn: Callable[[RecordedRequest], Reply]) -> Reply:
        """A reply computed from the request when it arrives: ``fn(request) -> Reply``."""
        return cls("dynamic", fn=fn)

    def retry_headers(self) -> dict[str, str]:
        """The retry headers an error reply sends (the same for both wire formats)."""
        headers = {}
        if self.retry_after_ms is not None:
            headers["retry-after-ms"] = str(self.retry_after_ms)
        if self.should_retry is not None:
            headers["x-should-retry"] = "true" if self.should_retry else "false"
        return headers

    def resolve(self, request: RecordedRequest) -> Reply:
        """The concrete reply for ``request`` (calls a dynamic reply's function)."""
        reply = self
        while reply.kind == "dynamic" and reply.fn is not None:
            reply = reply.fn(request)
        return reply
