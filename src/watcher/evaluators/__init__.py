"""Evaluators: rules (offline, the default), plain callables, and LLM evaluators."""

from __future__ import annotations

from watcher.evaluators.callable import CallableEvaluator
from watcher.evaluators.registry import EVALUATORS, make_evaluator
from watcher.evaluators.rules import RulesEvaluator

__all__ = ["EVALUATORS", "CallableEvaluator", "RulesEvaluator", "make_evaluator"]
