"""PanelState folds runtime events into what a panel shows, with no widgets and no kernel."""

from __future__ import annotations

import re

from watcher.core.interjection import Interjection, Location
from watcher.core.observations import CellError, CellExecuted
from watcher.runtime.events import DeliveryEvent, EvaluationEvent, InterjectionEvent, ObservationEvent, WatcherEvent
from watcher.widgets import Mark, PanelState, timeline_svg

KEY = "sk-ant-api03-" + "A" * 40


def attached(state: PanelState, session: str = "nb", mode: str = "manual") -> None:
    state.apply(
        WatcherEvent(
            session=session, watcher=state.name, status="attached", role="security", mode=mode, authority="supervisor"
        )
    )


def cell(index: int, source: str = "x = 1", error: CellError | None = None, session: str = "nb") -> ObservationEvent:
    return ObservationEvent(
        session=session, index=index, observation=CellExecuted(source=source, cell_id=f"c{index}", error=error)
    )


def interjection(id_: str = "i1", content: str = "parameterise the query") -> Interjection:
    return Interjection(content=content, watcher="sec", id=id_, locations=(Location(cell_id="c1", start_line=2),))


def test_observations_of_attached_sessions_only_and_status_follows_breakpoints() -> None:
    state = PanelState("sec")
    state.triggers = frozenset({"cell_executed"})
    assert not state.apply(cell(0))  # not attached to "nb" yet
    attached(state)
    assert state.apply(cell(1, "query = 'SELECT'"))
    assert not state.apply(cell(2, session="other"))
    assert state.status == "evaluating"
    assert state.mode == "manual" and state.role == "security"
    view = state.view()
    assert "#1" in view.observations and "#2" not in view.observations
    assert view.status == "evaluating"


def test_evaluations_count_tokens_cost_and_errors() -> None:
    state = PanelState("sec")
    attached(state)
    common = {"session": "nb", "watcher": "sec", "breakpoint": "cell_executed"}
    state.apply(
        EvaluationEvent(
            **common, index=0, decision="continue", note="fine", input_tokens=100, output_tokens=20, cost_usd=0.001
        )
    )
    state.apply(EvaluationEvent(**common, index=1, decision="continue", error="TimeoutError: slow"))
    assert state.status == "error"
    state.apply(EvaluationEvent(**common, index=2, decision="interject", interjection=interjection()))
    assert (state.evaluations, state.interjections, state.tokens) == (3, 1, 120)
    view = state.view()
    assert "cost <b>$0.0010</b>" in view.counters
    assert "error: TimeoutError: slow" in view.evaluations
    assert "<b>interject</b>: parameterise the query" in view.evaluations
    assert view.status == "idle"


def test_pending_interjection_until_delivered_then_badge() -> None:
    state = PanelState("sec")
    attached(state)
    state.apply(InterjectionEvent(session="nb", watcher="sec", interjection=interjection(), status="pending"))
    view = state.view()
    assert view.pending_id == "i1"
    assert "cell:c1:2" in view.pending and "for <code>nb</code>" in view.pending
    found = state.first_pending()
    assert found is not None and found.session == "nb"
    state.apply(
        DeliveryEvent(session="nb", watcher="sec", interjection_id="i1", outcome="delivered", content="edited text")
    )
    view = state.view()
    assert view.pending_id == "" and view.pending == ""
    assert "edited: edited text" in view.delivered  # delivered, with the words a person changed


def test_events_of_other_watchers_are_ignored() -> None:
    state = PanelState("sec")
    attached(state)
    assert not state.apply(
        InterjectionEvent(session="nb", watcher="other", interjection=interjection(), status="pending")
    )
    assert state.first_pending() is None


def test_secrets_and_markup_never_reach_the_view() -> None:
    state = PanelState("sec")
    attached(state)
    state.apply(cell(0, f"api_key = '{KEY}'\n<script>alert(1)</script>"))
    state.apply(
        InterjectionEvent(
            session="nb", watcher="sec", interjection=interjection(content=f"remove {KEY}"), status="pending"
        )
    )
    view = state.view()
    rendered = "".join([view.observations, view.pending, view.evaluations])
    assert KEY not in rendered
    assert "<script>" not in rendered and "&lt;script&gt;" in rendered


def test_timeline_places_marks_in_rows_and_time_order() -> None:
    svg = timeline_svg(
        [Mark(100.0, "observation"), Mark(101.0, "continue"), Mark(102.0, "interject"), Mark(103.0, "delivered")]
    )
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    xs = [float(x) for x in re.findall(r'(?:cx="|M)([\d.]+)', svg)]
    assert xs == sorted(xs) and len(xs) == 4
    assert "3.0 s" in svg
    assert "<circle" not in timeline_svg([])  # empty: just the labelled strip
