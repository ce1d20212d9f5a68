"""``LaunchedFleet``: a fleet started by ``watcher.fleet(...)``, living on one loop, awaited from any.

In a notebook the fleet lives on the runtime thread's loop while a cell's ``await f.wait()`` runs
on the kernel's loop: ``wait`` and ``close`` cross over (``asyncio.run_coroutine_threadsafe``),
and the outcome is a thread-safe future. The fleet ends by itself once every task has ended
(``Fleet.wait`` stops its loops), and ``close`` is safe to call any number of times, from anywhere.
``begin`` starts one on its home loop; ``reader_since`` is the dashboard's view of its events only.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar, cast

from watcher.agents import RunResult
from watcher.core.errors import ConfigurationError, WatcherError
from watcher.fleet.fleet import Fleet
from watcher.fleet.query import FleetView, read_fleet
from watcher.runtime.journal import Journal, JournalRow

__all__ = ["START_TIMEOUT_S", "LaunchedFleet", "begin", "reader_since"]

T = TypeVar("T")
Results = dict[str, RunResult | BaseException]

START_TIMEOUT_S = 30.0


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

    A notebook's journal keeps every fleet run in it; a cell run twice starts a fleet of the same
    name with the same tasks, and the new one's dashboard must not show the old one's ends and counters.
    Reads start after ``first``; anything else goes to the journal itself.
    """

    def __init__(self, journal: Journal, first: int) -> None:
        self.journal = journal
        self.first = first

    def read(self, after: int = 0, **options: Any) -> list[JournalRow]:
        return self.journal.read(max(after, self.first), **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.journal, name)


def reader_since(first: int, fleet: str) -> Callable[[Journal], FleetView]:
    """``read_fleet`` of ``fleet`` limited to the events after ``first`` (the board of a fleet started here)."""

    def read(journal: Journal) -> FleetView:
        return read_fleet(cast(Journal, _Since(journal, first)), fleet)  # read_fleet only reads rows

    return read


def begin(fleet: LaunchedFleet, running: asyncio.AbstractEventLoop | None, *, stop_after: bool) -> None:
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
