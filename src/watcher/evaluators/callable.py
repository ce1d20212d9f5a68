"""An evaluator made from any Python function (sync or async)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

from watcher.core.errors import EvaluationError
from watcher.core.evaluation import EvaluationRequest, EvaluationResult
from watcher.core.interjection import Continue, Decision, Interject, Interjection
from watcher.core.protocol import parse_decision, render_decision

__all__ = ["CallableEvaluator"]

Answer = str | Decision | Interjection | None
Judge = Callable[[EvaluationRequest], Answer | Awaitable[Answer]]


class CallableEvaluator:
    """Wraps ``fn(request)``, which answers with protocol text, a decision, an interjection or None.

    Text is parsed exactly as an LLM's answer would be; None means continue.
    """

    def __init__(self, fn: Judge, *, name: str | None = None) -> None:
        self.fn = fn
        self.name = name or f"callable:{getattr(fn, '__name__', 'fn')}"

    async def evaluate(self, request: EvaluationRequest) -> EvaluationResult:
        answer = self.fn(request)
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, str):
            return EvaluationResult(answer, parse_decision(answer))
        decision: Decision
        if answer is None:
            decision = Continue()
        elif isinstance(answer, Interjection):
            decision = Interject(answer)
        elif isinstance(answer, Continue | Interject):
            decision = answer
        else:
            raise EvaluationError(
                f"{self.name} returned {type(answer).__name__}; return a str, Decision, Interjection or None"
            )
        return EvaluationResult(render_decision(decision), decision)
