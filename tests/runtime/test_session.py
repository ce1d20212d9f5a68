"""The Session port: queued vs delivered, interrupt for urgent interjections, origin journaled."""

from __future__ import annotations

import pytest

from watcher.core.interjection import Interject, Interjection, Origin
from watcher.core.observations import ToolResult
from watcher.core.spec import WatcherSpec
from watcher.evaluators import CallableEvaluator
from watcher.runtime import RecordingSession, Runtime, Session
from watcher.runtime.events import DeliveryEvent, Event
from watcher.runtime.session import InjectionOutcome

SPEC = WatcherSpec(name="w", role="test")


class QueueingSession(Session):
    """A parent that only queues: it answers ``queued`` and counts interrupts, like an agent run."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.queued: list[tuple[Interjection, Origin]] = []
        self.interrupts = 0

    @property
    def ended(self) -> bool:
        return False

    async def inject(self, interjection: Interjection, *, origin: Origin) -> InjectionOutcome:
        self.queued.append((interjection, origin))
        return "queued"

    async def interrupt(self) -> None:
        self.interrupts += 1


def _saying(*, urgent: bool) -> CallableEvaluator:
    return CallableEvaluator(lambda request: Interject(Interjection("look", urgent=urgent)))


async def _one_tool_result(session: Session, evaluator: CallableEvaluator) -> list[DeliveryEvent]:
    runtime = Runtime(live=False)
    seen: list[Event] = []
    runtime.bus.subscribe("seen", seen.append)
    runtime.attach(SPEC, evaluator, session)
    runtime.observe(session.name, ToolResult(tool_call_id="t", output="x"))
    await runtime.close()
    return [e for e in seen if isinstance(e, DeliveryEvent)]


@pytest.mark.parametrize(("urgent", "interrupts"), [(True, 1), (False, 0)])
async def test_the_engine_interrupts_a_parent_that_queued_an_urgent_interjection(urgent: bool, interrupts: int) -> None:
    session = QueueingSession("agent")
    [delivery] = await _one_tool_result(session, _saying(urgent=urgent))
    assert session.interrupts == interrupts
    assert (delivery.outcome, delivery.origin) == ("queued", "watcher:w")
    [(said, origin)] = session.queued
    assert origin == Origin.of_watcher("w") and said.origin == origin


async def test_a_parent_that_took_it_at_once_is_journaled_delivered_and_not_interrupted() -> None:
    session = RecordingSession("notes")
    [delivery] = await _one_tool_result(session, _saying(urgent=True))
    assert delivery.outcome == "delivered" and session.interrupts == 0


async def test_a_persons_words_keep_their_origin() -> None:
    runtime = Runtime(live=False)
    session = RecordingSession("notes")
    watcher = runtime.attach(SPEC, CallableEvaluator(lambda request: None), session)
    outcome = await watcher.deliver(Interjection("from me", watcher="w", id="p1"), origin=Origin.of_person("magic"))
    await runtime.close()
    assert outcome == "delivered" and session.origins == [Origin.of_person("magic")]
    assert session.delivered[0].to_dict()["origin"] == "person:magic"


@pytest.mark.parametrize("origin", [Origin.of_watcher("security"), Origin.of_person("editor")])
def test_origin_round_trips_through_the_journal_form(origin: Origin) -> None:
    said = Interjection("x", id="i", origin=origin)
    assert Interjection.from_dict(said.to_dict()) == said


def test_an_old_journal_row_without_origin_reads_as_the_watchers() -> None:
    said = Interjection.from_dict({"content": "x", "watcher": "errors", "id": "i"})
    assert said.origin is None and said.speaker == Origin.of_watcher("errors")
