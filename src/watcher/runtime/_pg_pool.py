"""The journal's PostgreSQL connections: psycopg_pool's pool with its reconnection backoff capped,
and a watchdog that bounds how long a statement waits for a server that does not answer.

When the server goes away, psycopg_pool tries to reconnect with an exponential backoff that has
no ceiling (1, 2, 4, 8 ... seconds). After an outage of a minute its next try would come half a
minute after the server is back, and every journal call would wait for it: a supervisor's lease
renewal, a task's event, a person's command. Capped, the pool tries about once a second while the
server is away and is back within a second of it.

A server that is hung (stopped, or a host whose kernel still acknowledges packets while nothing
answers) fails no TCP timeout: a statement sent to it would wait for ever, and with it a reader's
loop or a process closing its journal. The watchdog cuts the link of a statement that waited past
its deadline, which turns the wait into the error a dropped link gives (the pool drops the
connection), and the journal retries or reports as for any server that went away.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from psycopg_pool import ConnectionPool
from psycopg_pool.base import AttemptWithBackoff

__all__ = ["POOL_SIZE", "RECONNECT_MAX_S", "JournalPool", "Watch", "Watchdog"]

POOL_SIZE = 4  # connections per process: the writer thread and a few readers
RECONNECT_MAX_S = 1.0  # the longest wait between two tries to reach a server that went away


class JournalPool(ConnectionPool):
    """A ``ConnectionPool`` whose reconnection attempts are at most ``RECONNECT_MAX_S`` apart."""

    def _add_connection(self, attempt: AttemptWithBackoff | None, growing: bool = False) -> None:
        # the pool doubles the delay after a failed try: keep the doubled delay within the cap
        if attempt is not None and attempt.delay * AttemptWithBackoff.DELAY_BACKOFF > RECONNECT_MAX_S:
            attempt.delay = RECONNECT_MAX_S / AttemptWithBackoff.DELAY_BACKOFF
        super()._add_connection(attempt, growing)

    def __del__(self) -> None:
        """A pool never closed is told to stop, not waited for.

        A journal gives up closing on a server that stopped answering mid-write (closing would wait
        too), so its pool is left open; the garbage collector may then run this on one of the pool's
        own threads, which psycopg_pool's ``__del__`` tries to join: "cannot join current thread".
        """
        if not getattr(self, "_closed", True):
            self._signal_stop_worker()


class Watch:
    """One statement (or a few) under watch: ``cut`` tells whether the watchdog cut its link."""

    __slots__ = ("cut",)

    def __init__(self) -> None:
        self.cut = False


class Watchdog:
    """Cuts the link of a connection whose statements run past their deadline; one thread, asleep while idle."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._watched: dict[int, tuple[float, Any, Watch]] = {}  # id(connection): (monotonic deadline, it, watch)
        self._thread: threading.Thread | None = None

    @contextmanager
    def watching(self, conn: Any, seconds: float | None) -> Iterator[Watch]:
        """Within the block, ``conn``'s link is cut once ``seconds`` have passed (its statement then fails).

        ``seconds`` None: no bound (a statement that may rightly run for minutes).
        """
        key, watch = id(conn), Watch()
        if seconds is None:
            yield watch
            return
        with self._changed:
            self._watched[key] = (time.monotonic() + seconds, conn, watch)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="watcher-journal-watchdog", daemon=True)
                self._thread.start()
            self._changed.notify()
        try:
            yield watch
        finally:
            with self._changed:  # under the lock: a connection out of the block is never cut
                self._watched.pop(key, None)

    def _run(self) -> None:
        with self._changed:
            while True:
                now = time.monotonic()
                for key, (deadline, conn, watch) in list(self._watched.items()):
                    if deadline <= now:
                        del self._watched[key]
                        watch.cut = True
                        _cut(conn)
                soonest = min((deadline for deadline, _, _ in self._watched.values()), default=None)
                self._changed.wait(None if soonest is None else max(soonest - now, 0.01))


def _cut(conn: Any) -> None:
    """Shut the connection's socket down both ways: a read blocked on it returns at once, as from a dropped link."""
    try:
        link = socket.socket(fileno=os.dup(conn.pgconn.socket))
    except Exception:  # noqa: BLE001 - closed meanwhile: nothing to cut
        return
    try:
        link.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        link.close()
