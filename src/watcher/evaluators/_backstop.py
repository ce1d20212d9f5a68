"""The offline rules as a backstop: an LLM evaluation that failed is judged by its role's rules instead.

The hooks always run the guard's rules beside an LLM watcher, but a replay, a spawn, an agent run
or a notebook had only the model: one that failed every call (a dead key, an outage, a model that
answers in no protocol) left the role unwatched, each evaluation a quiet *continue*. With a
backstop, such an evaluation is judged by the role's offline rules, and says so: its decision is
the rules', and its ``error`` names the model's failure and the rules that judged instead, so
the journal, ``hooks status`` and a panel still show that the model failed.

The rules judge only the evaluations the model failed: the model's judgments stand, and the
role's state (what it reported, how far it escalated) follows what it said itself.
"""

from __future__ import annotations

from dataclasses import replace

from watcher.core.errors import EvaluationError
from watcher.core.evaluation import EvaluationRequest, EvaluationResult, Evaluator
from watcher.core.interjection import Continue

__all__ = ["backstopped", "failed"]


def failed(result: EvaluationResult) -> str | None:
    """What went wrong when the model answered but its answer decides nothing (no block, a refusal), else None."""
    decision = result.decision
    return decision.error if isinstance(decision, Continue) and decision.error else None


async def backstopped(
    backstop: Evaluator, request: EvaluationRequest, failure: str, answered: EvaluationResult | None = None
) -> EvaluationResult:
    """``backstop``'s judgment of ``request``, its ``error`` saying the model's ``failure``.

    ``answered`` is the model's unusable result, when it answered: its tokens and cost were spent
    and stay counted, and its prompt is kept for the journal.
    """
    try:
        ruled = await backstop.evaluate(request)
    except Exception as exc:  # both failed: the engine records it and continues
        raise EvaluationError(f"{failure}; the offline {backstop.name} rules failed too: {exc}") from exc
    said = f"{failure} (the offline {backstop.name} rules judged this evaluation instead)"
    decision = replace(ruled.decision, error=said)
    if answered is None:
        return replace(ruled, decision=decision)
    return replace(answered, raw=ruled.raw, decision=decision, model=ruled.model or "rules")
