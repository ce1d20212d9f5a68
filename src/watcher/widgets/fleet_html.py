"""What the fleet dashboard says, as escaped HTML: a task's line, the relayed learnings, the counters.

Framework-free (no ipywidgets), so the wording is testable on its own and the widget shell in
``fleet_panel`` stays thin. Everything here comes from task output, which is untrusted: every
value passes through ``escaped`` (secrets redacted, then HTML escaped) before it is placed in markup.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Protocol

from watcher.core.redact import redact

__all__ = [
    "LIVE",
    "MAX_DIAGNOSIS",
    "MAX_LEARNINGS",
    "FleetView",
    "describe_learnings",
    "describe_row",
    "describe_stats",
    "escaped",
]

MAX_LEARNINGS = 10  # the newest relayed learnings shown; the CLI's ``watcher fleet syncs`` lists all
MAX_DIAGNOSIS = 240

_BADGE = {
    "healthy": "#2e7d32",
    "fresh": "#2e7d32",
    "stale": "#f9a825",
    "stuck": "#ef6c00",
    "very_stale": "#c62828",
    "paused": "#6a1b9a",
    "degraded": "#616161",
    "unchecked": "#9e9e9e",
    "completed": "#1565c0",
    "failed": "#c62828",
    "aborted": "#c62828",
    "lost": "#424242",
}
LIVE = ("running", "paused")  # any other status (completed, failed, aborted, lost, ...) is a task that ended


class Learning(Protocol):
    """A learning the syncer extracted, as the dashboard reads it (``watcher.fleet.events.LearningExtracted``)."""

    learning_id: str
    source: str
    text: str


class Sync(Protocol):
    """A learning relayed to one task, as the dashboard reads it (``watcher.fleet.events.SyncMessageSent``)."""

    session: str
    learning_id: str
    source_task: str
    urgency: str
    text: str
    status: str
    observation: int


class FleetView(Protocol):
    """What the dashboard reads (``watcher.fleet.query.FleetView`` is one)."""

    @property
    def syncs(self) -> Sequence[Sync]: ...

    @property
    def learnings(self) -> Sequence[Learning]: ...

    def rows(self) -> list[dict[str, Any]]: ...

    def stats(self) -> dict[str, Any]: ...


def escaped(value: object) -> str:
    """Untrusted text as it may appear in a widget: secrets redacted, HTML escaped."""
    return html.escape(redact(str(value)))


def _ago(seconds: float | None) -> str:
    if seconds is None:
        return "no activity yet"
    return f"active {seconds:.0f}s ago" if seconds < 120 else f"active {seconds / 60:.0f} min ago"


def describe_row(row: dict[str, Any]) -> str:
    """One task's line as HTML: badge, name, status, counters, and the latest diagnosis below."""
    status = str(row.get("status", ""))
    health = str(row.get("health") or "unknown")
    if status not in LIVE:  # an ended task's last health check no longer says anything: its end does
        health = status
    elif health == "unknown":
        health = "not judged yet"  # it started less than a watcher cycle ago
    colour, label = _BADGE.get(health, "#9e9e9e"), health.replace("_", " ")
    parts = [
        f"iteration {int(row.get('iteration') or 0)}",
        _ago(row.get("last_activity_s")),
        f"{int(row.get('nudges') or 0)} nudge(s) sent",  # as ``watcher fleet status`` and ``stats`` count them
        f"ladder {int(row.get('ladder') or 0)}",
        f"{int(row.get('tokens') or 0):,} tokens",
    ]
    if row.get("cost_usd"):  # only when the journal knows what the task's tokens cost (a known model)
        parts.append(f"${float(row['cost_usd']):.4f}")
    line = (
        f'<span style="background:{colour};color:white;padding:1px 6px;border-radius:8px">{escaped(label)}</span> '
        f"<b>{escaped(row['task'])}</b> {escaped(status)} · {' · '.join(parts)}"
    )
    diagnosis = str(row.get("diagnosis") or "")
    if status in LIVE and diagnosis and diagnosis not in (health, "healthy"):  # else it says nothing more
        clipped = diagnosis if len(diagnosis) <= MAX_DIAGNOSIS else diagnosis[:MAX_DIAGNOSIS] + "…"
        line += f'<br><span style="color:#616161;font-size:90%">{escaped(clipped)}</span>'
    return line


def describe_learnings(view: FleetView) -> str:
    """The newest relayed learnings as HTML, each with its provenance and where it went."""
    learned = {lrn.learning_id: lrn for lrn in view.learnings}
    relayed: dict[str, list[Sync]] = defaultdict(list)
    for sync in view.syncs:
        relayed[sync.learning_id].append(sync)
    items = []
    for learning_id in list(relayed)[-MAX_LEARNINGS:]:
        syncs = relayed[learning_id]
        first, origin = syncs[0], learned.get(learning_id)
        source = f", {escaped(origin.source.replace('_', ' '))}" if origin is not None else ""
        where = f" observation {first.observation}" if first.observation >= 0 else ""
        recipients = ", ".join(f"{escaped(s.session)} <i>({escaped(s.status)})</i>" for s in syncs)
        text = first.text or (origin.text if origin is not None else "")
        items.append(
            f"<li><b>{escaped(first.source_task)}</b>{where}{source} → {recipients} "
            f"<i>[{escaped(first.urgency or '-')}]</i>: {escaped(text)}</li>"
        )
    return f"<b>relayed learnings</b><ul>{''.join(items)}</ul>" if items else "<i>no learnings relayed yet</i>"


def describe_stats(name: str, stats: dict[str, Any], *, ended: bool = False) -> str:
    """The fleet's counters, and the supervision loops' state when it is not well, as one HTML line."""
    counters = [
        f"{stats.get('watcher_cycles', 0)} watcher cycles",
        f"{stats.get('nudges_sent', 0)} nudges",
        f"{stats.get('learnings', 0)} learnings",
        f"{stats.get('syncs_relayed', 0)} syncs relayed",
        f"{stats.get('syncs_queued', 0)} queued",
        f"{stats.get('tasks_paused', 0)} paused ({stats.get('tasks_resumed', 0)} resumed)",
        f"{stats.get('tasks_aborted', 0)} aborted",
    ]
    if stats.get("tasks_lost"):
        counters.append(f"{stats['tasks_lost']} lost (their host stopped)")
    if stats.get("cost_usd"):
        counters.append(f"${float(stats['cost_usd']):.4f}")
    loops = stats.get("supervision") or {}
    if loops.get("degraded"):
        counters.append('<b style="color:#c62828">degraded: mechanical freshness checks only</b>')
    down = [loop for loop in ("watcher", "syncer") if loops and not loops.get(f"{loop}_alive", True)]
    if down and not ended:
        counters.append(f'<b style="color:#c62828">{" and ".join(down)} loop down (restarting)</b>')
    state = " <i>(ended)</i>" if ended else ""
    shown = stats.get("fleet") or name
    return f"<b>fleet {escaped(shown)}</b>{state} · {' · '.join(counters)}"
