"""Stuck-role throughput over a 10,000-observation agent transcript.

stuck_obs_per_s (the issue's figure, target >= 20,000): the stuck role's own throughput, called as
the engine calls it (a 200-observation buffer, evaluated at the role's breakpoints with the count
of new observations); wall clock, and stuck_role_cpu_obs_per_s the same run in process CPU time
(steadier on a shared machine).
stuck_replay_obs_per_s: observations per second through the whole replay pipeline
(``watcher.agents.replay.replay``: bus, engine, rules evaluator, the ``stuck`` role).
replay_null_obs_per_s: the same replay with a role that does nothing, so the pipeline's own cost
can be told apart from the role's.

The transcript mixes ordinary work with the loops the role looks for: failing re-runs, polling (by
command and by a tool parameter), long replies looked at for chanting, condensations and notebook
cells, so every detector is exercised.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import replace

from watcher.agents.replay import replay
from watcher.core.interjection import Continue, Decision
from watcher.core.observations import (
    AssistantMessage,
    CellError,
    CellExecuted,
    Condensation,
    Done,
    Observation,
    ToolCall,
    ToolResult,
    UserMessage,
)
from watcher.core.rules import Role
from watcher.evaluators.rules import RulesEvaluator
from watcher.roles import spec_for_role
from watcher.roles.stuck import StuckRole
from watcher.runtime.engine import breakpoints_of

N = 10_000
_REPLY = (
    "Round {0}: the failing test depends on the module-level cache, which the previous test leaves warm. "
    "I traced the lookup through the loader, the resolver and the fallback path, and only the fallback "
    "reads the environment, so the order of the tests decides which branch runs. The fix is to clear the "
    "cache in the fixture rather than in the test body, and to give the resolver an explicit base path. "
) * 4


def _transcript(n: int) -> list[Observation]:
    out: list[Observation] = [UserMessage(text="Fix the failing tests and ship the release.")]
    i = 0

    def step(name: str, tool_input: dict[str, object], output: str, error: bool = False) -> None:
        nonlocal i
        i += 1
        out.append(ToolCall(id=f"t{i}", name=name, input=tool_input))
        out.append(ToolResult(tool_call_id=f"t{i}", output=output, is_error=error, exit_code=1 if error else 0))

    round_ = 0
    while len(out) < n:
        round_ += 1
        out.append(AssistantMessage(text=f"Round {round_}: reading the next module and fixing what fails."))
        step("Read", {"file_path": f"src/mod{round_ % 97}.py"}, f"def f{round_}():\n    return {round_}\n" * 20)
        step(
            "Edit",
            {
                "file_path": f"src/mod{round_ % 97}.py",
                "old_string": f"return {round_}",
                "new_string": f"return {round_ + 1}",
            },
            "The file has been updated.",
        )
        kind = round_ % 5
        if kind == 0:  # a failing loop: nudge, then pause
            for _ in range(4):
                out.append(AssistantMessage(text="Running the test again."))
                step(
                    "Bash",
                    {"command": f"pytest tests/test_mod{round_ % 97}.py -x -q"},
                    f"FAILED test_f{round_} - AssertionError\n1 failed in 0.{round_ % 9}s",
                    error=True,
                )
        elif kind == 1:  # polling a background job, by command and by a tool parameter
            for k in range(6):
                step("Bash", {"command": "sleep 30"}, "")
                step("BashOutput", {"bash_id": f"bash_{round_}"}, f"running... {k * 10}%")
                step("process", {"action": "poll", "sessionId": f"s{round_}"}, f"(no new output) {k}")
        elif kind == 2:  # a long reply (looked at for chanting), then condensations
            out.append(AssistantMessage(text=_REPLY.format(round_)))
            out.extend(Condensation() for _ in range(3))
        elif kind == 3:  # a notebook cell failing the same way
            for _ in range(3):
                out.append(
                    CellExecuted(
                        source="df.groupby('month').sum()",
                        cell_id=f"c{round_}",
                        error=CellError("KeyError", "'month'", 1),
                    )
                )
        else:
            step("Bash", {"command": f"pytest tests/test_mod{round_ % 97}.py -q"}, "12 passed in 0.4s")
        out.append(Done())
    return out[:n]


class _Null(Role):
    name = "null"
    description = "does nothing"
    brief = "nothing"
    triggers = StuckRole.triggers

    def evaluate(self, observations: Sequence[Observation], new: int) -> Decision:
        return Continue()


def _role_alone(observations: Sequence[Observation]) -> tuple[float, float, int]:
    role = StuckRole()
    triggers = role.triggers
    buffer: deque[Observation] = deque(maxlen=200)
    new = since = said = 0
    started, cpu = time.perf_counter(), time.process_time()
    for obs in observations:
        buffer.append(obs)
        new += 1
        since += 1
        if any(p in triggers.on for p in breakpoints_of(obs)) or since >= triggers.every_n:
            decision = role.evaluate(tuple(buffer), new)
            said += decision.interjection is not None
            new = since = 0
    n = len(observations)
    return n / (time.perf_counter() - started), n / (time.process_time() - cpu), said


def _replay(observations: Sequence[Observation], role: Role) -> tuple[float, int]:
    spec = replace(spec_for_role("stuck"), name=role.name)
    started = time.perf_counter()
    result = asyncio.run(replay(observations, [(spec, RulesEvaluator(role))], session="bench"))
    elapsed = time.perf_counter() - started
    return len(observations) / elapsed, sum(e.decision == "interject" for e in result.evaluations)


def main() -> None:
    observations = _transcript(N)
    role_rate, role_cpu_rate, role_said = _role_alone(observations)
    replay_rate, replay_said = _replay(observations, StuckRole())
    null_rate, _ = _replay(observations, _Null())
    assert role_said == replay_said > 0, (role_said, replay_said)
    print(f"# {len(observations)} observations, {replay_said} interjections by the stuck role")
    print(f"BENCH stuck_obs_per_s {role_rate:.0f} obs/s")
    print(f"BENCH stuck_replay_obs_per_s {replay_rate:.0f} obs/s")
    print(f"BENCH stuck_role_cpu_obs_per_s {role_cpu_rate:.0f} obs/s")
    print(f"BENCH replay_null_obs_per_s {null_rate:.0f} obs/s")


if __name__ == "__main__":
    main()
