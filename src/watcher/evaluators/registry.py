"""Building an evaluator by name, as the CLI, magics and ``watcher.agent`` ask for it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from watcher.core.errors import ConfigurationError
from watcher.core.evaluation import Evaluator
from watcher.evaluators._keys import anthropic_key
from watcher.evaluators.rules import RulesEvaluator
from watcher.roles import make_role

__all__ = ["EVALUATORS", "make_evaluator"]


def _rules(role: str, **options: Any) -> Evaluator:
    # options configure the role itself, e.g. make_evaluator("rules", "stuck", wait_budget=5)
    return RulesEvaluator(make_role(role, **options))


def _anthropic(role: str, **options: Any) -> Evaluator:
    options["api_key"] = anthropic_key(options.get("api_key"))  # a missing key is said before the SDK loads
    # imported here so the SDK loads only when an LLM watcher is asked for
    from watcher.evaluators.anthropic import AnthropicEvaluator

    return AnthropicEvaluator(**options)


def _openai(role: str, **options: Any) -> Evaluator:
    from watcher.evaluators.openai_compat import OpenAICompatEvaluator

    return OpenAICompatEvaluator(**options)


# name -> factory(role, **options). The LLM evaluators take model=, base_url=, api_key=, ...
EVALUATORS: dict[str, Callable[..., Evaluator]] = {
    "anthropic": _anthropic,
    "openai": _openai,
    "openai-compatible": _openai,
    "rules": _rules,
}


def make_evaluator(name: str, role: str, **options: Any) -> Evaluator:
    """The evaluator called ``name`` for ``role`` (``rules`` needs no key and no network)."""
    factory = EVALUATORS.get(name)
    if factory is None:
        raise ConfigurationError(f"unknown evaluator {name!r}; expected one of: {', '.join(sorted(EVALUATORS))}")
    return factory(role, **{k: v for k, v in options.items() if v is not None})
