"""The notebook host for fleets: ``watcher.fleet(...)`` in a cell runs on the runtime thread, shown live.

``%load_ext watcher`` registers a ``NotebookFleets`` as the process's ``NotebookHost``
(``watcher.runtime.host``). The fleet package, a layer below, asks it for the loop to run on (the
runtime thread's, so a blocking cell never stalls the fleet), for the default journal (the
notebook's) and to show the fleet's dashboard in the cell that started it. This module never
imports the fleet: the dashboard knows it only through the ``FleetBoard`` it is handed.
"""

from __future__ import annotations

import asyncio

from IPython.display import display

from watcher.core.logs import logger
from watcher.kernel_ext.loop import RuntimeThread
from watcher.runtime.host import FleetBoard
from watcher.runtime.journal import Journal
from watcher.widgets.fleet_panel import FleetDashboard

__all__ = ["CLOSE_TIMEOUT_S", "NotebookFleets"]

log = logger("watcher.kernel")

CLOSE_TIMEOUT_S = 15.0


class NotebookFleets:
    """The fleets started and the dashboards shown in this kernel (a ``NotebookHost``)."""

    def __init__(self, thread: RuntimeThread, *, refresh_s: float = 1.0) -> None:
        self.thread = thread
        self.refresh_s = refresh_s
        self.dashboards: list[FleetDashboard] = []

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The runtime thread's loop."""
        return self.thread.loop

    @property
    def journal(self) -> Journal:
        """The notebook's journal."""
        return self.thread.journal

    def present_fleet(self, board: FleetBoard) -> None:
        """Show ``board``'s dashboard in the current cell; it refreshes on the runtime thread."""
        dashboard = FleetDashboard(board, schedule=self.thread.call)
        self.dashboards.append(dashboard)
        display(dashboard.widget)  # type: ignore[no-untyped-call]
        self.thread.call(dashboard.start, self.refresh_s)

    def close(self) -> None:
        """Close the fleets started here (and journals opened to show one), stop the dashboards.

        Called before the runtime thread stops, so a fleet on it ends cleanly (its tasks aborted).
        """
        dashboards, self.dashboards = self.dashboards, []
        if not dashboards or not self.thread.alive:
            return
        try:
            self.thread.wait(self._close(dashboards), CLOSE_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - unloading never raises into %unload_ext or atexit
            log.warning("closing the notebook's fleets failed: %s", exc)

    async def _close(self, dashboards: list[FleetDashboard]) -> None:
        closing = [d.board.close() for d in dashboards if d.board.close is not None]
        for outcome in await asyncio.gather(*closing, return_exceptions=True):
            if isinstance(outcome, BaseException):
                log.warning("closing a fleet's dashboard failed: %s", outcome)
        for dashboard in dashboards:
            dashboard.stop()
