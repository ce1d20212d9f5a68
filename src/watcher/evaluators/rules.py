"""The rules evaluator: runs an offline ``Role`` and answers in the protocol format."""

from __future__ import annotations

from dataclasses import replace

from watcher.core.answers import render_decision
from watcher.core.evaluation import EvaluationRequest, EvaluationResult
from watcher.core.interjection import Decision, Interject
from watcher.core.rules import Role

__all__ = ["RulesEvaluator"]


class RulesEvaluator:
    """Evaluates with a rule-based role: deterministic, offline, no API key needed."""

    def __init__(self, role: Role) -> None:
        self.role = role
        self.name = f"rules:{role.name}"

    async def evaluate(self, request: EvaluationRequest) -> EvaluationResult:
        decision = _for_subagent(self.role.judge(request), request)
        return EvaluationResult(render_decision(decision), decision, model="rules")


def _for_subagent(decision: Decision, request: EvaluationRequest) -> Decision:
    """Say so when the session judged is a subagent: its main agent is a different session."""
    last = request.observations[-1] if request.observations else None
    if not isinstance(decision, Interject) or last is None or not last.parent_session:
        return decision
    session, parent = last.session or request.parent, last.parent_session
    short = session.removeprefix(f"{parent}/")  # sessions are named "<main>/subagent-<n>"
    content = f"In the subagent {short!r} of session {parent[:8] + '…' if len(parent) > 12 else parent}: "
    interjection = replace(decision.interjection, content=content + decision.interjection.content)
    return replace(decision, interjection=interjection)
