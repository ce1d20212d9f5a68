"""The benchmark's watcher: a snapshot of the deviation in, guidance for the agent out.

The watcher judges through the product's evaluator port, in the ``[WATCHER EVALUATION]``
protocol: its interjection's content becomes the ``[SUPERVISOR]: ...`` message the agent sees.
Three modes:

- **guided** (seed 003): the deviation note tells the watcher the expected next step;
- **blind**: the watcher sees only what the agent did and what came back, and must infer the way;
- **rules**: an offline watcher, no model: it points the agent back at the last trace that was on
  the chain and quotes that trace's pointer.

Model watchers get a **minimal** snapshot (the task, the last action, its result, the deviation
note); after repeated failures (a second attempt at the same step, or a wrong-read streak of two
or more) they get the whole history. Any failure — an HTTP error, a timeout, an answer outside
the protocol — comes back as ``Guidance(error=...)`` and the run resumes at once (fail closed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from watcher.bench.world import parse_pointer
from watcher.core.evaluation import EvaluationRequest, Evaluator
from watcher.core.interjection import Interject
from watcher.core.observations import HarnessError, Observation, ToolCall, ToolResult, UserMessage
from watcher.core.spec import WatcherSpec
from watcher.evaluators.callable import CallableEvaluator

__all__ = ["BRIEF", "Guidance", "Snapshot", "Supervisor", "WatcherMode", "rules_evaluator"]

WatcherMode = Literal["guided", "blind", "rules"]

BRIEF = (
    "You are a Supervisor for an automated agent that follows a chain of trace files to a final "
    "token. The agent has just deviated from the chain. Read the last action, its result and the "
    "deviation note, then interject with clear, instructional guidance that takes the agent to the "
    "correct next step: name the file to read or the directory to list when you can tell. Keep it "
    "to one or two sentences."
)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the harness knows at a deviation: the history, the expected step and the attempt number."""

    history: Sequence[Observation]  # the whole run, tool results carrying their status in ``extra``
    expected: str
    status: str
    drift: int
    wrong_streak: int
    attempt: int  # 1 for the first intervention at this step


@dataclass(frozen=True, slots=True)
class Guidance:
    """The watcher's answer: guidance text, or none (it declined), or an error (it failed; fail closed)."""

    text: str | None
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


def _last_action(history: Sequence[Observation]) -> list[Observation]:
    for i in range(len(history) - 1, -1, -1):
        if isinstance(history[i], ToolCall):
            return list(history[i : i + 2])
    return []


def _note(snapshot: Snapshot, guided: bool) -> str:
    head = f"System deviation: status {snapshot.status}, drift {snapshot.drift}, wrong-read streak {snapshot.wrong_streak}."
    if not guided:
        return head + " The agent has left the chain."
    if snapshot.expected == "submit_answer":
        return head + " Expected: submit_answer with the final token the agent has already read."
    return head + f" Expected: read_file {snapshot.expected}."


class Supervisor:
    """One watcher for one condition: builds the snapshot, calls its evaluator, fails closed."""

    def __init__(self, mode: WatcherMode, evaluator: Evaluator, *, timeout: float = 30.0) -> None:
        self.mode = mode
        self.evaluator = evaluator
        self.timeout = timeout
        self.spec = WatcherSpec(
            name=f"longchain-{mode}", role="supervisor", description="long-chain supervisor", brief=BRIEF
        )

    def request(self, snapshot: Snapshot, task: int) -> EvaluationRequest:
        """The evaluation request: minimal snapshot first, the whole history after repeated failures."""
        history = list(snapshot.history)
        repeated = snapshot.attempt > 1 or snapshot.wrong_streak > 1
        if self.mode == "rules" or repeated:
            shown = history
        else:
            shown = [o for o in history[:1] if isinstance(o, UserMessage)] + _last_action(history)
        shown.append(HarnessError(text=_note(snapshot, self.mode == "guided")))
        return EvaluationRequest(
            self.spec, f"longchain task {task}", tuple(shown), len(shown), len(history), "tool_result"
        )

    async def guidance(self, snapshot: Snapshot, task: int) -> Guidance:
        """Ask the watcher; never raises (a failure is ``Guidance(error=...)``)."""
        try:
            result = await asyncio.wait_for(self.evaluator.evaluate(self.request(snapshot, task)), self.timeout)
        except TimeoutError:
            return Guidance(None, f"the watcher gave no answer within {self.timeout:g}s")
        except Exception as exc:  # noqa: BLE001 - fail closed: any watcher failure lets the run resume
            return Guidance(None, f"{type(exc).__name__}: {exc}")
        usage = result.usage
        tokens_in = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        decision = result.decision
        if decision.error:
            return Guidance(None, decision.error, tokens_in, usage.output_tokens, result.cost_usd)
        text = decision.interjection.content.strip() if isinstance(decision, Interject) else None
        return Guidance(text or None, None, tokens_in, usage.output_tokens, result.cost_usd)

    async def aclose(self) -> None:
        close = getattr(self.evaluator, "aclose", None)
        if close is not None:
            await close()


def _rules(request: EvaluationRequest) -> str:
    """The offline watcher: back to the last trace read on the chain, and its pointer quoted."""
    observations = list(request.observations)
    calls = {o.id: o for o in observations if isinstance(o, ToolCall)}
    last_ok: tuple[str, str] | None = None
    for obs in observations:
        if isinstance(obs, ToolResult) and obs.extra.get("status") == "OK":
            call = calls.get(obs.tool_call_id)
            if call is not None and call.name == "read_file":
                last_ok = (str(call.input.get("path", "")), obs.output)
    if last_ok is None:
        task = next((o.text for o in observations if isinstance(o, UserMessage)), "")
        advice = "Go back to the start file named in your task and read it" + (f": {task}" if task else ".")
    else:
        path, content = last_ok
        pointer = parse_pointer(content)
        if pointer is None:
            advice = f"Go back to {path}, the last trace on the chain, and follow its pointer."
        elif pointer.kind == "final":
            advice = f"You already read the final token in {path}: submit it with submit_answer."
        elif pointer.kind == "direct":
            advice = f"That was not on the chain. The last trace on the chain, {path}, says NEXT: {pointer.value} — read_file {pointer.value}."
        else:
            advice = (
                f"That was not on the chain. The last trace on the chain, {path}, points to {pointer.describe()}: "
                f"list_dir {pointer.value} and read the lowest-numbered trace above {pointer.above}."
            )
    return f"[INTERJECT]\nurgent: false\naction: guidance\ncontent: {advice}\n[/INTERJECT]"


def rules_evaluator() -> CallableEvaluator:
    """The offline rules watcher as an evaluator (no model, no network)."""
    return CallableEvaluator(_rules, name="rules:longchain")
