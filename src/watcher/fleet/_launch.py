"""``watcher.fleet(...)``: start a fleet from one call, on the loop where it can live, and show it.

``watcher.fleet`` is a package, so the call goes through the module's class: ``install`` swaps
the package module's class for ``CallableModule``, whose ``__call__`` is ``launch``. In a notebook
with ``%load_ext watcher`` the fleet runs on the extension's runtime thread (cells stay free, the
dashboard stays live while a cell blocks) and journals to the notebook's journal; the dashboard
is shown by the notebook host (``watcher.runtime.host``), the layer above that owns the widgets.
Elsewhere it runs on the caller's running loop, or, when none runs, on a loop thread of its own.

The call returns a running ``LaunchedFleet`` (``_launched``): a ``Fleet`` whose ``wait`` and
``close`` may be awaited from any loop, and that ends by itself once every task has ended.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from watcher.core.errors import ConfigurationError
from watcher.core.evaluation import Evaluator
from watcher.fleet._launched import LaunchedFleet, begin, reader_since
from watcher.fleet.learnings import Extractor
from watcher.fleet.monitor import TurnExtractor
from watcher.fleet.query import FleetView, read_fleet
from watcher.fleet.supervisor import COMMAND_PREFIX
from watcher.fleet.tasks import FleetConfig, TaskSpec, load_tasks
from watcher.runtime.host import FleetBoard, notebook_host
from watcher.runtime.journal import Journal

__all__ = ["CallableModule", "LaunchedFleet", "install", "launch", "show"]

HINT = "run `%load_ext watcher` in a notebook first to see its live dashboard"


def _own_loop() -> asyncio.AbstractEventLoop:
    """A loop on a daemon thread of its own, for a caller with none running (plain Python)."""
    loop = asyncio.new_event_loop()

    def main() -> None:
        try:
            loop.run_forever()
        finally:
            loop.close()

    threading.Thread(target=main, name="watcher-fleet", daemon=True).start()
    return loop


def _specs(tasks: Any, tools: Mapping[str, Callable[..., Any]] | None) -> tuple[list[TaskSpec], FleetConfig | None]:
    """The tasks (and a tasks file's ``[fleet]`` settings) from what the caller passed."""
    if isinstance(tasks, str | os.PathLike):
        file_config, specs = load_tasks(Path(tasks), tools=tools)
        return specs, file_config
    if tools is not None:
        raise ConfigurationError(
            "watcher.fleet(): tools= names the tools of a tasks file; with TaskSpecs, give each its own tools="
        )
    if isinstance(tasks, TaskSpec):
        tasks = [tasks]
    if not isinstance(tasks, Sequence) or isinstance(tasks, bytes):
        raise ConfigurationError(
            f"watcher.fleet() takes a tasks file (a TOML path) or a list of TaskSpec, not {type(tasks).__name__}"
        )
    if not tasks:
        raise ConfigurationError(
            "watcher.fleet() got no tasks: pass a tasks file or a list of at least one "
            "watcher.fleet.TaskSpec(name, prompt, ...)"
        )
    wrong = [(i, type(t).__name__) for i, t in enumerate(tasks) if not isinstance(t, TaskSpec)]
    if wrong:
        i, kind = wrong[0]
        raise ConfigurationError(
            f"watcher.fleet(): task {i} is of type {kind}, not a TaskSpec; build tasks with "
            "watcher.fleet.TaskSpec(name, prompt, tools=..., tags=...)"
        )
    return list(tasks), None


def _journal(journal: Any) -> Journal | str | os.PathLike[str]:
    if journal is None:
        host = notebook_host()
        if host is None:
            raise ConfigurationError(
                "watcher.fleet() needs a journal: pass journal= (a path or a watcher.Journal), "
                "or run `%load_ext watcher` in a notebook to use the notebook's journal"
            )
        return host.journal
    if not isinstance(journal, Journal | str | os.PathLike):
        raise ConfigurationError(
            f"watcher.fleet(): journal= takes a path or a watcher.Journal, not {type(journal).__name__}"
        )
    return journal


def launch(
    tasks: str | os.PathLike[str] | TaskSpec | Sequence[TaskSpec],
    *,
    config: FleetConfig | None = None,
    journal: Journal | str | os.PathLike[str] | None = None,
    client: Any = None,
    base_url: str | None = None,
    api_key: str | None = None,
    evaluator: Evaluator | None = None,
    extractor: Extractor | None = None,
    turn_extractor: TurnExtractor | None = None,
    tools: Mapping[str, Callable[..., Any]] | None = None,
) -> LaunchedFleet:
    """Start a fleet of ``tasks`` (a TOML tasks file or ``TaskSpec``s) and return it, running.

    ``config`` overrides a tasks file's ``[fleet]`` settings; ``journal`` defaults to the
    notebook's. In a notebook with ``%load_ext watcher`` its dashboard appears in the cell.
    """
    specs, file_config = _specs(tasks, tools)
    if config is not None and not isinstance(config, FleetConfig):
        raise ConfigurationError(f"watcher.fleet(): config= takes a FleetConfig, not {type(config).__name__}")
    fleet = LaunchedFleet(
        specs,
        config=config or file_config,
        journal=_journal(journal),
        client=client,
        base_url=base_url,
        api_key=api_key,
        evaluator=evaluator,
        extractor=extractor,
        turn_extractor=turn_extractor,
    )
    host = notebook_host()
    try:
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    own = host is None and running is None
    fleet.home = host.loop if host is not None else running if running is not None else _own_loop()
    begin(fleet, running, stop_after=own)
    if host is None:
        print(f"watcher: fleet {fleet.config.name!r} started with {len(specs)} task(s); {HINT}", file=sys.stderr)
        return fleet
    read = reader_since(fleet.first_event, fleet.config.name)
    host.present_fleet(
        FleetBoard(fleet.config.name, fleet.journal, read, COMMAND_PREFIX, ended=lambda: fleet.ended, close=fleet.close)
    )
    return fleet


def show(journal: Journal | str | os.PathLike[str] | None = None, *, fleet: str | None = None) -> None:
    """Show the live dashboard of fleet ``fleet`` (default: the latest) journaling to ``journal``.

    The fleet may run in this process or another (``watcher fleet run`` in a terminal); the
    journal defaults to the notebook's.
    """
    host = notebook_host()
    if host is None:
        raise ConfigurationError(f"watcher.fleet.show() shows a notebook widget: {HINT}")
    found = _journal(journal)

    def read(j: Journal) -> FleetView:
        return read_fleet(j, fleet)

    name = fleet or "latest"
    if isinstance(found, Journal):
        host.present_fleet(FleetBoard(name, found, read, COMMAND_PREFIX))
        return
    opened = Journal(found)  # opened for the dashboard: closed with the host

    async def release() -> None:
        await asyncio.to_thread(opened.close)

    host.present_fleet(FleetBoard(name, opened, read, COMMAND_PREFIX, close=release))


class CallableModule(types.ModuleType):
    """The ``watcher.fleet`` package, callable: ``watcher.fleet(tasks, ...)`` is ``launch``."""

    def __call__(self, tasks: Any, /, **options: Any) -> LaunchedFleet:
        return launch(tasks, **options)


def install(module_name: str) -> None:
    """Make the module ``module_name`` (the ``watcher.fleet`` package) callable."""
    sys.modules[module_name].__class__ = CallableModule
