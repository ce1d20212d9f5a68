"""The watcher engine: breakpoints, caps, fail-closed evaluation, manual and autonomous delivery."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from watcher.core.errors import NotPendingError, UnknownWatcherError
from watcher.core.evaluation import EvaluationRequest
from watcher.core.interjection import Interjection, Origin
from watcher.core.observations import Done, ToolCall, ToolResult, UserMessage
from watcher.core.spec import Caps, Triggers, WatcherSpec
from watcher.evaluators import CallableEvaluator
from watcher.runtime import Journal, RecordingSession, Runtime
from watcher.runtime.events import DeliveryEvent, EvaluationEvent, Event, InterjectionEvent
from watcher.runtime.fates import Fates
from watcher.runtime.journal import Command

SPEC = WatcherSpec(name="w", role="test")


class Recorder:
    def __init__(self, runtime: Runtime) -> None:
        self.events: list[Event] = []
        runtime.bus.subscribe("recorder", self.events.append)

    def of(self, kind: type[Event]) -> list[Event]:
        return [e for e in self.events if isinstance(e, kind)]


async def _run(spec: WatcherSpec, fn, observations, *, live: bool = False, journal: Journal | None = None):  # type: ignore[no-untyped-def]
    runtime = Runtime(live=live, journal=journal)
    session = RecordingSession("parent")
    recorder = Recorder(runtime)
    watcher = runtime.attach(spec, CallableEvaluator(fn), session)
    for obs in observations:
        runtime.observe("parent", obs)
        await runtime.settle()
    return runtime, session, recorder, watcher


TURN = [
    UserMessage(text="go"),
    ToolCall(id="t", name="Bash", input={"command": "ls"}),
    ToolResult(tool_call_id="t", output="a b"),
    Done(),
]


async def test_evaluates_at_breakpoints_only() -> None:
    seen: list[tuple[str, int, int]] = []

    def judge(req: EvaluationRequest) -> None:
        seen.append((req.breakpoint, req.index, req.new))

    runtime, *_ = await _run(SPEC, judge, TURN)
    assert seen == [("tool_result", 2, 3), ("turn_done", 3, 1)]
    await runtime.close()


async def test_live_backlog_is_judged_once_and_never_lost() -> None:
    seen: list[tuple[str, int, int]] = []
    runtime = Runtime(live=True)
    session = RecordingSession("parent")
    for name in ("a", "b"):
        judge = CallableEvaluator(lambda r: seen.append((r.spec.name, r.index, r.new)))
        runtime.attach(replace(SPEC, name=name), judge, session)
    # published in one go: a breakpoint with a non-breakpoint behind it, as a busy parent does
    for obs in [*TURN[:3], UserMessage(text="more")]:
        runtime.observe("parent", obs)
    await runtime.settle()
    assert sorted(seen) == [("a", 3, 4), ("b", 3, 4)], "each watcher judged the backlog once, with all of it"
    await runtime.close()


async def test_every_n_breakpoint() -> None:
    seen: list[str] = []
    spec = replace(SPEC, triggers=Triggers(on=frozenset(), every_n=2))
    runtime, *_ = await _run(spec, lambda r: seen.append(r.breakpoint), [UserMessage(text=str(i)) for i in range(5)])
    assert seen == ["every_n", "every_n"]
    await runtime.close()


async def test_idle_breakpoint_when_live() -> None:
    seen: list[str] = []
    spec = replace(SPEC, triggers=Triggers(on=frozenset(), idle_s=0.05))
    runtime = Runtime(live=True)
    runtime.attach(spec, CallableEvaluator(lambda r: seen.append(r.breakpoint)), RecordingSession("parent"))
    runtime.observe("parent", UserMessage(text="hello"))
    for _ in range(100):
        if seen:
            break
        await asyncio.sleep(0.01)
    assert seen == ["idle"]
    await runtime.close()


@pytest.mark.parametrize(
    ("judge", "error"),
    [
        (lambda r: 1 / 0, "ZeroDivisionError"),
        (lambda r: 42, "returned int"),
    ],
)
async def test_evaluator_failure_fails_closed(judge, error: str) -> None:  # type: ignore[no-untyped-def]
    runtime, session, recorder, watcher = await _run(SPEC, judge, TURN)
    evaluations = recorder.of(EvaluationEvent)
    assert [e.decision for e in evaluations] == ["continue", "continue"]
    assert all(error in (e.error or "") for e in evaluations)
    assert session.delivered == [] and watcher.status == "error"
    await runtime.close()


async def test_evaluator_timeout_fails_closed() -> None:
    async def slow(req: EvaluationRequest) -> str:
        await asyncio.sleep(10)
        return "[INTERJECT]\nurgent: true\ncontent: too late\n[/INTERJECT]"

    spec = replace(SPEC, caps=Caps(timeout_s=0.05))
    runtime, session, recorder, _ = await _run(spec, slow, TURN[:3])
    (evaluation,) = recorder.of(EvaluationEvent)
    assert evaluation.decision == "continue" and "timed out after 0.05s" in (evaluation.error or "")
    assert session.delivered == []
    await runtime.close()


async def test_autonomous_interjection_is_delivered() -> None:
    answer = "[INTERJECT]\nurgent: true\ncontent: stop and use a parameterised query\n[/INTERJECT]"
    runtime, session, recorder, _ = await _run(SPEC, lambda r: answer, TURN[:3])
    (delivered,) = session.delivered
    assert (
        delivered.urgent
        and delivered.content == "stop and use a parameterised query"
        and delivered.watcher == "w"
        and delivered.id
    )
    assert [e.status for e in recorder.of(InterjectionEvent)] == ["queued"]  # type: ignore[attr-defined]
    assert [e.outcome for e in recorder.of(DeliveryEvent)] == ["delivered"]  # type: ignore[attr-defined]
    await runtime.close()


async def test_cap_per_turn_and_reset_on_done() -> None:
    spec = replace(
        SPEC, triggers=Triggers(on=frozenset({"tool_result", "turn_done"})), caps=Caps(max_interjections_per_turn=2)
    )
    answer = Interjection(content="again")
    steps = [ToolResult(tool_call_id=str(i), output="x") for i in range(4)] + [
        Done(),
        ToolResult(tool_call_id="z", output="x"),
    ]
    runtime, session, recorder, _ = await _run(spec, lambda r: answer, steps)
    capped = [e.capped for e in recorder.of(EvaluationEvent)]  # type: ignore[attr-defined]
    assert capped[0] is None and capped[1] is None
    assert all("max_interjections_per_turn (2) reached" in (c or "") for c in capped[2:4])
    assert len(session.delivered) == 2 + 1 + 1  # two before the cap, one at done (new turn), one after
    await runtime.close()


async def test_pause_and_abort_are_never_capped() -> None:
    spec = replace(SPEC, triggers=Triggers(on=frozenset({"tool_result"})), caps=Caps(max_interjections_per_turn=1))
    answers = iter(
        [
            Interjection(content="nudge"),
            Interjection(content="again"),
            Interjection(content="stop", urgent=True, action="pause"),
        ]
    )
    steps = [ToolResult(tool_call_id=str(i), output="x") for i in range(3)]
    runtime, session, _, _ = await _run(spec, lambda r: next(answers), steps)
    assert [i.content for i in session.delivered] == ["nudge", "stop"]
    await runtime.close()


async def test_manual_mode_waits_then_accept_with_edit_or_dismiss() -> None:
    spec = replace(SPEC, mode="manual")
    runtime, session, recorder, watcher = await _run(
        spec, lambda r: Interjection(content="proposal"), [*TURN[:3], ToolResult(tool_call_id="2", output="y")]
    )
    assert session.delivered == [] and len(watcher.pending) == 2
    first, second = list(watcher.pending)
    assert await watcher.accept(first, content="edited by a person")
    watcher.dismiss(second)
    await runtime.settle()
    assert [i.content for i in session.delivered] == ["edited by a person"]
    assert [e.outcome for e in recorder.of(DeliveryEvent)] == ["delivered", "dismissed"]  # type: ignore[attr-defined]
    with pytest.raises(NotPendingError, match="no pending interjection"):
        await watcher.accept("nope")
    await runtime.close()


async def test_interjection_for_ended_session_is_undeliverable(caplog: pytest.LogCaptureFixture) -> None:
    runtime = Runtime(live=False)
    session = RecordingSession("parent")
    recorder = Recorder(runtime)
    watcher = runtime.attach(SPEC, CallableEvaluator(lambda r: Interjection(content="late")), session)
    session.end()
    runtime.observe("parent", Done())
    await runtime.settle()
    (delivery,) = recorder.of(DeliveryEvent)
    assert delivery.outcome == "undeliverable"  # type: ignore[attr-defined]
    assert "undeliverable" in caplog.text and watcher.status == "idle"
    await runtime.close()


async def test_commands_from_the_journal_are_applied(tmp_path) -> None:  # type: ignore[no-untyped-def]
    journal = Journal(tmp_path / "j.sqlite3")
    spec = replace(SPEC, mode="manual")
    runtime, session, _, watcher = await _run(
        spec,
        lambda r: Interjection(content="proposal"),
        [*TURN[:3], ToolResult(tool_call_id="2", output="y")],
        journal=journal,
    )
    first, second = list(watcher.pending)
    inject = journal.submit_command("parent", "inject", first, payload={"content": "edited in the editor"})
    dismiss = journal.submit_command("parent", "dismiss", second)
    bogus = journal.submit_command("parent", "inject", "unknown-id")
    assert await runtime.apply_commands() == 3
    await runtime.settle()
    assert [i.content for i in session.delivered] == ["edited in the editor"]
    status = {c.id: (c.status, c.detail) for c in journal.commands(status=None)}
    assert status[inject] == ("applied", "delivered")
    assert status[dismiss] == ("applied", "dismissed")
    assert status[bogus][0] == "failed" and "unknown-id" in status[bogus][1]
    await runtime.close()
    journal.close()


async def test_a_person_s_command_given_here_is_applied_the_same_way() -> None:
    """A panel button, a magic or Python: ``Command.given`` through ``Runtime.act``, the journal's one path."""
    spec = replace(SPEC, mode="manual")
    runtime, session, _, watcher = await _run(
        spec, lambda r: Interjection(content="proposal"), [*TURN[:3], ToolResult(tool_call_id="2", output="y")]
    )
    first, second = list(watcher.pending)
    accepted = Command.given("parent", "accept", first, payload={"content": "said better"})
    assert await runtime.act(accepted, by="panel") == "delivered"
    with pytest.raises(NotPendingError, match="holds interjection"):  # a second click: no watcher holds it now
        await runtime.act(accepted, by="panel")
    assert await runtime.act(Command.given("parent", "dismiss", second, payload={"reason": "not now"})) == "dismissed"
    with pytest.raises(UnknownWatcherError, match="no watcher named 'ghost'"):
        await runtime.act(Command.given("parent", "inject", "h1", watcher="ghost", payload={"content": "hi"}))
    own = Command.given("parent", "inject", "h1", watcher=SPEC.name, payload={"content": " my own words "})
    assert await runtime.act(own, by="magic") == "delivered"
    assert [i.content for i in session.delivered] == ["said better", "my own words"]
    assert session.origins[-1] == Origin.of_person("magic")
    await runtime.close()


