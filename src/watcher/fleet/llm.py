"""The fleet's LLM evaluator and LLM extractor, chosen by name (``[fleet] evaluator = "anthropic:<model>"``).

``fleet_evaluator(name)`` and ``fleet_extractor(name)`` turn a configured name into one of them,
or into None when the name is ``rules`` (or empty): the fleet's rules then apply. Both ride on
the LLM evaluators' clients (``watcher.evaluators``), so keys, base URLs, SDK error translation
and redaction are the same as for any LLM watcher.

Both fail closed and never raise out of a call: a timeout, an HTTP error or an answer that cannot
be read gives *continue* (the evaluator) or no learnings (the extractor), a log line, and the
reason in ``last_error`` (None after a call that worked; read it right after the ``await``),
which the fleet's loops can count.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

from watcher.core.errors import ConfigurationError, EvaluationError
from watcher.core.evaluation import EvaluationResult
from watcher.core.interjection import Continue
from watcher.core.logs import logger
from watcher.core.observations import Observation
from watcher.core.protocol import EvaluationPrompt
from watcher.core.redact import redact
from watcher.evaluators._llm_base import LLMEvaluator as ModelClient
from watcher.fleet.judge import Recommendation
from watcher.fleet.learnings import Learning
from watcher.fleet.llm_prompts import extraction_prompt, health_prompt, parse_learnings, recommendation
from watcher.fleet.snapshot import Snapshot

__all__ = ["DEFAULT_TIMEOUT_S", "FORMS", "LLMEvaluator", "LLMExtractor", "fleet_evaluator", "fleet_extractor"]

log = logger("watcher.fleet.llm")

FORMS = '"rules" (or empty), "anthropic:<model>" or "openai:<model>"'
# below the watcher loop's default 30 s interval: a slow model costs a cycle at most
DEFAULT_TIMEOUT_S = 20.0


class _ModelCall:
    """One model behind a deadline, with the outcomes of its calls kept for the fleet to count.

    ``last_error`` is the reason the call that just returned failed, None when it worked. A call
    sets it as it returns, with no ``await`` in between, so reading it right after
    ``await evaluator(snapshot)`` gives that call's outcome even when calls for many tasks run
    concurrently; ``failures`` counts every failure so far.
    """

    def __init__(self, model: ModelClient, *, timeout_s: float) -> None:
        self.model = model
        self.name = model.name
        self.timeout_s = timeout_s
        self.last_error: str | None = None  # why the last call failed; None when it worked
        self.calls = 0
        self.failures = 0
        self.cost_usd = 0.0  # estimated, summed over every answered call

    async def _ask(self, prompt: EvaluationPrompt, about: str) -> EvaluationResult | None:
        """The model's answer, or None with ``last_error`` set and a log line (never raises)."""
        self.calls += 1
        error = ""
        try:
            async with asyncio.timeout(self.timeout_s):
                result = await self.model.ask(prompt)
        except TimeoutError:
            error = f"{self.name}: no answer within {self.timeout_s:g}s"
        except EvaluationError as exc:
            error = str(exc)
        except Exception as exc:  # noqa: BLE001 - a supervision helper must never break the loop calling it
            error = f"{self.name}: {type(exc).__name__}: {redact(str(exc))[:300]}"
        if error:
            self._failed(error, about)
            return None
        self.cost_usd += result.cost_usd
        self.last_error = None
        return result

    def _failed(self, error: str, about: str) -> None:
        self.failures += 1
        self.last_error = error
        log.warning("%s failed on %s (failed closed): %s", type(self).__name__, about, error)

    async def aclose(self) -> None:
        """Close the model's HTTP connections."""
        await self.model.aclose()


class LLMEvaluator(_ModelCall):
    """Judges a task's snapshot with a model: ``await evaluator(snapshot) -> Recommendation``.

    The model answers in the ``[INTERJECT]``/``[CONTINUE]`` protocol: ``[CONTINUE]`` continues;
    an interjection with ``action: pause`` or ``abort`` pauses or aborts; any other interjection
    nudges with the model's content and severity, or escalates when it says ``urgent: true``.
    """

    async def __call__(self, snapshot: Snapshot) -> Recommendation:
        result = await self._ask(health_prompt(snapshot), f"task {snapshot.task!r}")
        if result is not None and isinstance(result.decision, Continue) and result.decision.error:
            self._failed(f"{self.name}: {result.decision.error}", f"task {snapshot.task!r}")
            result = None
        if result is None:
            return Recommendation("continue", f"LLM evaluator failed, the task continues: {self.last_error}")
        return recommendation(result.decision)


