"""One poll loop for every journal the server follows: it costs what changes.

Each look takes the ``Stamp`` of every journal file in one worker thread (two ``stat`` calls a
journal) and reads only the journals that are due (``JournalFollower.due``): changed, just
written, failing and due for a retry, or a PostgreSQL journal (which has no stamp). Each read
runs as its own task, so a journal that is locked for seconds holds up only itself. While
nothing changes the looks slow down from ``interval`` to ``idle_interval``; the first change
brings them back to ``interval``. 60 folders with 30 journals cost 7 % of a core when each
journal was queried 20 times a second; ``benchmarks/bench_lsp_folders.py`` measures it.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from watcher.core.logs import logger
from watcher.lsp_bridge.follow import JournalFollower, Stamp, stamp_of
from watcher.runtime.journal import journal_label

__all__ = ["IDLE_INTERVAL_S", "QUIET_S", "JournalPoller"]

log = logger("watcher.lsp")

IDLE_INTERVAL_S = 0.2  # the slowest look when nothing changes: a new finding still shows within ~0.25 s
QUIET_S = 1.0  # this long without a change, and the looks start slowing down


def _stamps(paths: list[Path | str]) -> list[Stamp | None]:
    return [stamp_of(path) for path in paths]


class JournalPoller:
    """Looks at every followed journal every ``interval`` seconds (up to ``idle_interval`` when idle)."""

    def __init__(self, interval: float = 0.05, *, idle_interval: float = IDLE_INTERVAL_S) -> None:
        self.interval = interval
        self.idle_interval = max(interval, idle_interval)
        self.followers: dict[Path | str, JournalFollower] = {}
        self._reads: dict[Path | str, asyncio.Task[None]] = {}
        self._stamps: dict[Path | str, Stamp | None] = {}  # each journal's stamp at the last look
        self._changed_at = time.monotonic()

    def add(self, follower: JournalFollower) -> None:
        """Follow one more journal, from the next look."""
        self.followers[follower.path] = follower
        self._changed_at = time.monotonic()

    async def remove(self, path: Path | str) -> JournalFollower | None:
        """Stop following ``path``: its read in flight is cancelled and its journal released."""
        follower = self.followers.pop(path, None)
        self._stamps.pop(path, None)
        read = self._reads.pop(path, None)
        if read is not None:
            read.cancel()
            await asyncio.gather(read, return_exceptions=True)
        if follower is not None:
            await asyncio.to_thread(follower.close)
        return follower

    async def close(self) -> None:
        """Stop every read and release every journal (after ``run`` was cancelled)."""
        for path in list(self.followers):
            await self.remove(path)

    async def run(self) -> None:
        """Look until cancelled."""
        period = self.interval
        while True:
            followers = list(self.followers.values())
            stamps = await asyncio.to_thread(_stamps, [f.path for f in followers])
            now = time.monotonic()
            for follower, stamp in zip(followers, stamps, strict=True):
                path = follower.path
                if self.followers.get(path) is not follower:
                    continue  # removed while we looked
                if self._stamps.get(path, stamp) != stamp:
                    self._changed_at = now
                self._stamps[path] = stamp
                if path not in self._reads and follower.due(stamp, now):
                    name = f"watcher-read:{journal_label(path)}"  # a URL's password stays out of task names
                    self._reads[path] = asyncio.get_running_loop().create_task(self._read(follower, stamp), name=name)
            quiet = now - self._changed_at >= QUIET_S
            period = min(period * 2, self.idle_interval) if quiet else self.interval
            await asyncio.sleep(period)

    async def _read(self, follower: JournalFollower, stamp: Stamp | None) -> None:
        """Read one journal (on until a batch is not full), and hand what it brought to the server."""
        try:
            while True:
                outcome = await asyncio.to_thread(follower.poll, stamp)
                if self.followers.get(follower.path) is not follower:
                    return  # removed meanwhile: what it read is no one's news
                more = follower.take(outcome)
                if more or (not isinstance(outcome, Exception) and outcome is not None and outcome.rows):
                    self._changed_at = time.monotonic()  # news: look often again (a PostgreSQL journal too)
                if not more:
                    return
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug in handling one journal must not stop the others
            log.exception("reading the journal at %s failed; carrying on", journal_label(follower.path))
        finally:
            if self._reads.get(follower.path) is asyncio.current_task():
                del self._reads[follower.path]