async def test_a_speaker_says_decisions_made_elsewhere_and_journals_their_fates(tmp_path) -> None:  # type: ignore[no-untyped-def]
    journal = Journal(tmp_path / "j.sqlite3")
    runtime = Runtime(journal=journal)
    session = RecordingSession("task")
    recorder = Recorder(runtime)
    fleet = runtime.speaker(replace(SPEC, name="fleet"), CallableEvaluator(lambda r: None), session)
    # it judges nothing here: no evaluation however the session goes, and the session is not supervised by it
    runtime.observe("task", ToolResult(tool_call_id="t", output="x"))
    await runtime.settle()
    assert not recorder.of(EvaluationEvent) and runtime.watchers == {} and fleet.subscription is None
    decided = [
        Interjection(content="try another way", action="nudge", id="n1"),
        Interjection(content="hold on", action="pause", id="p1"),
    ]
    outcomes = [await fleet.speak(said) for said in decided]
    session.end()
    outcomes.append(await fleet.speak(Interjection(content="stop", action="abort", severity="critical", id="a1")))
    await runtime.close()
    assert outcomes == ["delivered", "delivered", "undeliverable"]
    assert [(i.id, i.action, i.watcher) for i in session.delivered] == [
        ("n1", "nudge", "fleet"),
        ("p1", "pause", "fleet"),
    ]
    assert [(e.interjection.id, e.status) for e in recorder.of(InterjectionEvent)] == [  # type: ignore[attr-defined]
        ("n1", "queued"),
        ("p1", "queued"),
        ("a1", "queued"),
    ]
    # folded like any watcher's, in the process and from the journal another process reads
    assert [(f.id, f.status) for f in fleet.fates] == [
        ("n1", "delivered"),
        ("p1", "delivered"),
        ("a1", "undeliverable"),
    ]
    assert fleet.interjections == 3
    history = Fates()
    for row in journal.read(kinds=("interjection", "delivery")):
        history.apply(row.event())
    assert [(f.id, f.interjection.action, f.status) for f in history] == [
        ("n1", "nudge", "delivered"),
        ("p1", "pause", "delivered"),
        ("a1", "abort", "undeliverable"),
    ]
    journal.close()
