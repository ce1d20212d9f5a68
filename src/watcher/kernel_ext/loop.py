"""The runtime thread: one daemon thread with its own asyncio loop, hosting the ``Runtime``.

The kernel's own loop is blocked while a synchronous cell runs, so watchers, widget updates and
agent runs live on this thread instead. Everything the kernel's main thread hands over goes
through ``call`` (fire and forget, ``call_soon_threadsafe``) or ``submit`` (a concurrent future);
neither waits on a watcher. ``wait`` is the one blocking convenience, for magics that must show
a settled state; it works inside a running kernel without ``nest_asyncio``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TypeVar

from watcher.core.errors import RuntimeThreadError
from watcher.core.logs import logger
from watcher.runtime.calls import LoopCalls
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Journal

__all__ = ["RuntimeThread"]

log = logger("watcher.kernel")

T = TypeVar("T")


class RuntimeThread:
    """Owns the runtime thread, its loop, the journal and the ``Runtime`` living on it."""

    def __init__(self, journal_path: str | Path | None = None) -> None:
        self.journal = Journal(journal_path)
        self.loop = asyncio.new_event_loop()
        self.runtime: Runtime | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="watcher-runtime", daemon=True)
        self._thread.start()
        self.calls = LoopCalls(self.loop)
        if self._thread.ident is not None:
            self.calls.enter(self._thread.ident)
        if not self._ready.wait(10):
            raise RuntimeThreadError(
                "the watcher runtime thread did not start within 10 s; the kernel may be overloaded: "
                "try %load_ext watcher again"
            )

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._start())
        self._ready.set()
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    async def _start(self) -> None:
        self.runtime = Runtime(journal=self.journal)
        self.runtime.start_command_poller()  # a language server's or another kernel's commands apply here

    @property
    def alive(self) -> bool:
        """True while the loop runs."""
        return self._thread.is_alive() and not self.loop.is_closed()

    def call(self, fn: Callable[..., object], *args: object) -> None:
        """Run ``fn(*args)`` on the runtime thread soon; returns at once."""
        self.calls.call_soon(fn, *args)

    def submit(self, coro: Coroutine[object, None, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the runtime loop; returns a future the caller may ignore."""
        return self.calls.schedule(coro)

    def wait(self, coro: Coroutine[object, None, T], timeout: float = 10.0) -> T:
        """Run ``coro`` on the runtime loop and block until it finishes (never from the runtime thread)."""
        return self.calls.wait(coro, timeout)

    def stop(self, timeout: float = 10.0) -> None:
        """Close the runtime (settle, flush the journal), stop the loop and join the thread.

        An evaluation still running after ``timeout`` is cancelled: the journal writer is flushed
        and closed below all the same, so what was published (the session's end) is kept.
        """
        if not self.alive:
            return
        runtime = self.runtime
        if runtime is not None:
            closing = self.submit(runtime.close())
            try:
                closing.result(timeout)
            except TimeoutError:
                log.warning("the watchers were still evaluating after %g s; their evaluations were cancelled", timeout)
                self.loop.call_soon_threadsafe(_cancel_all, self.loop)
                with contextlib.suppress(Exception):
                    closing.result(timeout)
            except RuntimeError as exc:
                # at interpreter exit the default executor is gone before atexit runs, so the
                # runtime's last asyncio.to_thread fails; the journal is flushed below instead
                log.debug("closing the watcher runtime: %s", exc)
            except Exception as exc:  # noqa: BLE001 - stopping must not raise into %unload_ext or atexit
                log.warning("closing the watcher runtime failed: %s", exc)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        self.journal.close()


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    for task in asyncio.all_tasks(loop):
        task.cancel()
