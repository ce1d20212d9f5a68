"""``Fleet``: run many agent tasks at once, with a watcher loop and a syncer loop supervising them.

A fleet has a task side and a supervision side that meet only in the journal. The task side
(``TaskHost``) runs each task, writes its summaries and learnings, and applies the actions
written for it. The supervision side (``Supervisor``) reads those rows and writes actions. They
run in one process here; ``watcher fleet run --no-supervision`` and ``watcher fleet supervise``
run them in two.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from watcher.agents import RunResult, make_client
from watcher.core.errors import ConfigurationError
from watcher.core.evaluation import Evaluator
from watcher.fleet.actions import Actions, Stats
from watcher.fleet.events import FleetSettings
from watcher.fleet.host import TaskHost
from watcher.fleet.judges import fleet_evaluator, fleet_extractor
from watcher.fleet.learnings import Extractor
from watcher.fleet.monitor import TurnExtractor
from watcher.fleet.roster import Roster
from watcher.fleet.spawned import CLI_AGENTS
from watcher.fleet.supervisor import COMMAND_PREFIX, SupervisionHealth, Supervisor
from watcher.fleet.sync import SyncCycle
from watcher.fleet.tasks import FleetConfig, SharedRun, TaskSpec, check_names
from watcher.fleet.watch import WatchCycle
from watcher.runtime.clock import SYSTEM_CLOCK, Clock
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Command, Journal

__all__ = ["Fleet"]


class Fleet:
    """Runs ``specs`` concurrently and supervises them (unless ``config.supervision`` is False).

    ``evaluator`` judges each task's health in the watcher loop in place of the ``health`` role's
    rules: any ``Evaluator``, given the task's ``Snapshot`` as its request's subject (an LLM
    evaluator is sent the role's prompt); ``extractor`` replaces the rule-based learning
    extraction per observation; ``turn_extractor`` adds one called once per turn (an LLM's).
    Without them, ``config.evaluator``/``config.extractor`` may name an LLM
    (``"anthropic:<model>"``, ``"openai:<model>"``; ``watcher.fleet.judges``), which the fleet
    builds, and closes when it closes. Commands from other processes are applied with or without
    supervision. ``clock`` is the supervision's time (staleness, silent hosts, leases, rate windows):
    a test passes ``watcher.testing.FakeClock`` and moves it on instead of sleeping.
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
        clock: Clock = SYSTEM_CLOCK,
        shared: SharedRun | None = None,
    ) -> None:
        check_names(specs)
        self.shared = shared  # a run whose tasks several hosts claim between them (watcher fleet run --run)
        unknown = sorted({s.agent for s in specs} - {"anthropic", *CLI_AGENTS})
        if unknown:
            raise ConfigurationError(
                f'fleet tasks: unknown agent {", ".join(map(repr, unknown))}; use "anthropic" (watcher\'s own agent '
                f"run) or a spawned CLI agent: {', '.join(CLI_AGENTS)}"
            )
        self.specs = {s.name: s for s in specs}
        self.config = config or FleetConfig()
        self._built: list[Any] = []  # LLM evaluator/extractor built from the config's names, closed at close
        llm_url = self.config.llm_base_url or None
        owns_judge = evaluator is None
        if evaluator is None:  # the one named in the config (None: the health role's rules)
            evaluator = fleet_evaluator(self.config.evaluator, base_url=llm_url)
            owns_judge = evaluator is not None
        if turn_extractor is None and (found := fleet_extractor(self.config.extractor, base_url=llm_url)) is not None:
            turn_extractor = found
            self._built.append(found)
        self._owns_journal = not isinstance(journal, Journal)
        self.journal = journal if isinstance(journal, Journal) else Journal(journal)
        self._client_args = (client, base_url, api_key)
        self._extractors = (extractor, turn_extractor)
        self.supervisor = Supervisor(
            self.config, self.journal, after=self.journal.last_id(), evaluator=evaluator, clock=clock
        )
        if owns_judge:
            self._built.append(self.supervisor.watcher.judge)
        self.host: TaskHost | None = None
        self.runtime: Runtime | None = None
        self._client: Any = None

    # the supervision side's parts, for people and tests
    @property
    def roster(self) -> Roster:
        return self.supervisor.roster

    @property
    def actions(self) -> Actions:
        return self.supervisor.actions

    @property
    def watcher(self) -> WatchCycle:
        return self.supervisor.watcher

    @property
    def syncer(self) -> SyncCycle:
        return self.supervisor.syncer

    @property
    def stats(self) -> Stats:
        return self.supervisor.stats

    @property
    def runs(self) -> dict[str, Any]:
        """The tasks' runs, by task name (empty before ``start``)."""
        return dict(self.host.runs) if self.host is not None else {}

    def status(self, task: str) -> str:
        """Where ``task`` stands as the journal last told (running, paused, how it ended, or unknown)."""
        return self.supervisor.status(task)

    def health(self) -> SupervisionHealth:
        """The supervision loops' health now."""
        return self.supervisor.health()

    async def apply(self, command: Command) -> tuple[str, str]:
        """Apply one ``fleet:<task>`` command as an action: (applied|failed, detail)."""
        return await self.supervisor.apply(command)

    async def start(self) -> Fleet:
        """Start every task and, with supervision, the two loops; commands are polled either way."""
        client, base_url, api_key = self._client_args
        if client is None and any(spec.agent == "anthropic" for spec in self.specs.values()):
            client = make_client(base_url=base_url, api_key=api_key)  # only agent runs call the Messages API here
        self._client = client
        self.runtime = Runtime(journal=self.journal)
        self.host = TaskHost(
            self.specs,
            config=self.config,
            journal=self.journal,
            runtime=self.runtime,
            client=self._client,
            extractor=self._extractors[0],
            turn_extractor=self._extractors[1],
            shared=self.shared,
        )
        self.journal.append(  # what a supervisor started elsewhere supervises with (watcher fleet supervise)
            FleetSettings(
                session=COMMAND_PREFIX + self.config.name,
                fleet=self.config.name,
                run=self.host.run,
                settings=asdict(self.config),
            )
        )
        self.host.start()
        await self.supervisor.start(loops=self.config.supervision)
        return self

    async def wait(self) -> dict[str, RunResult | BaseException]:
        """Wait for every task to end (a paused task waits for resume or abort); then stop the loops.

        In a shared run: every task this host claimed, once some host started each of the run's tasks.
        """
        if self.host is not None and self.shared is not None:
            await self.host.settled()
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
        await self.supervisor.close()
        if self.host is not None:
            await self.host.close()
        if self.runtime is not None:
            await self.runtime.close()
        if self._client is not None and self._client_args[0] is None:
            await self._client.close()
            self._client = None
        for built in self._built:
            await built.aclose()
        self._built.clear()
        if self._owns_journal:
            await asyncio.to_thread(self.journal.close)
