"""The run's output fan-out: every sink gets every event at once, none can starve another.

Watchers and the journal receive the run's observations through the runtime's event bus. The
display callbacks (a cell's output, a widget) get the finer-grained ``RunEvent`` stream here,
through the same ``Fanout``: one queue and one task per sink. A sync callback runs in a worker
thread, so even one that blocks cannot stall the event loop. A queue over its bound coalesces
consecutive text deltas instead of dropping them, so a slow display falls behind in chunks but
never loses text, and memory stays bounded.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

from watcher.runtime.fanout import Fanout

__all__ = ["OutputSinks", "RunEvent", "RunEventKind", "Sink"]

Sink = Callable[["RunEvent"], Awaitable[None] | None]
RunEventKind: TypeAlias = Literal[
    "text", "tool_call_start", "tool_call", "tool_result", "interjection", "interrupted", "turn_end", "status"
]


@dataclass(frozen=True, slots=True)
class RunEvent:
    """One thing a display shows about a run.

    ``kind`` is ``text`` (a streamed delta in ``text``), ``tool_call_start`` (the model began a
    tool call, its name in ``text``), ``tool_call`` (complete: the tool's name in ``text``, its
    ``input`` in ``data``), ``tool_result`` (the output in ``text``, the tool's ``name`` and
    ``is_error`` in ``data``), ``interjection`` (an injected message, its text in ``text``),
    ``interrupted`` (the streamed response was cancelled), ``turn_end`` or ``status`` (the run's
    final status in ``text``). ``data`` holds the details: ids, inputs, step numbers.
    """

    kind: RunEventKind
    text: str = ""
    data: Mapping[str, Any] = field(default_factory=dict)
    session: str = ""


def _merge_text(queue: deque[RunEvent], event: RunEvent) -> bool:
    """A sink that is behind gets consecutive text deltas merged into one, never dropped."""
    last = queue[-1] if queue else None
    if event.kind == "text" and last is not None and last.kind == "text":
        queue[-1] = replace(last, text=last.text + event.text)
        return True
    return False


def _name(fn: object) -> str:
    return str(getattr(fn, "__qualname__", None) or type(fn).__name__)


class OutputSinks(Fanout[RunEvent]):
    """Fans ``RunEvent``s out to display callbacks, each isolated in its own queue and task."""

    def __init__(self, *, maxsize: int = 32) -> None:
        super().__init__(maxsize=maxsize, overflow=_merge_text, offthread=True, label="watcher-sink")

    def add(self, fn: Sink) -> None:
        """Add a sink (sync or async callable). Call from inside the run's event loop."""
        self.subscribe(_name(fn), fn)

    def emit(self, event: RunEvent) -> None:
        """Hand ``event`` to every sink without waiting for any of them."""
        self.publish(event)

    @property
    def coalesced(self) -> int:
        """Text deltas merged into earlier ones because a sink was behind."""
        return sum(sub.dropped for sub in self.subscriptions)
