"""Following the journal: each supervision loop (and each task host) reads the rows written since it last looked.

The journal is the only state the fleet's loops share with its tasks, so a loop's picture of a
task is what the task wrote there (summaries, learnings, its end), and a task learns what the
loops decided from the action rows they wrote, never from each other's objects.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection

from watcher.core.logs import logger
from watcher.fleet.events import SyncMessageSent
from watcher.runtime.events import Event, readable
from watcher.runtime.journal import Journal

__all__ = ["Follower"]

log = logger("watcher.fleet")


class Follower:
    """A cursor over the journal's events (of some kinds, for some sessions).

    ``flush``: commit this process's pending appends before reading (a loop that must see what it
    wrote itself), raising ``JournalError`` after ``flush_timeout_s``; a task host reads only
    what the loops committed, so it does not wait for that.
    """

    def __init__(
        self,
        journal: Journal,
        *,
        after: int = 0,
        batch: int = 5000,
        flush: bool = True,
        flush_timeout_s: float | None = None,
    ) -> None:
        self.journal = journal
        self.after = after
        self.batch = batch
        self.flush = flush
        self.flush_timeout_s = flush_timeout_s

    async def read(
        self, sessions: Collection[str] | None, kinds: Collection[str] | None = None, *, expand: bool = False
    ) -> list[Event]:
        """The new events of ``sessions`` (None: any) of ``kinds`` (filtered in SQL), oldest first.

        ``expand``: a ``SyncMessageSent`` row for several recipients becomes one event per
        recipient before ``sessions`` is applied. Rows it cannot read are skipped with a log line.
        """
        if self.flush:
            await asyncio.to_thread(self.journal.flush, self.flush_timeout_s)
        out: list[Event] = []
        while True:
            rows = await asyncio.to_thread(self.journal.read, self.after, limit=self.batch, kinds=kinds)
            if not rows:
                return out
            self.after = rows[-1].id
            wanted = [
                row
                for row in rows
                if sessions is None or row.session in sessions or (expand and row.kind == SyncMessageSent.kind)
            ]
            for event in readable(wanted, log, "fleet"):
                for one in event.each() if expand and isinstance(event, SyncMessageSent) else (event,):
                    if sessions is None or one.session in sessions:
                        out.append(one)
            if len(rows) < self.batch:
                return out
