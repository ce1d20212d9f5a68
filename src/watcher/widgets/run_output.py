"""``RunOutput``: an agent run's output streaming into the cell that started it.

The run calls the sink (an async callable of ``RunEvent``) on the runtime thread, which is the
widget's only writer. Text deltas are gathered and flushed at most ``MAX_FLUSHES_PER_S`` times a
second; each flush rewrites the Output widget's outputs as one stdout stream, bounded to the last
``MAX_CHARS`` characters, so a long run neither floods iopub nor grows without end.
"""

from __future__ import annotations

import json
from typing import Any

import ipywidgets as w

from watcher.agents import RunEvent
from watcher.core.redact import redact
from watcher.widgets._flush import FlushLimiter
from watcher.widgets._plain import TextOutput

__all__ = ["MAX_CHARS", "RunOutput", "describe_run_event"]

MAX_CHARS = 20_000


def describe_run_event(event: RunEvent) -> str:
    """How one run event reads in the cell (text deltas verbatim, the rest on their own lines)."""
    data = event.data
    if event.kind == "text":
        return event.text
    if event.kind == "tool_call":
        args = json.dumps(data.get("input", {}), ensure_ascii=False)
        return f"\n→ {event.text}({args[:300]})\n"
    if event.kind == "tool_result":
        mark = "✗" if data.get("is_error") else "←"
        text = event.text
        return f"{mark} {text[:500]}{'…' if len(text) > 500 else ''}\n"
    if event.kind == "interjection":
        return f"\n[watcher {data.get('watcher') or 'person'}] {event.text}\n"
    if event.kind == "interrupted":
        return "\n⏹ interrupted\n"
    if event.kind == "status":
        return f"\n■ run {event.text}\n"
    return ""


class RunOutput:
    """An Output widget fed by a run's events, coalesced and bounded."""

    def __init__(self, title: str = "") -> None:
        self.widget = TextOutput(
            f"agent run: {title}" if title else "agent run",
            layout=w.Layout(max_height="320px", overflow="auto", border="1px solid #d8e1e8"),
        )
        self.title = title
        self.text = ""
        self.flushes = 0
        self._dirty = False
        self._limiter = FlushLimiter(self.flush)

    async def __call__(self, event: RunEvent) -> None:
        piece = describe_run_event(event)
        if not piece:
            return
        self.text = (self.text + redact(piece) if event.kind != "text" else self.text + piece)[-MAX_CHARS:]
        self._dirty = True
        if event.kind == "status":
            self.flush()  # the last word is shown at once
        else:
            self._limiter.request()

    def flush(self) -> None:
        """Show the text gathered so far (redacted)."""
        if not self._dirty:
            return
        self._dirty = False
        self._limiter.mark()
        self.flushes += 1
        shown: dict[str, Any] = {"output_type": "stream", "name": "stdout", "text": redact(self.text)}
        self.widget.outputs = (shown,)
