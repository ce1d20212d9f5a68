"""One task: the agent loop over a world, with the watcher's intervention loop (seed 003).

Every model call is a step — the agent's and the watcher's alike — and the run ends at
``max_steps`` (watcher steps count against the limit, so supervision can never loop forever).
After each agent step the harness judges the tool call; when it deviates (WRONG or OFF with a
drift above zero) and a watcher is on, the run pauses: the watcher sees a snapshot, its guidance
is appended as ``[SUPERVISOR]: ...``, the agent retries. At most ``retry_cap`` interventions per
step; then the pause is released and the agent goes on alone. A watcher that fails is logged and
the run resumes at once. Mistakes are fixed forward: nothing is undone.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from watcher.bench.agent import Conversation, PrimaryAgent
from watcher.bench.supervisor import Snapshot, Supervisor
from watcher.bench.tools import StepStatus, ToolOutcome, Tracker, execute
from watcher.bench.world import World
from watcher.core.errors import AgentModelError
from watcher.core.logs import logger
from watcher.core.observations import AssistantMessage, Observation, ToolCall, ToolResult, UserMessage

__all__ = ["TaskResult", "run_task", "task_prompt"]

log = logger("watcher.bench")

REMINDER = "Use the tools: list_dir, read_file, and submit_answer once you have the final token."


def task_prompt(world: World) -> str:
    """The task as the agent reads it (names the task number, so simulated policies can seed on it)."""
    return (
        f"Task {world.task}: start at {world.start}. Each trace names the next one. Follow the chain "
        "to its end and submit the final token with submit_answer."
    )


@dataclass(slots=True)
class TaskResult:
    """One task's outcome and costs: one JSONL row of the results."""

    condition: str
    task: int
    chain_length: int
    success: bool = False
    end: str = "max_steps"  # submitted | wrong_answer | max_steps | agent_error
    steps: int = 0
    agent_steps: int = 0
    watcher_steps: int = 0
    correction_steps: int = 0
    interventions: int = 0
    cap_releases: int = 0
    watcher_failures: int = 0
    watcher_declined: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    watcher_input_tokens: int = 0
    watcher_output_tokens: int = 0
    cost_usd: float = 0.0
    # one letter a tool call or watcher step: O(K) W(RONG) X (OFF) S(upervisor) F(ailed watcher) A(nswer without a tool call)
    trace: str = ""
    errors: list[str] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        return asdict(self)


class _Run:
    def __init__(
        self,
        world: World,
        agent: PrimaryAgent,
        supervisor: Supervisor | None,
        result: TaskResult,
        max_steps: int,
        retry_cap: int,
    ) -> None:
        self.world = world
        self.agent = agent
        self.supervisor = supervisor
        self.result = result
        self.max_steps = max_steps
        self.retry_cap = retry_cap
        self.tracker = Tracker(world)
        self.conversation = Conversation(task_prompt(world))
        self.history: list[Observation] = [UserMessage(text=self.conversation.task)]
        self.last: StepStatus | None = None
        self.done = False

    @property
    def budget_left(self) -> bool:
        return self.result.steps < self.max_steps and not self.done

    async def agent_step(self, *, correction: bool) -> None:
        r = self.result
        r.steps += 1
        r.agent_steps += 1
        r.correction_steps += correction
        try:
            turn = await self.agent.turn(self.conversation)
        except AgentModelError as exc:
            r.end, self.done = "agent_error", True
            r.errors.append(str(exc))
            return
        r.input_tokens += turn.input_tokens
        r.output_tokens += turn.output_tokens
        self.conversation.add_turn(turn)
        if turn.text:
            self.history.append(AssistantMessage(text=turn.text))
        if not turn.calls:
            self.last = self.tracker.judge("(no tool call)", {}, ToolOutcome("no tool call", is_error=True))
            r.trace += "A"
            self.conversation.add_user(REMINDER)
            return
        for call in turn.calls:
            outcome = execute(self.world, call.name, call.args)
            self.conversation.add_result(call.id, outcome.text, outcome.is_error)
            self.last = status = self.tracker.judge(call.name, call.args, outcome)
            self.history.append(ToolCall(id=call.id, name=call.name, input=call.args))
            self.history.append(
                ToolResult(
                    tool_call_id=call.id,
                    output=outcome.text,
                    is_error=outcome.is_error,
                    extra={"status": status.status},
                )
            )
            r.trace += {"OK": "O", "WRONG": "W", "OFF": "X"}[status.status]
            if outcome.answer is not None:
                r.success = outcome.answer == self.world.token
                r.end, self.done = ("submitted" if r.success else "wrong_answer"), True
                return

    async def intervene(self, supervisor: Supervisor) -> None:
        r = self.result
        attempt = 0
        while self.last is not None and self.last.deviating and self.budget_left and attempt < self.retry_cap:
            r.steps += 1
            r.watcher_steps += 1
            last = self.last
            snapshot = Snapshot(
                tuple(self.history), last.expected, last.status, last.drift, last.wrong_streak, attempt + 1
            )
            guidance = await supervisor.guidance(snapshot, self.world.task)
            r.watcher_input_tokens += guidance.input_tokens
            r.watcher_output_tokens += guidance.output_tokens
            r.cost_usd += guidance.cost_usd
            if guidance.error is not None:  # fail closed: log it and resume at once
                r.watcher_failures += 1
                r.trace += "F"
                r.errors.append(guidance.error)
                log.warning("task %s: the watcher failed, the run resumes: %s", self.world.task, guidance.error)
                return
            if guidance.text is None:  # the watcher saw nothing to say: release the pause
                r.watcher_declined += 1
                r.trace += "S"
                return
            attempt += 1
            r.interventions += 1
            r.trace += "S"
            self.conversation.add_user(f"[SUPERVISOR]: {guidance.text}")
            self.history.append(UserMessage(text=f"[SUPERVISOR]: {guidance.text}"))
            if not self.budget_left:
                return
            await self.agent_step(correction=True)
        if attempt >= self.retry_cap and self.last is not None and self.last.deviating and not self.done:
            r.cap_releases += 1

    async def run(self) -> TaskResult:
        while self.budget_left:
            await self.agent_step(correction=False)
            if self.supervisor is not None and self.last is not None and self.last.deviating and self.budget_left:
                await self.intervene(self.supervisor)
        return self.result


async def run_task(
    world: World,
    agent: PrimaryAgent,
    supervisor: Supervisor | None,
    *,
    condition: str,
    max_steps: int,
    retry_cap: int = 3,
) -> TaskResult:
    """Run one task to its end (an answer, the step limit, or an agent failure) and return its row."""
    result = TaskResult(condition=condition, task=world.task, chain_length=len(world.chain))
    return await _Run(world, agent, supervisor, result, max_steps, retry_cap).run()
