"""The supervision side of a fleet: its roster, the watcher and syncer loops, and commands from people.

A ``Supervisor`` needs nothing but the journal: it learns the fleet's tasks from their
``FleetTask`` rows, judges them from their summaries, relays their learnings, and writes its
decisions as action rows that the task host applies. It runs in the fleet's process
(``Fleet``) or in another one (``watcher fleet supervise``). A loop whose cycle raises is
restarted with exponential backoff; ``health()`` reports ``SupervisionHealth`` and each cycle
journals it (``SupervisionReport``). Commands written to the journal by another process
(``watcher fleet nudge|pause|resume|abort``, session ``fleet:<task>``) become actions within
``command_poll_s``; a command is claimed before it is applied, so two processes polling the same
journal never apply it twice, and its outcome is kept until its mark is written, so a mark lost
with the journal's server is written later instead of the command being applied again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from watcher.core.errors import JournalError
from watcher.core.evaluation import Evaluator
from watcher.core.logs import logger
from watcher.fleet.actions import Actions, Stats
from watcher.fleet.events import SupervisionReport
from watcher.fleet.roster import Roster
from watcher.fleet.sync import SyncCycle
from watcher.fleet.tasks import FleetConfig
from watcher.fleet.watch import WatchCycle
from watcher.runtime.clock import SYSTEM_CLOCK, Clock
from watcher.runtime.fates import APPLIED, FAILED, CommandState
from watcher.runtime.journal import Command, Journal
from watcher.runtime.polling import poll

__all__ = ["COMMAND_PREFIX", "SupervisionHealth", "Supervisor", "journaled_config"]

log = logger("watcher.fleet")

COMMAND_PREFIX = "fleet:"
COMMAND_BATCH = 100  # commands claimed (and marked) per statement


def journaled_config(settings: Mapping[str, Any], name: str) -> FleetConfig:
    """The ``FleetConfig`` a fleet run journaled (``FleetSettings``), for a supervisor of fleet ``name``.

    Keys this version does not know are left out (a newer watcher wrote them), lists become
    tuples again, and supervision is on: whoever asks for this config supervises.
    """
    known = {f.name: f for f in fields(FleetConfig)}
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in settings.items() if k in known}
    return FleetConfig(**{**values, "name": name, "supervision": True})


@dataclass(slots=True)
class SupervisionHealth:
    """Are the loops alive, when did they last finish a cycle, is the watcher degraded, how often restarted."""

    watcher_alive: bool = False
    syncer_alive: bool = False
    last_watcher_cycle: float | None = None
    last_syncer_cycle: float | None = None
    degraded: bool = False
    restarts: dict[str, int] = field(default_factory=lambda: {"watcher": 0, "syncer": 0})


class Supervisor:
    """Supervises fleet ``config.name`` in ``journal``: the tasks announced after journal id ``after``."""

    def __init__(
        self,
        config: FleetConfig,
        journal: Journal,
        *,
        after: int = 0,
        evaluator: Evaluator | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.config = config
        self.journal = journal
        timeout = config.persist_timeout_s
        self.roster = Roster(config.name, journal, after=after, timeout_s=timeout, clock=clock)
        self.actions = Actions(journal, self.roster, timeout_s=timeout)
        self.watcher = WatchCycle(config, self.actions, self.roster, evaluator)
        self.syncer = SyncCycle(config, self.actions, self.roster)
        self._health = SupervisionHealth()
        self._background: list[asyncio.Task[None]] = []
        self._unmarked: dict[int, tuple[CommandState, str]] = {}  # command id: its outcome, applied and not yet marked

    @property
    def stats(self) -> Stats:
        return self.actions.stats

    def status(self, task: str) -> str:
        """Where ``task`` stands as the journal last told (running, paused, how it ended, or unknown)."""
        return self.roster.status(task)

    def health(self) -> SupervisionHealth:
        """The supervision loops' health now."""
        h = self._health
        h.degraded = self.watcher.degraded
        h.last_watcher_cycle, h.last_syncer_cycle = self.watcher.last_ok, self.syncer.last_ok
        return h

    async def start(self, *, loops: bool = True) -> None:
        """Read the roster, start the two loops (unless ``loops`` is False) and the command poller."""
        await self.roster.refresh()  # the tasks' ages count from now
        cfg = self.config
        if loops:
            self._spawn("watcher", self.watcher.run, lambda: cfg.watch_interval_s)
            self._spawn("syncer", self.syncer.run, lambda: cfg.sync_interval_s)
        self._background.append(asyncio.get_running_loop().create_task(self._poll_commands(), name="fleet-commands"))

    async def close(self) -> None:
        """Stop the loops and the command poller; mark the commands applied here and not yet marked.

        Left claimed, they would be applied again by the next supervisor once their lease ran out.
        """
        for task in self._background:
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        self._background.clear()
        if self._unmarked:
            try:
                await self._mark()
            except JournalError as exc:
                log.warning(
                    "fleet: %d command(s) applied here could not be marked (%s); another supervisor applies them "
                    "again after %gs",
                    len(self._unmarked),
                    exc,
                    self.config.command_lease_s,
                )

    def _spawn(self, name: str, cycle: Callable[[], Awaitable[None]], interval: Callable[[], float]) -> None:
        loop = asyncio.get_running_loop()
        self._background.append(loop.create_task(self._supervise(name, cycle, interval), name=f"fleet-{name}"))

    async def _supervise(self, name: str, cycle: Callable[[], Awaitable[None]], interval: Callable[[], float]) -> None:
        """Run ``cycle`` every ``interval()`` s; when it raises, restart it after a growing backoff."""
        cfg, health = self.config, self._health
        backoff = cfg.restart_backoff_s
        while True:
            setattr(health, f"{name}_alive", True)
            try:
                while True:
                    await asyncio.sleep(interval())
                    await cycle()
                    self._report()
                    backoff = cfg.restart_backoff_s
            except asyncio.CancelledError:
                setattr(health, f"{name}_alive", False)
                raise
            except Exception as exc:  # noqa: BLE001 - a crashed loop is restarted, never left dead
                setattr(health, f"{name}_alive", False)
                health.restarts[name] += 1
                log.warning(
                    "fleet %s loop crashed (%s: %s); restarting in %.2fs", name, type(exc).__name__, exc, backoff
                )
                self._report()
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, cfg.restart_backoff_max_s)

    def _report(self) -> None:
        """Journal the loops' health and counters (read by ``watcher fleet stats`` from any process)."""
        h = self.health()
        self.journal.append(
            SupervisionReport(
                session=COMMAND_PREFIX + self.config.name,
                fleet=self.config.name,
                watcher_alive=h.watcher_alive,
                syncer_alive=h.syncer_alive,
                last_watcher_cycle=h.last_watcher_cycle,
                last_syncer_cycle=h.last_syncer_cycle,
                degraded=h.degraded,
                watcher_restarts=h.restarts["watcher"],
                syncer_restarts=h.restarts["syncer"],
                watcher_cycles=self.watcher.cycles,
                syncer_cycles=self.syncer.cycles,
                evaluator_failures=self.watcher.evaluator_failures,
                syncs_dropped=self.syncer.dropped,
                syncs_duplicate=self.syncer.duplicates,
            )
        )

    # --- commands from other processes ------------------------------------------------------------

    async def _poll_commands(self) -> None:
        lease = self.config.command_lease_s
        release_at = 0.0

        async def look() -> None:
            nonlocal release_at
            await self._mark()  # what was applied before the journal went away is marked before anything is released
            await self.roster.refresh()
            sessions = [COMMAND_PREFIX + name for name in self.roster.members]
            now = self.roster.clock.monotonic()
            if now >= release_at:  # what a dead process claimed is taken again (a few looks a lease)
                release_at = now + lease / 4
                if released := await asyncio.to_thread(self.journal.release_claims, lease, sessions):
                    log.warning(
                        "fleet: %d command(s) claimed over %gs ago, never applied, taken again", released, lease
                    )
            while claimed := await asyncio.to_thread(self.journal.claim_commands, sessions, COMMAND_BATCH):
                for command in claimed:  # claimed in one statement (another poller's are not among them)
                    if command.id not in self._unmarked:  # else applied already, its mark lost: never twice
                        with self.journal.settling(command):  # its action rows and its mark: one transaction
                            self._unmarked[command.id] = await self.apply(command)
                await self._mark()  # marked in one statement
                if len(claimed) < COMMAND_BATCH:
                    break

        await poll(
            look,
            self.config.command_poll_s,
            log,
            failed="fleet: applying journal commands",
            recovered="fleet: journal commands are applied again",
            nap=self.journal.nap,
        )

    async def _mark(self) -> None:
        """Mark the commands applied (or failed) here and not yet marked; they are forgotten once marked.

        An outcome is kept from the moment its command is applied until its mark is written: when
        the journal goes away in between (the mark raises after ``RETRY_S``), the next look marks it
        first, before claims are released, and a command released and claimed again meanwhile is
        marked with its outcome instead of being applied again (a person's nudge sent twice).
        """
        if self._unmarked:
            marks = [(cid, status, detail) for cid, (status, detail) in self._unmarked.items()]
            await asyncio.to_thread(self.journal.mark_commands, marks)
            for cid, _, _ in marks:
                del self._unmarked[cid]

    async def apply(self, command: Command) -> tuple[CommandState, str]:
        """Apply one ``fleet:<task>`` command as an action: (applied|failed, detail)."""
        task = command.session.removeprefix(COMMAND_PREFIX)
        status = self.roster.status(task)
        if status not in ("running", "paused"):
            return FAILED, f"task {task!r} is not running ({status})"
        if command.ts < self.roster.members[task].announced:
            return FAILED, f"written before this run of task {task!r} started; send it again if it still applies"
        reason = str(command.payload.get("reason") or command.payload.get("message") or "by a person")
        actions = self.actions
        if command.kind == "nudge":
            message = str(command.payload.get("message") or "").strip()
            if not message:
                return FAILED, "a nudge needs a message"
            iid = await actions.nudge(task, message, "warning", by="person")
            return (APPLIED, f"queued as {iid}") if iid else (FAILED, "the task ended")
        if command.kind == "pause":
            done = await actions.pause(task, reason, by="person")
            return (APPLIED, "paused at its next boundary") if done else (FAILED, "already paused")
        if command.kind == "resume":
            done = await actions.resume(task, by="person")
            return (APPLIED, "resumed") if done else (FAILED, "not paused")
        if command.kind == "abort":
            return (APPLIED, "aborted") if await actions.abort(task, reason, by="person") else (FAILED, "ended")
        return FAILED, f"unknown fleet command {command.kind!r}"
