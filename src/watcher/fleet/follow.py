"""Following the journal: each supervision loop reads the rows written since it last looked.

The journal is the only state the fleet's loops share with its tasks, so a loop's picture of a
task is what the task wrote there (observations, heartbeats, its end), never the task's objects.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection

from watcher.core.errors import MalformedEventError
from watcher.runtime.events import Event
from watcher.runtime.journal import Journal

__all__ = ["Follower"]

log = logging.getLogger("watcher.fleet")


class Follower:
    """A cursor over the journal's events for a set of sessions."""

    def __init__(self, journal: Journal, *, after: int = 0, batch: int = 5000) -> None:
        self.journal = journal
        self.after = after
        self.batch = batch

    async def read(self, sessions: Collection[str], kinds: Collection[str] | None = None) -> list[Event]:
        """The new events of ``sessions`` (of ``kinds``, if given), oldest first; rows it cannot read are skipped.

        The kinds are filtered in SQL: rows of other kinds (the loops' own records, other sessions'
        chatter) are never decoded.
        """
        await asyncio.to_thread(self.journal.flush)
        out: list[Event] = []
        while True:
            rows = await asyncio.to_thread(self.journal.read, self.after, limit=self.batch, kinds=kinds)
            if not rows:
                return out
            self.after = rows[-1].id
            for row in rows:
                if row.session not in sessions:
                    continue
                try:
                    out.append(row.event())
                except MalformedEventError as exc:
                    log.warning("fleet: skipping journal row %d: %s", row.id, exc)
            if len(rows) < self.batch:
                return out
