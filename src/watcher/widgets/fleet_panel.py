"""``FleetDashboard``: a fleet in a notebook cell — one row per task, its buttons, the relayed learnings.

The dashboard reads the journal and writes commands to it, exactly as ``watcher fleet status`` and
``watcher fleet pause`` do from a terminal, so it works for a fleet run in this kernel or in
another process. It knows the fleet only through a ``FleetBoard`` (``watcher.runtime.host``):
the import-linter layers keep the kernel extension, which shows it, from importing the fleet.

Each row shows the task's health badge, status, iteration, last activity, nudges sent and ladder step, tokens (and cost
when the journal knows it) and the latest diagnosis, with Nudge (the text box's message), Pause,
Resume and Abort. Below: the learnings relayed between tasks with their provenance, and a line
of the fleet's counters. Everything shown comes from task output, which is untrusted: it is
redacted (secrets) and escaped (HTML) before it reaches a widget.

Threading, as for ``WatcherPanel``: widgets are written on the dashboard's loop only (the
notebook's runtime thread), the journal is read off it (``asyncio.to_thread``), and a click on
the kernel's main thread only hands the command over (``schedule``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as w

from watcher.core.errors import ConfigurationError
from watcher.core.logs import logger
from watcher.core.redact import redact
from watcher.runtime.fates import answer
from watcher.runtime.host import FleetBoard
from watcher.widgets._plain import TextBox
from watcher.widgets.fleet_html import LIVE, FleetView, describe_learnings, describe_row, describe_stats, escaped

__all__ = ["COMMANDS", "FleetDashboard"]

log = logger("watcher.widgets")

COMMANDS = ("nudge", "pause", "resume", "abort")
READ_SHARE = 5.0  # wait at least this many times the last journal read before the next


class _Row:
    """One task's line: the description, a message box and the four buttons."""

    def __init__(self, dashboard: FleetDashboard, task: str) -> None:
        self.task = task
        self.info = w.HTML(layout=w.Layout(width="100%"))
        self.message = w.Text(placeholder="nudge message", layout=w.Layout(width="220px"))
        self.buttons = {
            name: w.Button(description=name.title(), layout=w.Layout(width="80px"), tooltip=f"{name} {redact(task)}")
            for name in COMMANDS
        }
        for name, button in self.buttons.items():
            button.on_click(lambda _b, kind=name: dashboard.click(task, kind, self.message.value))
        controls = w.HBox([self.message, *self.buttons.values()])
        self.widget = w.VBox([self.info, controls], layout=w.Layout(border_bottom="1px solid #eceff1"))
        self.widget.add_class("watcher-fleet-task")

    def show(self, row: dict[str, Any], *, fleet_ended: bool) -> None:
        self.info.value = describe_row(row)
        status = str(row.get("status", ""))
        ended = fleet_ended or status not in LIVE
        paused = status == "paused"
        for name, button in self.buttons.items():
            wrong_state = (name == "pause" and paused) or (name == "resume" and not paused)
            button.disabled = ended or wrong_state


