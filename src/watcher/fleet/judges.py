"""How the fleet asks its evaluators: the health role's judge of a task and the reader of a turn's learnings.

Both ask an ordinary ``Evaluator`` (``watcher.core.evaluation``) with an ``EvaluationRequest``
whose subject is what they judge: a task's ``Snapshot`` for the ``health`` role, a turn for the
learning extraction. ``fleet_evaluator(name)`` and ``fleet_extractor(name)`` build the configured
LLM (``[fleet] evaluator = "anthropic:<model>"``) with ``watcher.evaluators.EVALUATORS``, so
keys, base URLs, SDK error translation and redaction are those of any LLM watcher; ``rules`` (or
empty) gives None: the health role's rules judge, and the rule-based extraction reads learnings.

A judgment that fails (no answer within the deadline, an ``EvaluationError``, an answer that
cannot be read) fails closed: *continue*, or no learnings, a log line, and the reason in
``last_error`` (None after a call that worked; read it right after the ``await``), counted in
``failures``. Any other exception is a broken evaluator: it reaches the watcher loop, whose cycle
then degrades to the mechanical freshness checks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from watcher.core.edits import KnownFile
from watcher.core.errors import ConfigurationError, EvaluationError, MissingCredentialsError
from watcher.core.evaluation import EvaluationRequest, EvaluationResult, Evaluator
from watcher.core.interjection import Continue
from watcher.core.logs import logger
from watcher.core.observations import Observation
from watcher.core.redact import redact
from watcher.evaluators import EVALUATORS, RulesEvaluator
from watcher.fleet.ladder import Recommendation, recommendation
from watcher.fleet.learnings import Learning
from watcher.fleet.llm_prompts import LEARNINGS_SPEC, Turn, parse_learnings
from watcher.roles._health_snapshot import Snapshot
from watcher.roles.health import HEALTH_SPEC, HealthRole

__all__ = ["DEFAULT_TIMEOUT_S", "FORMS", "Judge", "TurnReader", "aclose", "fleet_evaluator", "fleet_extractor"]

log = logger("watcher.fleet")

_NO_FILES: MappingProxyType[str, KnownFile] = MappingProxyType({})  # a subject shows no files
FORMS = '"rules" (or empty), "anthropic:<model>" or "openai:<model>"'
# below the watcher loop's default 30 s interval: a slow model costs a cycle at most
DEFAULT_TIMEOUT_S = 20.0


class _Asking:
    """An evaluator behind a deadline, with the outcomes of its calls kept for the fleet to count.

    A call sets ``last_error`` as it returns, with no ``await`` in between, so reading it right
    after ``await`` gives that call's outcome even when calls for many tasks run concurrently.
    """

    def __init__(self, evaluator: Evaluator, *, timeout_s: float) -> None:
        self.evaluator = evaluator
        self.name = evaluator.name
        self.timeout_s = timeout_s
        self.last_error: str | None = None  # why the last call failed; None when it worked
        self.calls = 0
        self.failures = 0
        self.cost_usd = 0.0  # estimated, summed over every answered call

    async def _ask(self, request: EvaluationRequest, about: str) -> EvaluationResult | None:
        """The evaluator's result, or None with ``last_error`` set and a log line."""
        self.calls += 1
        try:
            async with asyncio.timeout(self.timeout_s):
                result = await self.evaluator.evaluate(request)
        except TimeoutError:
            self._failed(f"{self.name}: no answer within {self.timeout_s:g}s", about)
            return None
        except EvaluationError as exc:
            self._failed(redact(str(exc)), about)
            return None
        self.cost_usd += result.cost_usd
        self.last_error = None
        return result

    def _failed(self, error: str, about: str) -> None:
        self.failures += 1
        self.last_error = error
        log.warning("%s failed on %s (failed closed): %s", type(self).__name__, about, error)

    async def aclose(self) -> None:
        """Close the evaluator's HTTP connections (an LLM evaluator's)."""
        await aclose(self.evaluator)


async def aclose(evaluator: Evaluator) -> None:
    """Close ``evaluator``'s HTTP connections, if it has any (an LLM evaluator has; the rules have none)."""
    close = getattr(evaluator, "aclose", None)
    if close is not None:
        await close()


