"""Building an evaluator by name, as the CLI, magics and ``watcher.agent`` ask for it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from watcher.core.errors import ConfigurationError
from watcher.core.evaluation import Evaluator
from watcher.evaluators._keys import anthropic_key
from watcher.evaluators.rules import RulesEvaluator
from watcher.roles import ROLE_NAMES, make_role
from watcher.settings import Settings

__all__ = ["EVALUATORS", "make_evaluator"]


def _rules(role: str, settings: Settings | None = None, **options: Any) -> Evaluator:
    # options configure the role itself, e.g. make_evaluator("rules", "stuck", wait_budget=5)
    return RulesEvaluator(make_role(role, **options))


def _anthropic(role: str, settings: Settings | None = None, backstop: bool = True, **options: Any) -> Evaluator:
    settings = settings or Settings.from_env()
    options["api_key"] = anthropic_key(options.get("api_key"), settings)  # a missing key is said before the SDK loads
    # imported here so the SDK loads only when an LLM watcher is asked for
    from watcher.evaluators.anthropic import AnthropicEvaluator

    return AnthropicEvaluator(settings=settings, backstop=_backstop(role) if backstop else None, **options)


def _openai(role: str, settings: Settings | None = None, backstop: bool = True, **options: Any) -> Evaluator:
    from watcher.evaluators.openai_compat import OpenAICompatEvaluator

    return OpenAICompatEvaluator(settings=settings, backstop=_backstop(role) if backstop else None, **options)


def _backstop(role: str) -> Evaluator | None:
    """The role's offline rules, which judge an evaluation the model failed; None for a role that has none.

    Off the event loop when a call is heavy, as the hook daemon runs its rules: one session's large
    file must not hold the others'.
    """
    return RulesEvaluator(make_role(role), off_loop=True) if role in ROLE_NAMES else None


# name -> factory(role, settings=None, **options). The LLM evaluators take model=, base_url=, api_key=, ...;
# what they are not given comes from the settings (None: read from the environment at that call). They
# fall back on the role's offline rules for an evaluation the model failed; backstop=False (watcher eval,
# which measures the model alone) lets such an evaluation fail
EVALUATORS: dict[str, Callable[..., Evaluator]] = {
    "anthropic": _anthropic,
    "openai": _openai,
    "openai-compatible": _openai,
    "rules": _rules,
}


def make_evaluator(name: str, role: str, **options: Any) -> Evaluator:
    """The evaluator called ``name`` for ``role`` (``rules`` needs no key and no network).

    ``settings=`` hands an LLM evaluator the environment read at the boundary (else it reads it now).
    """
    factory = EVALUATORS.get(name)
    if factory is None:
        raise ConfigurationError(f"unknown evaluator {name!r}; expected one of: {', '.join(sorted(EVALUATORS))}")
    return factory(role, **{k: v for k, v in options.items() if v is not None})