class LLMExtractor(_ModelCall):
    """Asks a model for the learnings in one turn: ``await extractor(task, turn) -> list[Learning]``.

    ``turn`` holds (observation index, observation, tool name) triples; the answer's format is
    ``watcher.fleet.llm_prompts.EXTRACTION_FORMAT``. At most ``limit`` learnings per turn.
    """

    def __init__(self, model: ModelClient, *, timeout_s: float, limit: int = 8) -> None:
        super().__init__(model, timeout_s=timeout_s)
        self.limit = limit

    async def __call__(self, task: str, turn: Sequence[tuple[int, Observation, str]]) -> list[Learning]:
        if not turn:
            return []
        result = await self._ask(extraction_prompt(task, turn), f"a turn of task {task!r}")
        if result is None:
            return []
        learnings, dropped = parse_learnings(task, result.raw, [index for index, _, _ in turn], limit=self.limit)
        if dropped and not learnings:
            shown = " ".join(result.raw.split())[:120] or "(empty)"
            self._failed(f"{self.name}: unreadable answer (no LEARNING or NONE line): {redact(shown)!r}", task)
        elif dropped:
            log.info("LLMExtractor: %d malformed line(s) in %s's answer for task %r ignored", dropped, self.name, task)
        return learnings


def _model(
    name: str, *, role: str, base_url: str | None, api_key: str | None, timeout_s: float, max_tokens: int
) -> ModelClient | None:
    """The model client ``name`` asks for, or None for the rules; ``role`` names it in errors."""
    spec = (name or "").strip()
    if spec.lower() in ("", "rules"):
        return None
    provider, _, model = spec.partition(":")
    options: dict[str, Any] = {
        "model": model.strip() or None,
        "base_url": base_url,
        "api_key": api_key,
        "timeout": timeout_s,
        "max_retries": 0,  # a supervision cycle would rather skip one judgement than wait for a retry
        "max_tokens": max_tokens,
    }
    # imported here so an SDK loads only when an LLM is asked for
    if provider.strip().lower() == "anthropic":
        from watcher.evaluators.anthropic import AnthropicEvaluator

        return AnthropicEvaluator(**options)
    if provider.strip().lower() in ("openai", "openai-compatible"):
        if not options["model"] and not os.environ.get("WATCHER_OPENAI_MODEL"):
            raise ConfigurationError(
                f"fleet {role} {name!r} names no model; write openai:<model> (a model your server has loaded)"
            )
        from watcher.evaluators.openai_compat import OpenAICompatEvaluator

        return OpenAICompatEvaluator(**options)
    raise ConfigurationError(f"unknown fleet {role} {name!r}; expected {FORMS}")


def fleet_evaluator(
    name: str | None,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> LLMEvaluator | None:
    """The fleet's evaluator called ``name``: None for the rules, else an ``LLMEvaluator``.

    The key is ``api_key`` or the provider's usual environment variable (``ANTHROPIC_API_KEY``,
    ``OPENAI_API_KEY``; a local ``base_url`` needs none); a missing one raises
    ``MissingCredentialsError`` and an unknown name ``ConfigurationError``.
    """
    model = _model(
        name or "", role="evaluator", base_url=base_url, api_key=api_key, timeout_s=timeout_s, max_tokens=512
    )
    return None if model is None else LLMEvaluator(model, timeout_s=timeout_s)


def fleet_extractor(
    name: str | None,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> LLMExtractor | None:
    """The fleet's learning extractor called ``name``: None for the rules, else an ``LLMExtractor``."""
    model = _model(
        name or "", role="extractor", base_url=base_url, api_key=api_key, timeout_s=timeout_s, max_tokens=1024
    )
    return None if model is None else LLMExtractor(model, timeout_s=timeout_s)