class Judge(_Asking):
    """Judges a task's snapshot with the ``health`` role: ``await judge(snapshot) -> Recommendation``.

    Without an evaluator the role's rules judge (offline, no deadline needed). An LLM evaluator's
    answer is read as the role's decision: ``[CONTINUE]`` continues; an interjection with
    ``action: pause`` or ``abort`` pauses or aborts; any other nudges with the model's content and
    severity, or escalates when it says ``urgent: true``.
    """

    def __init__(self, evaluator: Evaluator | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        if evaluator is not None and not isinstance(evaluator, Evaluator):
            raise ConfigurationError(
                f"a fleet's evaluator must be an Evaluator (an object with name and async evaluate(request)), "
                f"not {type(evaluator).__name__}; wrap a function of the request in "
                "watcher.evaluators.CallableEvaluator (the task's Snapshot is request.subject)"
            )
        super().__init__(evaluator or RulesEvaluator(HealthRole()), timeout_s=timeout_s)
        self.rules = evaluator is None

    async def __call__(self, snapshot: Snapshot) -> Recommendation:
        request = EvaluationRequest(
            spec=HEALTH_SPEC,
            parent=snapshot.task,
            observations=(),
            new=0,
            index=snapshot.iteration,
            breakpoint="health_check",
            files=_NO_FILES,
            subject=snapshot,
        )
        if self.rules:  # deterministic and instant; a rule that raises fails the cycle (degraded mode)
            return recommendation((await self.evaluator.evaluate(request)).decision)
        about = f"task {snapshot.task!r}"
        result = await self._ask(request, about)
        if result is not None and isinstance(result.decision, Continue) and result.decision.error:
            self._failed(f"{self.name}: {result.decision.error}", about)
            result = None
        if result is None:
            return Recommendation("continue", f"LLM evaluator failed, the task continues: {self.last_error}")
        return recommendation(result.decision, quoted="LLM evaluator")


class TurnReader(_Asking):
    """Asks a model for the learnings in one turn: ``await reader(task, turn) -> list[Learning]``.

    ``turn`` holds (observation index, observation, tool name) triples; the answer's format is
    ``watcher.fleet.llm_prompts.EXTRACTION_FORMAT`` (the evaluator's raw answer is read, not a
    decision). At most ``limit`` learnings per turn. Never raises.
    """

    def __init__(self, evaluator: Evaluator, *, timeout_s: float = DEFAULT_TIMEOUT_S, limit: int = 8) -> None:
        super().__init__(evaluator, timeout_s=timeout_s)
        self.limit = limit

    async def __call__(self, task: str, turn: Sequence[tuple[int, Observation, str]]) -> list[Learning]:
        if not turn:
            return []
        request = EvaluationRequest(
            spec=LEARNINGS_SPEC,
            parent=task,
            observations=(),
            new=len(turn),
            index=turn[-1][0],
            breakpoint="turn_done",
            subject=Turn(task, tuple(turn)),
        )
        try:
            result = await self._ask(request, f"a turn of task {task!r}")
        except Exception as exc:  # noqa: BLE001 - a reader of learnings must never break the task beside it
            self._failed(f"{self.name}: {type(exc).__name__}: {redact(str(exc))[:300]}", task)
            return []
        if result is None:
            return []
        learnings, dropped = parse_learnings(task, result.raw, [index for index, _, _ in turn], limit=self.limit)
        if dropped and not learnings:
            shown = " ".join(result.raw.split())[:120] or "(empty)"
            self._failed(f"{self.name}: unreadable answer (no LEARNING or NONE line): {redact(shown)!r}", task)
        elif dropped:
            log.info("TurnReader: %d malformed line(s) in %s's answer for task %r ignored", dropped, self.name, task)
        return learnings


def _model(
    name: str, *, role: str, base_url: str | None, api_key: str | None, timeout_s: float, max_tokens: int
) -> Evaluator | None:
    """The LLM evaluator ``name`` asks for, or None for the rules; ``role`` names it in errors."""
    spec = (name or "").strip()
    if spec.lower() in ("", "rules"):
        return None
    provider, _, model = (part.strip() for part in spec.partition(":"))
    provider = provider.lower()
    if provider == "openai-compatible":
        provider = "openai"
    if provider not in ("anthropic", "openai"):
        raise ConfigurationError(f"unknown fleet {role} {name!r}; expected {FORMS}")
    options: dict[str, Any] = {
        "model": model or None,
        "base_url": base_url,
        "api_key": api_key,
        "timeout": timeout_s,
        "max_retries": 0,  # a supervision cycle would rather skip one judgement than wait for a retry
        "max_tokens": max_tokens,
        "prompt_budget": None,  # the fleet's prompts are small and bounded: never counted nor shortened
    }
    try:
        return EVALUATORS[provider](HealthRole.name, **options)  # None options too: no prompt budget
    except MissingCredentialsError:
        raise
    except ConfigurationError as exc:
        if provider == "openai" and not model:
            raise ConfigurationError(
                f"fleet {role} {name!r} names no model; write openai:<model> (a model your server has loaded)"
            ) from exc
        raise


def fleet_evaluator(
    name: str | None, *, base_url: str | None = None, api_key: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S
) -> Evaluator | None:
    """The health role's evaluator called ``name``: None for the rules, else an LLM evaluator.

    The key is ``api_key`` or the provider's usual environment variable (``ANTHROPIC_API_KEY``,
    ``OPENAI_API_KEY``; a local ``base_url`` needs none); a missing one raises
    ``MissingCredentialsError`` and an unknown name ``ConfigurationError``.
    """
    return _model(name or "", role="evaluator", base_url=base_url, api_key=api_key, timeout_s=timeout_s, max_tokens=512)


def fleet_extractor(
    name: str | None, *, base_url: str | None = None, api_key: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S
) -> TurnReader | None:
    """The fleet's learning extractor called ``name``: None for the rules, else a ``TurnReader``."""
    model = _model(
        name or "", role="extractor", base_url=base_url, api_key=api_key, timeout_s=timeout_s, max_tokens=1024
    )
    return None if model is None else TurnReader(model, timeout_s=timeout_s)
