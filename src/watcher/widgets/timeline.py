"""The panel's timeline picture: an SVG strip of observations, evaluations and interjections.

Plain SVG in an ``HTML`` widget renders in JupyterLab, VS Code and Colab with no front-end to
fetch, and costs a string join per refresh (no plotting library on the update path).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from watcher.runtime.fates import DELIVERED

__all__ = ["Mark", "timeline_svg"]

#: what a mark shows: an observation, an evaluation, or an interjection's fate (delivered, dismissed)
MarkKind = Literal["observation", "error", "continue", "interject", "failed", "delivered", "dismissed"]

_ROWS = {
    "observation": 12,
    "error": 12,
    "continue": 28,
    "interject": 28,
    "failed": 28,
    DELIVERED: 44,
    "dismissed": 44,
}
_COLOURS = {
    "observation": "#9aa5b1",
    "error": "#d9822b",
    "continue": "#2b7bb9",
    "interject": "#c23030",
    "failed": "#8a6d3b",
    DELIVERED: "#0f9960",
    "dismissed": "#738694",
}
_LABELS = (("observed", 12), ("evaluated", 28), ("interjected", 44))


@dataclass(frozen=True, slots=True)
class Mark:
    """One point on the timeline: when (epoch seconds) and what."""

    ts: float
    kind: MarkKind


def timeline_svg(marks: Sequence[Mark], *, width: int = 460, now: float | None = None) -> str:
    """An SVG strip, oldest mark on the left; empty marks give an empty strip with its labels."""
    left, right, height = 78, 8, 54
    span_w = width - left - right
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" class="watcher-timeline" role="img" aria-label="watcher timeline">',
        f'<rect x="{left}" y="2" width="{span_w}" height="{height - 4}" fill="#f5f8fa" rx="3"/>',
    ]
    for label, y in _LABELS:
        parts.append(f'<text x="{left - 6}" y="{y + 4}" font-size="10" text-anchor="end" fill="#5c7080">{label}</text>')
    if marks:
        start = min(m.ts for m in marks)
        end = max(now or 0.0, max(m.ts for m in marks))
        span = max(end - start, 1e-6)
        for mark in marks:
            x = left + 4 + (mark.ts - start) / span * (span_w - 8) if end > start else left + span_w / 2
            y = _ROWS[mark.kind]
            colour = _COLOURS[mark.kind]
            if mark.kind in ("interject", DELIVERED):
                parts.append(
                    f'<path d="M{x:.1f},{y - 5} L{x + 5:.1f},{y} L{x:.1f},{y + 5} L{x - 5:.1f},{y} Z" fill="{colour}"/>'
                )
            else:
                parts.append(f'<circle cx="{x:.1f}" cy="{y}" r="3.5" fill="{colour}"/>')
        parts.append(
            f'<text x="{width - right - 2}" y="{height - 1}" font-size="9" text-anchor="end" fill="#8a9ba8">{span:.1f} s</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
