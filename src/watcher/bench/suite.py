"""A suite: the same seeded worlds under each condition, run concurrently, resumable from its JSONL.

Conditions: ``none`` (the agent alone), ``guided``, ``blind`` and ``rules`` (the watcher modes).
Task ``i`` gets the world ``generate_world(seed, i, ...)`` under every condition, so conditions
are compared on identical chains. With ``out`` set, each finished task is appended as one JSON
line at once; a rerun with the same settings skips the tasks already there (resume after Ctrl-C
or a crash). With no ``base_url`` both models are simulated on a local server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from watcher.bench.agent import ChatAgent, MessagesAgent, PrimaryAgent
from watcher.bench.policies import SimParams
from watcher.bench.run import run_task
from watcher.bench.simulated import AGENT_MODEL, SIMULATED_NOTICE, WATCHER_MODEL, simulated_process
from watcher.bench.supervisor import Supervisor, WatcherMode, rules_evaluator
from watcher.bench.world import generate_world
from watcher.core.errors import ConfigurationError
from watcher.core.evaluation import Evaluator
from watcher.evaluators.preflight import check_reachable
from watcher.settings import DEFAULT_WATCHER_MODEL, Settings

__all__ = ["CONDITIONS", "SuiteConfig", "read_rows", "report", "run_suite"]

CONDITIONS = ("none", "guided", "blind", "rules")


@dataclass(frozen=True, slots=True)
class SuiteConfig:
    """Everything that decides a suite's results (and so which saved rows a rerun may reuse)."""

    tasks: int = 200
    chain_lengths: tuple[int, ...] = (4, 8, 12)
    distractors: int = 3
    seed: int = 0
    conditions: tuple[str, ...] = CONDITIONS
    provider: str = "openai"
    model: str | None = None
    base_url: str | None = None
    watcher_model: str | None = None
    watcher_base_url: str | None = None
    retry_cap: int = 3
    max_steps: int | None = None
    jobs: int = 16
    watcher_timeout: float = 30.0
    sim: SimParams = field(default_factory=SimParams)

    @property
    def simulated(self) -> bool:
        """True when no server was given: both models are simulated."""
        return self.base_url is None

    @property
    def agent_model(self) -> str:
        if self.simulated:
            return AGENT_MODEL
        if self.model:
            return self.model
        if self.provider == "anthropic":
            return DEFAULT_WATCHER_MODEL  # the agent runs on the small model watchers use by default
        raise ConfigurationError(
            "--base-url needs --model: the id of the model loaded in your server (e.g. qwen2.5-7b-instruct)"
        )

    @property
    def watcher_model_name(self) -> str:
        return WATCHER_MODEL if self.simulated else (self.watcher_model or self.agent_model)

    def steps_for(self, length: int) -> int:
        """The step limit of a task (agent and watcher steps together): ``max_steps`` or 2 per link + 6."""
        return self.max_steps or 2 * length + 6

    def key(self) -> dict[str, Any]:
        """The settings a saved row must match to be reused."""
        key: dict[str, Any] = {
            "seed": self.seed,
            "distractors": self.distractors,
            "chain_lengths": list(self.chain_lengths),
            "provider": self.provider,
            "model": self.agent_model,
            "watcher_model": self.watcher_model_name,
            "retry_cap": self.retry_cap,
            "max_steps": self.max_steps,
            "simulated": self.simulated,
        }
        if self.simulated:
            key["sim"] = asdict(self.sim)
        return key

    def check(self) -> None:
        """Refuse settings that cannot run, saying which flag to change."""
        if self.tasks < 1:
            raise ConfigurationError(f"--tasks must be at least 1, not {self.tasks}")
        if not self.chain_lengths or min(self.chain_lengths) < 1:
            raise ConfigurationError("--chain-length takes lengths of at least 1, e.g. 8 or 4,8,12")
        if self.distractors < 0 or self.retry_cap < 0 or self.jobs < 1:
            raise ConfigurationError("--distractors and --retry-cap take 0 or more, --jobs 1 or more")
        if self.max_steps is not None and self.max_steps < 1:
            raise ConfigurationError(f"--max-steps must be at least 1, not {self.max_steps}")
        if not 0 < self.watcher_timeout < math.inf:  # also false for nan
            raise ConfigurationError(f"--watcher-timeout takes seconds above 0, not {self.watcher_timeout}")
        if not self.conditions:
            raise ConfigurationError(f"--conditions names no condition; choose from {', '.join(CONDITIONS)}")
        unknown = set(self.conditions) - set(CONDITIONS)
        if unknown:
            raise ConfigurationError(f"unknown condition {sorted(unknown)}; choose from {', '.join(CONDITIONS)}")
        if self.provider not in ("openai", "anthropic"):
            raise ConfigurationError(f"--provider is openai or anthropic, not {self.provider!r}")
        self.agent_model  # noqa: B018 - raises when --model is missing for a real server


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows saved in ``path`` (a torn last line from an interrupted run is skipped).

    A file that is not text is no file of rows: it is refused rather than appended to.
    """
    rows = []
    if path.exists():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigurationError(
                f"--out {path}: not rows of watcher bench (not UTF-8 text: byte {exc.start}); move it away"
            ) from exc
        for line in text.splitlines():
            with contextlib.suppress(ValueError):
                row = json.loads(line)
                if isinstance(row, dict):
                    rows.append(row)
    return rows


def _evaluator(config: SuiteConfig, mode: str, url: str | None, settings: Settings) -> Evaluator:
    if mode == "rules":
        return rules_evaluator()
    key = "simulated" if config.simulated else None
    if config.provider == "anthropic":
        from watcher.evaluators.anthropic import AnthropicEvaluator

        return AnthropicEvaluator(
            model=config.watcher_model_name,
            base_url=url,
            api_key=key,
            timeout=config.watcher_timeout,
            max_retries=0,
            recent=60,
            settings=settings,
        )
    from watcher.evaluators.openai_compat import OpenAICompatEvaluator

    return OpenAICompatEvaluator(
        model=config.watcher_model_name,
        base_url=url,
        api_key=key,
        timeout=config.watcher_timeout,
        max_retries=0,
        recent=60,
        settings=settings,
    )


async def _prove(evaluator: Evaluator) -> None:
    """One models request of the watcher model's evaluator (its key, its model), then its connections closed."""
    try:
        await asyncio.to_thread(check_reachable, evaluator)
    finally:
        close = getattr(evaluator, "aclose", None)
        if callable(close):
            await close()


