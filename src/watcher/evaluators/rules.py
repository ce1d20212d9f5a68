"""The rules evaluator: runs an offline ``Role`` and answers in the protocol format."""

from __future__ import annotations

from watcher.core.evaluation import EvaluationRequest, EvaluationResult
from watcher.core.protocol import render_decision
from watcher.core.rules import Role

__all__ = ["RulesEvaluator"]


class RulesEvaluator:
    """Evaluates with a rule-based role: deterministic, offline, no API key needed."""

    def __init__(self, role: Role) -> None:
        self.role = role
        self.name = f"rules:{role.name}"

    async def evaluate(self, request: EvaluationRequest) -> EvaluationResult:
        decision = self.role.evaluate(request.observations, request.new)
        return EvaluationResult(render_decision(decision), decision, model="rules")
