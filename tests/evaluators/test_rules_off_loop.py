"""A rules evaluator off the event loop: a role's long review (a huge file) runs on a worker
thread, so the loop keeps serving other sessions, and one role never judges twice at once; a
small call is judged at once on the loop (a thread hop would cost more than the judgment)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

from watcher.core.evaluation import EvaluationRequest
from watcher.core.interjection import Continue, Decision
from watcher.core.observations import Observation, UserMessage
from watcher.core.rules import Role
from watcher.core.spec import WatcherSpec
from watcher.evaluators.rules import RulesEvaluator


class _Held(Role):
    """A role whose review lasts until the test lets it finish, counting judgments at once."""

    name = "held"
    description = "held"
    brief = "held"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.at_once = 0
        self.most_at_once = 0
        self.threads: list[str] = []

    def evaluate(self, observations: Sequence[Observation], new: int) -> Decision:
        self.at_once += 1
        self.threads.append(threading.current_thread().name)
        self.most_at_once = max(self.most_at_once, self.at_once)
        self.started.set()
        self.release.wait(10)
        self.at_once -= 1
        return Continue()


def _request(text: str = "x" * 30_000) -> EvaluationRequest:
    seen = [UserMessage(text=text)]
    return EvaluationRequest(
        WatcherSpec(name="held", role="held"), "agent", seen, new=1, index=1, breakpoint="tool_result"
    )


def test_a_long_review_off_the_loop_leaves_the_loop_serving_and_one_judgment_at_a_time() -> None:
    role = _Held()
    evaluator = RulesEvaluator(role, off_loop=True)

    async def scenario() -> int:
        first = asyncio.create_task(evaluator.evaluate(_request()))
        second = asyncio.create_task(evaluator.evaluate(_request()))
        await asyncio.to_thread(role.started.wait, 10)
        ticks = 0
        for _ in range(20):  # the loop runs other work while the role is held
            await asyncio.sleep(0)
            ticks += 1
        assert not first.done() and not second.done()
        role.release.set()
        await asyncio.gather(first, second)
        return ticks

    assert asyncio.run(scenario()) == 20
    assert role.most_at_once == 1  # the second judgment waited for the first
    assert threading.main_thread().name not in role.threads


def test_a_small_call_is_judged_on_the_loop_at_once() -> None:
    role = _Held()
    role.release.set()
    result = asyncio.run(RulesEvaluator(role, off_loop=True).evaluate(_request("go")))
    assert isinstance(result.decision, Continue)
    assert role.threads == [threading.main_thread().name]


def test_on_the_loop_by_default() -> None:
    role = _Held()
    role.release.set()
    result = asyncio.run(RulesEvaluator(role).evaluate(_request()))
    assert isinstance(result.decision, Continue) and result.model == "rules"
