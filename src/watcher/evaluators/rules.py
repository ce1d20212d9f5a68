"""The rules evaluator: runs an offline ``Role`` and answers in the protocol format."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace

from watcher.core.answers import render_decision
from watcher.core.evaluation import EvaluationRequest, EvaluationResult
from watcher.core.interjection import Decision, Interject
from watcher.core.rules import Role

__all__ = ["RulesEvaluator"]


class RulesEvaluator:
    """Evaluates with a rule-based role: deterministic, offline, no API key needed.

    ``off_loop``: a call carrying much new text (a large file) is judged on a worker thread, one
    judgment of this role at a time, so its review does not hold the event loop (the hook daemon
    serves every session from one loop); a small call is judged at once, as without it.
    """

    def __init__(self, role: Role, *, off_loop: bool = False) -> None:
        self.role = role
        self.name = f"rules:{role.name}"
        self._lock = threading.Lock() if off_loop else None

    async def evaluate(self, request: EvaluationRequest) -> EvaluationResult:
        if self._lock is None:
            judged = self.role.judge(request)
        elif not _heavy(request) and self._lock.acquire(blocking=False):
            try:  # a small call: judged at once, a thread hop costs more than the judgment
                judged = self.role.judge(request)
            finally:
                self._lock.release()
        else:
            judged = await asyncio.to_thread(self._judge, request, self._lock)
        decision = _for_subagent(judged, request)
        return EvaluationResult(render_decision(decision), decision, model="rules")

    def _judge(self, request: EvaluationRequest, lock: threading.Lock) -> Decision:
        with lock:  # a role keeps its history: never two judgments of it at once
            return self.role.judge(request)


# characters of new observations past which a judgment goes to a worker thread (a 20 kB file is
# reviewed in about 10 ms; a 2.6 MB one took seconds)
_HEAVY_CHARS = 20_000


def _heavy(request: EvaluationRequest) -> bool:
    """The new observations carry more text than a judgment on the event loop should take."""
    budget = _HEAVY_CHARS
    stack: list[object] = [o.to_dict() for o in request.observations[-request.new :]] if request.new else []
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            budget -= len(value)
            if budget < 0:
                return True
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return False


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
