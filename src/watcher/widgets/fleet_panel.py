"""``FleetDashboard``: a fleet in a notebook cell — one row per task, its buttons, the relayed learnings.

The dashboard reads the journal (``watcher.fleet.query``) and writes commands to it, exactly as
``watcher fleet status`` and ``watcher fleet pause`` do from a terminal: it works for a fleet run
in this kernel or in another process. Each row shows the task's health badge, status, iteration,
last activity, nudges and tokens, with Nudge (the text box's message), Pause, Resume and Abort.
``start()`` refreshes it every ``interval`` seconds on the running loop until ``stop()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
from typing import Any

import ipywidgets as w

from watcher.fleet import COMMAND_PREFIX
from watcher.fleet.query import read_fleet
from watcher.runtime.journal import Journal

__all__ = ["FleetDashboard"]

_BADGE = {
    "healthy": "#2e7d32",
    "fresh": "#2e7d32",
    "stale": "#f9a825",
    "stuck": "#ef6c00",
    "very_stale": "#c62828",
    "paused": "#6a1b9a",
    "degraded": "#616161",
}


class _Row:
    """One task's line: a badge and counters, a message box and four buttons."""

    def __init__(self, dashboard: FleetDashboard, task: str) -> None:
        self.task = task
        self.info = w.HTML()
        self.message = w.Text(placeholder="nudge message", layout=w.Layout(width="220px"))
        self.buttons = {
            name: w.Button(description=name.title(), layout=w.Layout(width="80px"))
            for name in ("nudge", "pause", "resume", "abort")
        }
        for name, button in self.buttons.items():
            button.on_click(lambda _b, kind=name: dashboard.command(task, kind, self.message.value))
        self.widget = w.HBox([self.info, self.message, *self.buttons.values()])

    def show(self, row: dict[str, Any]) -> None:
        colour = _BADGE.get(row["health"], "#9e9e9e")
        idle = "-" if row["last_activity_s"] is None else f"{row['last_activity_s']:.0f}s ago"
        self.info.value = (
            f'<span style="background:{colour};color:white;padding:1px 6px;border-radius:8px">{html.escape(row["health"])}</span> '
            f"<b>{html.escape(self.task)}</b> {html.escape(row['status'])} · iteration {row['iteration']} · {idle} · "
            f"{row['nudges']} nudge(s) · {row['tokens']} tokens"
        )
        ended = row["status"] not in ("running", "paused")
        paused = row["status"] == "paused"
        for name, button in self.buttons.items():
            wrong_state = (name == "pause" and paused) or (name == "resume" and not paused)
            button.disabled = ended or wrong_state


class FleetDashboard:
    """The widget (``.widget``) of the fleet journaling to ``journal``."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.header = w.HTML("<b>fleet</b>")
        self.rows_box = w.VBox()
        self.learnings = w.HTML()
        self.notice = w.HTML()
        self.widget = w.VBox(
            [self.header, self.rows_box, self.notice, self.learnings],
            layout=w.Layout(border="1px solid #d8e1e8", padding="4px"),
        )
        self.rows: dict[str, _Row] = {}
        self._task: asyncio.Task[None] | None = None

    def refresh(self) -> None:
        """Read the journal again and redraw."""
        view = read_fleet(self.journal)
        for row in view.rows():
            if row["task"] not in self.rows:
                self.rows[row["task"]] = _Row(self, row["task"])
                self.rows_box.children = [r.widget for r in self.rows.values()]
            self.rows[row["task"]].show(row)
        stats = view.stats()
        self.header.value = (
            f"<b>fleet</b> · {stats['watcher_cycles']} cycles · {stats['nudges_sent']} nudges · "
            f"{stats['syncs_relayed']} syncs relayed · {stats['tasks_paused']} paused · {stats['tasks_aborted']} aborted"
        )
        items = "".join(
            f"<li>{html.escape(s.source_task)} → {html.escape(s.session)} "
            f"<i>({html.escape(s.urgency or '-')}, {html.escape(s.status)})</i>: {html.escape(s.text)}</li>"
            for s in view.syncs[-10:]
        )
        self.learnings.value = f"<b>relayed learnings</b><ul>{items}</ul>" if items else ""

    def command(self, task: str, kind: str, message: str = "") -> int:
        """Write a ``nudge|pause|resume|abort`` command for ``task``; the fleet applies it."""
        if kind == "nudge" and not message.strip():
            self.notice.value = "<i>type a message to nudge with</i>"
            return 0
        payload = {"message": message.strip()} if kind == "nudge" else {"reason": f"{kind} from the dashboard"}
        cid = self.journal.submit_command(COMMAND_PREFIX + task, kind, payload=payload)
        self.notice.value = f"<i>{html.escape(kind)} {html.escape(task)}: sent (command {cid})</i>"
        return cid

    def start(self, interval: float = 1.0) -> FleetDashboard:
        """Refresh every ``interval`` seconds on the running event loop."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop(interval), name="fleet-dashboard")
        return self

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _loop(self, interval: float) -> None:
        while True:
            with contextlib.suppress(Exception):  # a journal busy for a moment: the next refresh shows it
                await asyncio.to_thread(self.refresh)
            await asyncio.sleep(interval)
