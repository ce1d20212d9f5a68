"""``Fleet``: run many agent tasks at once, with a watcher loop and a syncer loop supervising them.

A fleet has a task side and a supervision side that meet only in the journal. The task side
(``TaskHost``) runs each task as one of watcher's own agent runs, writes its summaries and
learnings, and applies the actions written for it. The supervision side reads those rows
(``Roster``, ``WatchCycle``, ``SyncCycle``) and writes actions (``Actions``). A loop whose cycle
raises is restarted with exponential backoff; ``health()`` reports ``SupervisionHealth``, and
each cycle journals it (``SupervisionReport``) so ``watcher fleet stats`` shows it from any
process. Commands written to the journal by another process (``watcher fleet
nudge|pause|resume|abort``, session ``fleet:<task>``) become actions within ``command_poll_s``.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watcher.agents import RunResult, make_client
from watcher.core.errors import ConfigurationError
from watcher.fleet.actions import Actions, Stats
from watcher.fleet.host import TaskHost
from watcher.fleet.learnings import Extractor
from watcher.fleet.monitor import TurnExtractor
from watcher.fleet.roster import Roster
from watcher.fleet.spawned import CLI_AGENTS
from watcher.fleet.sync import SyncCycle
from watcher.fleet.tasks import FleetConfig, TaskSpec, check_names
from watcher.fleet.watch import Evaluator, WatchCycle
from watcher.runtime.events import SupervisionReport
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Command, Journal

__all__ = ["COMMAND_PREFIX", "Fleet", "SupervisionHealth"]

log = logging.getLogger("watcher.fleet")

COMMAND_PREFIX = "fleet:"


@dataclass(slots=True)
class SupervisionHealth:
    """Are the loops alive, when did they last finish a cycle, is the watcher degraded, how often restarted."""

    watcher_alive: bool = False
    syncer_alive: bool = False
    last_watcher_cycle: float | None = None
    last_syncer_cycle: float | None = None
    degraded: bool = False
    restarts: dict[str, int] = field(default_factory=lambda: {"watcher": 0, "syncer": 0})


class Fleet:
    """Runs ``specs`` concurrently and supervises them (unless ``config.supervision`` is False).

    ``evaluator`` replaces the rules in the watcher loop (a function of a ``Snapshot``, or a
    coroutine function such as an LLM evaluator); ``extractor`` replaces the rule-based learning
    extraction per observation; ``turn_extractor`` adds one called once per turn (an LLM's).
    """

    def __init__(
        self,
        specs: Sequence[TaskSpec],
        *,
        config: FleetConfig | None = None,
        journal: Journal | str | os.PathLike[str],
        client: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        evaluator: Evaluator | None = None,
        extractor: Extractor | None = None,
        turn_extractor: TurnExtractor | None = None,
    ) -> None:
        check_names(specs)
        unknown = sorted({s.agent for s in specs} - {"anthropic", *CLI_AGENTS})
        if unknown:
            raise ConfigurationError(
                f'fleet tasks: unknown agent {", ".join(map(repr, unknown))}; use "anthropic" (watcher\'s own agent '
                f"run) or a spawned CLI agent: {', '.join(CLI_AGENTS)}"
            )
        self.specs = {s.name: s for s in specs}
        self.config = config or FleetConfig()
        self._owns_journal = not isinstance(journal, Journal)
        self.journal = journal if isinstance(journal, Journal) else Journal(Path(journal))
        self._client_args = (client, base_url, api_key)
        self._extractors = (extractor, turn_extractor)
        timeout = self.config.persist_timeout_s
        self.roster = Roster(self.config.name, self.journal, after=self.journal.last_id(), timeout_s=timeout)
        self.actions = Actions(self.journal, self.roster, timeout_s=timeout)
        self.watcher = WatchCycle(self.config, self.actions, self.roster, evaluator)
        self.syncer = SyncCycle(self.config, self.actions, self.roster)
        self.host: TaskHost | None = None
        self._health = SupervisionHealth()
        self._background: list[asyncio.Task[None]] = []
        self.runtime: Runtime | None = None
        self._client: Any = None

    @property
    def stats(self) -> Stats:
        return self.actions.stats

    @property
    def runs(self) -> dict[str, Any]:
        """The tasks' agent runs, by task name (empty before ``start``)."""
        return dict(self.host.runs) if self.host is not None else {}

    def status(self, task: str) -> str:
        """Where ``task`` stands as the journal last told (running, paused, how it ended, or unknown)."""
        return self.roster.status(task)

    def health(self) -> SupervisionHealth:
        """The supervision loops' health now."""
        h = self._health
        h.degraded = self.watcher.degraded
        h.last_watcher_cycle, h.last_syncer_cycle = self.watcher.last_ok, self.syncer.last_ok
        return h

    # --- running -------------------------------------------------------------------------------

    async def start(self) -> Fleet:
        """Start every task and, with supervision, the two loops; commands are polled either way."""
        client, base_url, api_key = self._client_args
        self._client = client if client is not None else make_client(base_url=base_url, api_key=api_key)
        self.runtime = Runtime(journal=self.journal)
        self.host = TaskHost(
            self.specs,
            config=self.config,
            journal=self.journal,
            runtime=self.runtime,
            client=self._client,
            extractor=self._extractors[0],
            turn_extractor=self._extractors[1],
        )
        self.host.start()
        await self.roster.refresh()  # the tasks' ages count from now
        cfg = self.config
        if cfg.supervision:
            self._spawn("watcher", self.watcher.run, lambda: cfg.watch_interval_s)
            self._spawn("syncer", self.syncer.run, lambda: cfg.sync_interval_s)
        self._background.append(asyncio.get_running_loop().create_task(self._poll_commands(), name="fleet-commands"))
        return self

    async def wait(self) -> dict[str, RunResult | BaseException]:
        """Wait for every task to end (a paused task waits for resume or abort); then stop the loops."""
        runs = self.runs
        results = await asyncio.gather(*(run.wait() for run in runs.values()), return_exceptions=True)
        await self.close()
        return dict(zip(runs, results, strict=True))

    async def run(self) -> dict[str, RunResult | BaseException]:
        """``start`` then ``wait``."""
        await self.start()
        return await self.wait()

    async def close(self) -> None:
        """Stop the loops and the command poller; abort tasks still running; close what was opened here."""
        for task in self._background:
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        self._background.clear()
        if self.host is not None:
            await self.host.close()
        if self.runtime is not None:
            await self.runtime.close()
        if self._client is not None and self._client_args[0] is None:
            await self._client.close()
            self._client = None
        if self._owns_journal:
            await asyncio.to_thread(self.journal.close)

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
        sessions = [COMMAND_PREFIX + name for name in self.specs]
        while True:
            try:
                commands = await asyncio.to_thread(self.journal.commands, sessions=sessions)
                if commands:
                    await self.roster.refresh()
                for command in commands:
                    status, detail = await self.apply(command)
                    await asyncio.to_thread(self.journal.mark_command, command.id, status, detail)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("fleet: applying journal commands failed; will retry")
            await asyncio.sleep(self.config.command_poll_s)

    async def apply(self, command: Command) -> tuple[str, str]:
        """Apply one ``fleet:<task>`` command as an action: (applied|failed, detail)."""
        task = command.session.removeprefix(COMMAND_PREFIX)
        status = self.roster.status(task)
        if status not in ("running", "paused"):
            return "failed", f"task {task!r} is not running ({status})"
        reason = str(command.payload.get("reason") or command.payload.get("message") or "by a person")
        actions = self.actions
        if command.kind == "nudge":
            message = str(command.payload.get("message") or "").strip()
            if not message:
                return "failed", "a nudge needs a message"
            iid = await actions.nudge(task, message, "warning", by="person")
            return ("applied", f"queued as {iid}") if iid else ("failed", "the task ended")
        if command.kind == "pause":
            done = await actions.pause(task, reason, by="person")
            return ("applied", "paused at its next boundary") if done else ("failed", "already paused")
        if command.kind == "resume":
            done = await actions.resume(task, by="person")
            return ("applied", "resumed") if done else ("failed", "not paused")
        if command.kind == "abort":
            return ("applied", "aborted") if await actions.abort(task, reason, by="person") else ("failed", "ended")
        return "failed", f"unknown fleet command {command.kind!r}"
