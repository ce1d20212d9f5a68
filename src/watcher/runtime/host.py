"""The notebook host: where work started by a call in a notebook cell runs, and how it shows itself.

``watcher.fleet(...)`` called in a cell must run on the kernel extension's runtime thread (the
kernel's own loop is blocked while a synchronous cell runs) and show its dashboard in the cell,
yet the import-linter layers keep ``watcher.fleet`` from importing the kernel extension or its
widgets. So the extension, when loaded, registers a ``NotebookHost`` here (``set_notebook_host``)
and the fleet asks ``notebook_host()``: a layer above lends the loop, the journal and the display
to a layer below, without an upward import. No host (plain Python, or no ``%load_ext watcher``)
means the caller runs on its own loop and shows nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from watcher.runtime.journal import Journal

__all__ = ["FleetBoard", "NotebookHost", "notebook_host", "set_notebook_host"]


@dataclass(frozen=True, slots=True)
class FleetBoard:
    """What a dashboard needs to show a fleet and command its tasks, whichever process runs it.

    ``read(journal)`` returns the fleet's view (``watcher.fleet.query.read_fleet``); commands for a
    task go to the journal under ``command_prefix + task``. ``ended()`` turns true once the fleet
    is over (the dashboard then refreshes a last time and stops). ``close`` is what the host calls
    when it goes away: it ends a fleet started in this process, or closes a journal opened only to
    show a fleet running elsewhere (None: nothing to release).
    """

    name: str
    journal: Journal
    read: Callable[[Journal], Any]
    command_prefix: str
    ended: Callable[[], bool] = lambda: False
    close: Callable[[], Awaitable[None]] | None = None


class NotebookHost(Protocol):
    """A notebook's kernel extension, as the layers below it see it."""

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The runtime thread's loop: background work started from a cell runs here."""
        ...

    @property
    def journal(self) -> Journal:
        """The notebook's journal (the default for what a cell starts)."""
        ...

    def present_fleet(self, board: FleetBoard) -> None:
        """Show a live dashboard of ``board`` in the current cell's output; returns at once."""
        ...


_host: NotebookHost | None = None


def set_notebook_host(host: NotebookHost | None) -> None:
    """Register ``host`` (None: no notebook); ``%load_ext watcher`` and ``%unload_ext watcher`` call it."""
    global _host
    _host = host


def notebook_host() -> NotebookHost | None:
    """The notebook host registered in this process, if any."""
    return _host
