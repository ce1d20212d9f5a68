"""The syncer loop's cycle: relay what one task learned to the related tasks it could help.

Tasks extract their learnings on their own side (``watcher.fleet.monitor``) and store them as
``LearningExtracted`` rows: the knowledge store is the journal, so learnings outlive the process
and can be queried. Each cycle reads the new ones and relays each to the running tasks it could
help: those sharing a tag with its source, with the same parent (or parent and child), or
working in overlapping directories — never to an unrelated task, never back to its source. Per
recipient, at most ``sync_rate_limit`` syncs per ``sync_rate_window_s`` (the rest are dropped
and counted), and the same learning text at most once per ``sync_ttl_s``. A relay is a
``SyncMessageSent`` row; the task host renders it (``render_sync``) for the recipient's next
request, or keeps it for a paused recipient until it resumes.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Mapping

from watcher.core.logs import logger
from watcher.fleet.actions import Actions
from watcher.fleet.events import LearningExtracted, SyncMessageSent
from watcher.fleet.follow import Follower
from watcher.fleet.roster import Roster
from watcher.fleet.tasks import FleetConfig, TaskSpec

__all__ = ["SyncCycle", "related"]

log = logger("watcher.fleet")


def related(a: TaskSpec, b: TaskSpec, directories: tuple[str, ...] = ()) -> bool:
    """True when ``b`` may care about what ``a`` found: shared tags, kinship, overlapping directories."""
    if a.name == b.name:
        return False
    if set(a.tags) & set(b.tags):
        return True
    if (a.parent and a.parent in (b.parent, b.name)) or (b.parent and b.parent == a.name):
        return True
    dirs = [d.rstrip("/") for d in (a.directory, *directories) if d]
    mine = b.directory.rstrip("/")
    return bool(mine) and any(d == mine or d.startswith(mine + "/") or mine.startswith(d + "/") for d in dirs)


class SyncCycle:
    """One fleet's syncer: its journal cursor, its relay memory, and the cycle."""

    def __init__(self, config: FleetConfig, actions: Actions, roster: Roster) -> None:
        self.config = config
        self.actions = actions
        self.roster = roster
        self.follower = Follower(actions.journal, after=roster.after, flush=False)  # the roster just flushed
        self.cycles = 0
        self.last_ok: float | None = None
        self.dropped = 0  # syncs over a recipient's rate limit
        self.duplicates = 0  # syncs already relayed within the TTL
        self._sent: dict[tuple[str, str], float] = {}  # (recipient, text) -> monotonic time relayed
        self._recent: dict[str, deque[float]] = {}
        self._known: set[str] = set()
        self._kin = _Kinship({})
        self._kin_version = -1
        self._recalled = False

    async def run(self) -> None:
        """One cycle: the learnings stored since the last one → relays."""
        self.cycles += 1
        self.actions.stats.syncer_cycles = self.cycles
        await self.roster.refresh()
        if not self._recalled:
            await asyncio.to_thread(self._recall)
            self._recalled = True
        members = self.roster.members
        if self._kin_version != self.roster.version:
            self._kin = _Kinship({name: m.spec for name, m in members.items()})
            self._kin_version = self.roster.version
        fresh: list[LearningExtracted] = []
        for event in await self.follower.read(members, kinds=("learning_extracted",)):
            if (
                isinstance(event, LearningExtracted)
                and event.fleet == self.config.name
                and event.learning_id not in self._known
            ):
                self._known.add(event.learning_id)
                fresh.append(event)
        self.actions.stats.learnings += len(fresh)
        now = self.roster.clock.monotonic()
        syncs = [sync for learning in fresh for sync in self._relays(learning, now)]
        if syncs:
            await self.actions.relay(syncs)
        self.last_ok = self.roster.clock.time()

    def _recall(self) -> None:
        """Rebuild the relay memory from the journal (a supervisor restarted on a running fleet).

        Learnings this fleet already relayed are not relayed again, and the TTL and rate windows
        count the relays still inside them (their wall-clock age, mapped onto the monotonic clock).
        """
        texts: dict[str, str] = {}
        relays: list[SyncMessageSent] = []
        after, journal = self.roster.after, self.actions.journal
        while rows := journal.read(after, limit=5000, kinds=("learning_extracted", "sync_message")):
            after = rows[-1].id
            for row in rows:
                if row.payload.get("fleet") != self.config.name:
                    continue
                event = row.event()
                if isinstance(event, LearningExtracted):
                    texts[event.learning_id] = event.text.lower()
                elif isinstance(event, SyncMessageSent) and event.status == "sent":
                    relays.extend(event.each())
        now_wall, now = self.roster.clock.time(), self.roster.clock.monotonic()
        for sync in relays:
            self._known.add(sync.learning_id)
            at = now - max(now_wall - sync.ts, 0.0)
            if now - at < self.config.sync_ttl_s and sync.learning_id in texts:
                self._sent[(sync.session, texts[sync.learning_id])] = at
            if now - at < self.config.sync_rate_window_s:
                self._recent.setdefault(sync.session, deque()).append(at)

    def _allowed(self, recipient: str, text: str, now: float) -> bool:
        cfg = self.config
        sent = self._sent.get((recipient, text))
        if sent is not None and now - sent < cfg.sync_ttl_s:
            self.duplicates += 1
            return False
        window = self._recent.get(recipient)
        if window is None:
            window = self._recent[recipient] = deque()
        while window and now - window[0] >= cfg.sync_rate_window_s:
            window.popleft()
        if len(window) >= cfg.sync_rate_limit:
            self.dropped += 1
            return False
        window.append(now)
        self._sent[(recipient, text)] = now
        return True

    def _relays(self, learning: LearningExtracted, now: float) -> list[SyncMessageSent]:
        members = self.roster.members
        source = members[learning.session].spec
        text = learning.text.lower()
        out = []
        for name in self._kin.candidates(source):
            member = members.get(name)
            if member is None or member.ended or not related(source, member.spec, learning.directories):
                continue  # a parent outside the fleet, a task that ended, or not related after all
            if not self._allowed(name, text, now):
                continue
            out.append(
                SyncMessageSent(
                    session=name,
                    fleet=self.config.name,
                    interjection_id=f"sync-{learning.learning_id}-{name}",
                    learning_id=learning.learning_id,
                    source_task=learning.session,
                    urgency=learning.urgency,
                    text="",  # the text is the learning's (``LearningExtracted``): journaled and redacted once
                    observation=learning.observation,
                )
            )
        return out


class _Kinship:
    """Who may be related to whom, indexed once (by tag and parent), so a relay does not scan every task."""

    def __init__(self, specs: Mapping[str, TaskSpec]) -> None:
        self.by_tag: dict[str, list[str]] = {}
        self.by_parent: dict[str, list[str]] = {}
        self.with_directory = [name for name, spec in specs.items() if spec.directory]
        for name, spec in specs.items():
            for tag in spec.tags:
                self.by_tag.setdefault(tag, []).append(name)
            if spec.parent:
                self.by_parent.setdefault(spec.parent, []).append(name)

    def candidates(self, source: TaskSpec) -> list[str]:
        """Tasks that might be related to ``source`` (``related`` decides), in a stable order."""
        found: dict[str, None] = {}
        for tag in source.tags:
            found.update(dict.fromkeys(self.by_tag.get(tag, ())))
        found.update(dict.fromkeys(self.by_parent.get(source.name, ())))
        if source.parent:
            found.update(dict.fromkeys(self.by_parent.get(source.parent, ())))
            found[source.parent] = None
        found.update(dict.fromkeys(self.with_directory))
        return list(found)
