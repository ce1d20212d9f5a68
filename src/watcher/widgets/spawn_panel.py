"""``SpawnPanel``: a spawn's phases live in a notebook cell, then its report.

Pass the panel as ``on_progress`` (``await watcher.spawn.spawn(task, on_progress=panel)``, or
``spawn_with_panel``): each progress snapshot updates the phase, elapsed time, files written and
read, the last tool, interjections and denials, at most ``MAX_FLUSHES_PER_S`` times a second;
``finish(result)`` shows the report with the pull request's link.
"""

from __future__ import annotations

import html
import time
from typing import Any

import ipywidgets as w

from watcher.spawn import SpawnConfig, SpawnResult, run_spawn
from watcher.spawn.monitor import ProgressState
from watcher.widgets._plain import TextBox
from watcher.widgets.panel import MAX_FLUSHES_PER_S

__all__ = ["SpawnPanel", "spawn_with_panel"]

_PHASES = ("evaluate", "provision", "execute", "integrate", "report")


class SpawnPanel:
    """The widget (``.widget``) and the progress callback of one spawn."""

    def __init__(self, task: str = "") -> None:
        self.title = w.HTML(f"<b>spawn</b> {html.escape(task[:120])}")
        self.status = w.HTML("<i>starting…</i>")
        self.files = w.HTML("")
        self.report = w.HTML("")
        self.widget = TextBox(
            [self.title, self.status, self.files, self.report],
            layout=w.Layout(border="1px solid #d8e1e8", padding="4px"),
        )
        self._last = 0.0
        self.updates = 0

    def __call__(self, state: ProgressState) -> None:
        now = time.monotonic()
        if now - self._last < 1 / MAX_FLUSHES_PER_S:
            return
        self._last = now
        self.updates += 1
        phase = state.phase.split()[0]
        steps = " → ".join(f"<b>{p}</b>" if p == phase else p for p in _PHASES)
        extra = f", last tool {html.escape(state.last_tool)}" if state.last_tool else ""
        extra += f", {state.interjections} interjection(s)" if state.interjections else ""
        extra += f", {len(state.permission_errors)} denied" if state.permission_errors else ""
        self.status.value = f"{steps} · {state.elapsed_s:.1f}s · {state.output_lines} lines{extra}"
        written = "".join(f"<li><code>{html.escape(p)}</code></li>" for p in list(state.files_written)[-10:])
        self.files.value = f"<ul>{written}</ul>" if written else ""

    def finish(self, result: SpawnResult) -> None:
        """Show the outcome: status, the PR link, the files, the report."""
        link = (
            f' · <a href="{html.escape(result.pr.url)}" target="_blank">PR #{result.pr.number}</a>' if result.pr else ""
        )
        self.status.value = f"<b>{html.escape(result.status)}</b> in {result.duration_s:.1f}s{link}"
        self.files.value = (
            "<ul>"
            + "".join(
                f"<li><code>{html.escape(f.path)}</code> (+{f.added}, −{f.removed}) {html.escape(f.summary)}</li>"
                for f in result.files
            )
            + "</ul>"
        )
        self.report.value = f"<details><summary>report</summary><pre>{html.escape(result.markdown())}</pre></details>"


async def spawn_with_panel(task: str, **options: Any) -> SpawnResult:
    """``watcher.spawn.spawn`` with a ``SpawnPanel`` displayed in the current cell."""
    from IPython.display import display

    panel = SpawnPanel(task)
    display(panel.widget)  # type: ignore[no-untyped-call]
    result = await run_spawn(SpawnConfig(task, on_progress=panel, **options))
    panel.finish(result)
    return result
