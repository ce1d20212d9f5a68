"""``watcher.fleet(...)``: start a fleet from one call, on the loop where it can live, and show it.

``watcher.fleet`` is a package, so the call goes through the module's class: ``install`` swaps
the package module's class for ``CallableModule``, whose ``__call__`` is ``launch``. In a notebook
with ``%load_ext watcher`` the fleet runs on the extension's runtime thread (cells stay free, the
dashboard stays live while a cell blocks) and journals to the notebook's journal; the dashboard
is shown by the notebook host (``watcher.runtime.host``), the layer above that owns the widgets.
Elsewhere it runs on the caller's running loop, or, when none runs, on a loop thread of its own.

The call returns a ``LaunchedFleet``: a ``Fleet`` whose ``wait`` and ``close`` may be awaited from
any loop (a notebook cell's ``await f.wait()`` runs on the kernel's loop, the fleet on another).
It ends by itself once every task has ended.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import sys
import threading
import types
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

from watcher.agents import RunResult
from watcher.core.errors import ConfigurationError, WatcherError
from watcher.fleet.fleet import COMMAND_PREFIX, Fleet
from watcher.fleet.learnings import Extractor
from watcher.fleet.query import FleetView, read_fleet
from watcher.fleet.tasks import FleetConfig, TaskSpec, load_tasks
from watcher.fleet.watch import Evaluator
from watcher.runtime.host import FleetBoard, notebook_host
from watcher.runtime.journal import Journal, JournalRow

__all__ = ["CallableModule", "LaunchedFleet", "install", "launch", "show"]

log = logging.getLogger("watcher.fleet")

T = TypeVar("T")
Results = dict[str, RunResult | BaseException]

START_TIMEOUT_S = 30.0
HINT = "run `%load_ext watcher` in a notebook first to see its live dashboard"


class LaunchedFleet(Fleet):
    """A ``Fleet`` living on one loop (its *home*) that callers on any loop may wait for and close."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.first_event = self.journal.last_id()  # this fleet's events come after it
        self.home: asyncio.AbstractEventLoop | None = None
        self._started: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._finished: concurrent.futures.Future[Results] = concurrent.futures.Future()
        self._closing: asyncio.Future[None] | None = None

    @property
    def ended(self) -> bool:
        """True once every task ended and the loops stopped, or the fleet was closed."""
        return self._finished.done() or (self._closing is not None and self._closing.done())

    async def wait(self) -> Results:
        """Wait (from any loop) until every task ended; the fleet's loops are stopped by then."""
        return await asyncio.wrap_future(self._finished)

    async def close(self) -> None:
        """Stop the fleet (from any loop): abort tasks still running, stop its loops; safe to repeat."""
        if self.home is None or self.home.is_closed() or self._finished.done():
            return  # never started here, its loop is gone, or it ended (and ``Fleet.wait`` closed it)
        await self._at_home(self._close_once())

    async def _close_once(self) -> None:
        if self._closing is None:
            self._closing = asyncio.ensure_future(Fleet.close(self))
        await asyncio.shield(self._closing)

    async def _at_home(self, coro: Coroutine[Any, Any, T]) -> T:
        assert self.home is not None
        if asyncio.get_running_loop() is self.home:
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.home))

    async def _live(self) -> None:
        """On the home loop: start, then wait for every task; the outcome lands in ``_finished``."""
        if self._closing is not None:  # closed before its loop got to start it: it never runs
            self._finished.set_result({})
            return
        try:
            await Fleet.start(self)
        except BaseException as exc:
            with contextlib.suppress(Exception):  # what started before the failure stops again
                await self._close_once()
            self._finished.set_exception(exc)
            raise
        self._started.set_result(None)
        try:
            self._finished.set_result(await Fleet.wait(self))
        except BaseException as exc:  # cancelled with its loop, or a fleet bug: waiters hear of it
            if not self._finished.done():
                self._finished.set_exception(exc)
            raise


class _Since:
    """A journal as ``read_fleet`` sees it from one fleet's first event on.

    A notebook's journal keeps every fleet run in it; a cell run twice starts tasks with the same
    names, and the dashboard of the new fleet must not show the old one's ends and counters.
    Reads start after ``first``; anything else goes to the journal itself.
    """

    def __init__(self, journal: Journal, first: int) -> None:
        self.journal = journal
        self.first = first

    def read(self, after: int = 0, **options: Any) -> list[JournalRow]:
        return self.journal.read(max(after, self.first), **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.journal, name)


