"""The Session base: queued vs delivered, the settle rules, the end state, interrupts, origin journaled."""

from __future__ import annotations

import pytest

from watcher.core.errors import SessionEndedError
from watcher.core.interjection import Interject, Interjection, Origin
from watcher.core.observations import ToolResult
from watcher.core.spec import WatcherSpec
from watcher.evaluators import CallableEvaluator
from watcher.runtime import RecordingSession, Runtime, Session
from watcher.runtime.events import DeliveryEvent, Event, SessionEvent
from watcher.runtime.session import EndState, InjectionOutcome, Parcel

SPEC = WatcherSpec(name="w", role="test")


class QueueingSession(Session):
    """A parent that only queues: it keeps what it is handed in the inbox and counts interrupts, like an agent run."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.interrupts = 0

    async def hand_over(self, interjection: Interjection, origin: Origin) -> InjectionOutcome:
        self.inbox.append(Parcel.of(interjection, origin))
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
    [parcel] = session.inbox
    assert parcel.origin == Origin.of_watcher("w") and parcel.interjection.origin == parcel.origin


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


async def test_a_queued_interjection_settles_once_delivered_when_it_reached_the_parent() -> None:
    runtime = Runtime(live=False)
    seen: list[Event] = []
    runtime.bus.subscribe("seen", seen.append)
    session = QueueingSession("agent")
    watcher = runtime.attach(SPEC, CallableEvaluator(lambda request: None), session)
    await watcher.deliver(Interjection("first", watcher="w", id="a"))
    await watcher.deliver(Interjection("second", watcher="w", id="b"))
    first, second = session.take()
    session.put_back([second])
    session.reached([first], "sent")
    runtime.end_session(session, EndState.COMPLETED, detail="done")
    await runtime.close()
    settled = [(e.interjection_id, e.outcome, e.detail) for e in seen if isinstance(e, DeliveryEvent)]
    assert settled == [
        ("a", "queued", ""),
        ("b", "queued", ""),
        ("a", "delivered", "sent"),
        ("b", "undeliverable", "the session ended (completed) before it reached it"),
    ]
    assert session.ended and session.end_state is EndState.COMPLETED and session.inbox == []
    [ended] = [e for e in seen if isinstance(e, SessionEvent) and e.status != "started"]
    assert (ended.status, ended.detail) == ("completed", "done")


async def test_an_ended_session_refuses_interjections_and_keeps_its_first_end_state() -> None:
    session = QueueingSession("agent")
    session.end(EndState.PAUSED)
    session.end(EndState.FAILED)
    assert session.end_state is EndState.PAUSED
    with pytest.raises(SessionEndedError, match=r"session 'agent' has ended \(paused\)"):
        await session.inject(Interjection("late", id="x"), origin=Origin.of_watcher("w"))


async def test_removing_a_session_detaches_its_watchers_and_frees_its_name() -> None:
    runtime = Runtime(live=False)
    session = RecordingSession("hooked")
    runtime.attach(SPEC, CallableEvaluator(lambda request: None), session)
    runtime.remove_session("hooked")
    assert "hooked" not in runtime.sessions and not runtime.watchers
    again = RecordingSession("hooked")
    runtime.attach(SPEC, CallableEvaluator(lambda request: None), again)  # the same name is added afresh
    assert runtime.sessions["hooked"] is again
    await runtime.close()


@pytest.mark.parametrize(
    ("word", "state"), [("completed", EndState.COMPLETED), ("lost", EndState.LOST), ("started", None)]
)
def test_a_journaled_status_reads_back_as_an_end_state(word: str, state: EndState | None) -> None:
    assert EndState.parse(word) is state
