"""An evaluator made from any Python function (sync or async).

A synchronous function runs in a thread of its own, never on the event loop: one that blocks
(or never returns) then only holds its thread, and the watcher's timeout ends the evaluation
while the agent run it watches goes on. The thread is a daemon so a stuck function cannot keep
the process from exiting. A judge that calls ``exit()`` or raises ``KeyboardInterrupt`` fails
its evaluation: asyncio would otherwise stop the loop, and the session on it. What an
interjection says is clipped as an LLM's is (``bounded``): it enters the parent's context.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from watcher.core.answers import parse_decision, render_decision
from watcher.core.errors import EvaluationError
from watcher.core.evaluation import EvaluationRequest, EvaluationResult
from watcher.core.interjection import Continue, Decision, Interject, Interjection
from watcher.evaluators._llm import bounded

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
        try:
            if inspect.iscoroutinefunction(self.fn) or inspect.iscoroutinefunction(type(self.fn).__call__):
                answer = self.fn(request)
            else:
                answer = await _in_thread(self.fn, request, name=self.name)
            if inspect.isawaitable(answer):
                answer = await answer
        except SystemExit as exc:  # asyncio would end the loop, and the session it runs, with it
            raise EvaluationError(f"{self.name} called exit({exc.code!r}); a judge returns its answer") from None
        if isinstance(answer, str):
            return EvaluationResult(answer, bounded(parse_decision(answer)))
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
        decision = bounded(decision)
        return EvaluationResult(render_decision(decision), decision)


async def _in_thread(fn: Callable[[EvaluationRequest], Any], request: EvaluationRequest, *, name: str) -> Any:
    """``fn(request)`` in a daemon thread; cancelling the await abandons the thread, never the loop."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(outcome: Any, error: BaseException | None) -> None:
        if future.done():  # the evaluation timed out meanwhile
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(outcome)

    def target() -> None:
        outcome: Any = None
        error: BaseException | None = None
        try:
            outcome = fn(request)
        except (KeyboardInterrupt, GeneratorExit) as exc:  # the judge's own (a signal never reaches this thread)
            error = EvaluationError(f"{name} raised {type(exc).__name__}; a judge returns its answer")
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting evaluation, which fails closed
            error = exc  # SystemExit included: ``evaluate`` turns it into an EvaluationError
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody is waiting any more
            loop.call_soon_threadsafe(settle, outcome, error)

    threading.Thread(target=target, name=f"watcher-evaluator:{name}", daemon=True).start()
    return await future