def reader_since(first: int) -> Callable[[Journal], FleetView]:
    """``read_fleet`` limited to the events after ``first`` (the board of a fleet started here)."""

    def read(journal: Journal) -> FleetView:
        return read_fleet(cast(Journal, _Since(journal, first)))  # read_fleet only reads rows

    return read


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
    )
    host = notebook_host()
    try:
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    own = host is None and running is None
    fleet.home = host.loop if host is not None else running if running is not None else _own_loop()
    _start(fleet, running, stop_after=own)
    board = FleetBoard(
        fleet.config.name,
        fleet.journal,
        reader_since(fleet.first_event),
        COMMAND_PREFIX,
        ended=lambda: fleet.ended,
        close=fleet.close,
    )
    if host is not None:
        host.present_fleet(board)
    else:
        print(f"watcher: fleet {fleet.config.name!r} started with {len(specs)} task(s); {HINT}", file=sys.stderr)
    return fleet


def _start(fleet: LaunchedFleet, running: asyncio.AbstractEventLoop | None, *, stop_after: bool) -> None:
    """Start ``fleet`` on its home loop; from another thread, wait until it started (or failed)."""
    home = fleet.home
    assert home is not None
    if home is running:  # the caller's own loop: the fleet starts once the caller yields
        running.create_task(fleet._live(), name="watcher-fleet").add_done_callback(_reporter(fleet, always=True))
        return
    live = asyncio.run_coroutine_threadsafe(fleet._live(), home)
    live.add_done_callback(_reporter(fleet, always=False))
    if stop_after:  # the loop is the fleet's own: it stops once the fleet is over
        live.add_done_callback(lambda _: home.call_soon_threadsafe(home.stop))
    either: list[concurrent.futures.Future[Any]] = [fleet._started, fleet._finished]
    concurrent.futures.wait(either, START_TIMEOUT_S, concurrent.futures.FIRST_COMPLETED)
    failed = fleet._finished.exception() if fleet._finished.done() else None
    if failed is not None:
        if isinstance(failed, WatcherError):
            raise failed  # already says what was wrong and what to do
        raise ConfigurationError(f"the fleet could not start: {type(failed).__name__}: {failed}") from failed


def _reporter(fleet: LaunchedFleet, *, always: bool) -> Callable[[Any], None]:
    """A callback saying so when the fleet fails in the background (the caller may never await it).

    A failure to start that ``launch`` raised to its caller (``always`` False) is not said twice.
    """

    def report(done: asyncio.Future[None] | concurrent.futures.Future[None]) -> None:
        if done.cancelled() or (not always and not fleet._started.done()):
            return
        exc = done.exception()
        if exc is not None:
            print(f"watcher: fleet {fleet.config.name!r} stopped: {type(exc).__name__}: {exc}", file=sys.stderr)

    return report


def show(journal: Journal | str | os.PathLike[str] | None = None, *, name: str = "fleet") -> None:
    """Show the live dashboard of a fleet journaling to ``journal`` (run in this or another process)."""
    host = notebook_host()
    if host is None:
        raise ConfigurationError(f"watcher.fleet.show() shows a notebook widget: {HINT}")
    found = _journal(journal)
    if isinstance(found, Journal):
        host.present_fleet(FleetBoard(name, found, read_fleet, COMMAND_PREFIX))
        return
    opened = Journal(Path(found))  # opened for the dashboard: closed with the host

    async def release() -> None:
        await asyncio.to_thread(opened.close)

    host.present_fleet(FleetBoard(name, opened, read_fleet, COMMAND_PREFIX, close=release))


class CallableModule(types.ModuleType):
    """The ``watcher.fleet`` package, callable: ``watcher.fleet(tasks, ...)`` is ``launch``."""

    def __call__(self, tasks: Any, /, **options: Any) -> LaunchedFleet:
        return launch(tasks, **options)


def install(module_name: str) -> None:
    """Make the module ``module_name`` (the ``watcher.fleet`` package) callable."""
    sys.modules[module_name].__class__ = CallableModule