@contextlib.contextmanager
def _urls(config: SuiteConfig) -> Iterator[tuple[str | None, str | None]]:
    if not config.simulated:
        yield config.base_url, config.watcher_base_url or config.base_url
        return
    with simulated_process(config.provider, config.sim) as url:
        yield url, url


async def run_suite(
    config: SuiteConfig,
    *,
    out: Path | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    settings: Settings | None = None,
) -> list[dict[str, Any]]:
    """Run every (condition, task) not already in ``out``; return all rows of this suite, sorted.

    A real server's keys come from ``settings`` (default: the environment, read now).
    """
    config.check()
    settings = settings or Settings.from_env()
    key = config.key()
    saved = [r for r in read_rows(out) if r.get("suite") == key] if out is not None else []
    done = {(r["condition"], r["task"]) for r in saved}
    pending = [(c, i) for c in config.conditions for i in range(config.tasks) if (c, i) not in done]
    rows = list(saved)
    with _urls(config) as (url, watcher_url):
        models = {c for c, _ in pending} - {"none", "rules"}
        if models and not config.simulated:  # a refused key or an unknown watcher model: said before any task
            await _prove(_evaluator(config, min(models), watcher_url, settings))
        if config.simulated:
            api_key: str | None = "simulated"
        else:
            secret = settings.anthropic_key if config.provider == "anthropic" else settings.openai_key
            api_key = secret.reveal() if secret else None
        agent: PrimaryAgent = (
            MessagesAgent(model=config.agent_model, base_url=url, api_key=api_key)
            if config.provider == "anthropic"
            else ChatAgent(model=config.agent_model, base_url=url, api_key=api_key)
        )
        watchers: dict[str, Supervisor] = {}
        for mode in {c for c, _ in pending} - {"none"}:
            watchers[mode] = Supervisor(
                _mode(mode), _evaluator(config, mode, watcher_url, settings), timeout=config.watcher_timeout
            )
        gate = asyncio.Semaphore(config.jobs)
        sink = out.open("a", encoding="utf-8") if out is not None else None

        async def one(condition: str, task: int) -> None:
            length = config.chain_lengths[task % len(config.chain_lengths)]
            world = generate_world(config.seed, task, length, config.distractors)
            async with gate:
                result = await run_task(
                    world,
                    agent,
                    watchers.get(condition),
                    condition=condition,
                    max_steps=config.steps_for(length),
                    retry_cap=config.retry_cap,
                )
            row = {**result.row(), "suite": key}
            rows.append(row)
            if sink is not None:
                sink.write(json.dumps(row) + "\n")
                sink.flush()
            if on_row is not None:
                on_row(row)

        try:
            await asyncio.gather(*(one(c, i) for c, i in pending))
        finally:
            if sink is not None:
                sink.close()
            await agent.aclose()
            for watcher in watchers.values():
                await watcher.aclose()
    order = {c: n for n, c in enumerate(CONDITIONS)}
    return sorted(rows, key=lambda r: (order.get(r["condition"], 99), r["task"]))


def _mode(name: str) -> WatcherMode:
    if name == "guided":
        return "guided"
    if name == "blind":
        return "blind"
    return "rules"


def report(config: SuiteConfig, rows: list[dict[str, Any]]) -> str:
    """The printed report: the simulated notice first (when simulated), the settings, the table."""
    from watcher.bench.results import render_table, summarize

    lines = [SIMULATED_NOTICE] if config.simulated else []
    lengths = ",".join(map(str, config.chain_lengths))
    who = (
        "simulated agent and watcher"
        if config.simulated
        else f"agent {config.agent_model}, watcher {config.watcher_model_name} ({config.provider})"
    )
    lines.append(
        f"longchain: {config.tasks} tasks per condition, chain length {lengths}, {config.distractors} distractors per link, "
        f"seed {config.seed}, retry cap {config.retry_cap}; {who}"
    )
    lines += ["", render_table(summarize(rows))]
    failed = [r for r in rows if r.get("end") == "agent_error"]
    if failed:
        first = failed[0]["errors"][0] if failed[0].get("errors") else "no message"
        lines += [
            "",
            f"{len(failed)} tasks ended because the agent model failed (counted as failures); the first: {first}",
        ]
    return "\n".join(lines)