class FleetDashboard:
    """The live widget (``.widget``) of the fleet on ``board``.

    ``schedule`` runs a click's work on the dashboard's loop thread (the notebook host passes the
    runtime thread's ``call``); without it a click acts at once, on the caller's thread.
    """

    def __init__(self, board: FleetBoard, *, schedule: Callable[[Callable[[], None]], None] | None = None) -> None:
        self.board = board
        self._schedule = schedule or (lambda fn: fn())
        self.header = w.HTML(f"<b>fleet {escaped(board.name)}</b> · waiting for its first events")
        self.rows_box = w.VBox()
        self.learnings = w.HTML()
        self.notice = w.HTML()
        self.widget = TextBox(
            [self.header, self.rows_box, self.notice, self.learnings],
            layout=w.Layout(border="1px solid #d8e1e8", padding="4px"),
        )
        self.widget.add_class("watcher-fleet")  # for styling, and for browser tests to find it
        self.rows: dict[str, _Row] = {}
        self.refreshes = 0
        self._sent: tuple[int, str, str] | None = None  # the last command: id, session, what it asked
        self._task: asyncio.Task[None] | None = None

    # --- drawing (the dashboard's loop thread) --------------------------------------------------

    def refresh(self) -> None:
        """Read the journal again and redraw (blocking; the live loop reads off the loop instead)."""
        self.show(self.board.read(self.board.journal), ended=self.board.ended())

    def show(self, view: FleetView, *, ended: bool = False) -> None:
        """Redraw from ``view``: a row per task (new tasks appended), the counters, the learnings."""
        for row in view.rows():
            task = str(row["task"])
            if task not in self.rows:
                self.rows[task] = _Row(self, task)
                self.rows_box.children = [r.widget for r in self.rows.values()]
            self.rows[task].show(row, fleet_ended=ended)
        self.header.value = describe_stats(self.board.name, view.stats(), ended=ended)
        self.learnings.value = describe_learnings(view)
        self.refreshes += 1

    # --- commands --------------------------------------------------------------------------------

    def click(self, task: str, kind: str, message: str = "") -> None:
        """A button was clicked (kernel main thread): hand the command over and return."""

        def send() -> None:
            self.command(task, kind, message)

        self._schedule(send)

    def command(self, task: str, kind: str, message: str = "") -> int:
        """Write a ``nudge|pause|resume|abort`` command for ``task`` (0: nothing written); the fleet applies it."""
        if kind not in COMMANDS:
            raise ConfigurationError(f"unknown fleet command {kind!r}; expected one of {', '.join(COMMANDS)}")
        if kind == "nudge" and not message.strip():
            self.notice.value = "<i>type a message to nudge with</i>"
            return 0
        payload = {"message": message.strip()} if kind == "nudge" else {"reason": f"{kind} from the dashboard"}
        try:
            cid = self.board.journal.submit_command(self.board.command_prefix + task, kind, payload=payload)
        except Exception as exc:  # noqa: BLE001 - a click never raises into the frontend: it says why here
            self.notice.value = f"<i>{escaped(kind)} {escaped(task)} failed: {escaped(exc)}</i>"
            return 0
        self.notice.value = f"<i>{escaped(kind)} {escaped(task)}: sent (command {cid})</i>"
        self._sent = (cid, self.board.command_prefix + task, f"{kind} {task}")
        return cid

    def _outcome(self) -> tuple[int, str] | None:
        """How the fleet answered the last command sent from here, once it did (off the loop)."""
        if self._sent is None:
            return None
        cid, session, what = self._sent
        answered = answer(self.board.journal.commands(sessions=[session], status=None, after=cid - 1), cid)
        if answered is None:
            return None
        detail = f" ({answered.detail})" if answered.detail else ""
        return cid, f"{what}: {answered.state}{detail}"

    # --- living ----------------------------------------------------------------------------------

    def start(self, interval: float = 1.0) -> FleetDashboard:
        """Refresh every ``interval`` seconds on the running loop until the fleet ends (or ``stop``)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._live(interval), name="fleet-dashboard")
        return self

    def stop(self) -> None:
        """Stop refreshing (call on the dashboard's loop)."""
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _show_outcome(self) -> None:
        answered = await asyncio.to_thread(self._outcome)
        if answered is not None and self._sent is not None and answered[0] == self._sent[0]:
            self._sent = None
            self.notice.value = f"<i>{escaped(answered[1])}</i>"

    async def _live(self, interval: float) -> None:
        failures = 0
        while True:
            ended = self.board.ended()  # read before the journal: the last refresh shows the end
            began = time.monotonic()
            try:
                view = await asyncio.to_thread(self.board.read, self.board.journal)
            except Exception as exc:  # noqa: BLE001 - a busy or closed journal: say so, try again
                failures += 1
                if failures == 1:
                    log.warning("fleet dashboard: reading %s failed: %s", self.board.journal.where, exc)
                self.notice.value = f"<i>cannot read the journal right now: {escaped(exc)}</i>"
                if ended:  # the fleet is over and its journal may be closed: nothing more will come
                    self._task = None
                    return
            else:
                failures = 0
                with contextlib.suppress(Exception):  # a widget closed under us: nothing left to draw
                    self.show(view, ended=ended)
                    await self._show_outcome()
                if ended:
                    self._task = None
                    return
            # a long journal makes each read slower: then refresh less often, so the dashboard
            # never spends more than about a fifth of its time reading
            await asyncio.sleep(max(interval, READ_SHARE * (time.monotonic() - began)))
