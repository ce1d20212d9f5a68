"""WatcherPanel: the widget shell copies the state, coalesces updates, and hands clicks over."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import ipywidgets as w
import pytest

from watcher.core.interjection import Interjection
from watcher.core.observations import CellExecuted
from watcher.runtime.events import DeliveryEvent, InterjectionEvent, ObservationEvent, WatcherEvent
from watcher.widgets import MAX_FLUSHES_PER_S, PanelState, WatcherPanel


class Recorder:
    """A PanelActions port that records what the buttons asked for."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def accept(self, session: str, watcher: str, interjection_id: str, content: str | None) -> None:
        self.calls.append(("accept", session, watcher, interjection_id, content or ""))

    def dismiss(self, session: str, watcher: str, interjection_id: str) -> None:
        self.calls.append(("dismiss", session, watcher, interjection_id))


@pytest.fixture(autouse=True)
def _close_widgets() -> Iterator[None]:
    yield
    w.Widget.close_all()


def manual_panel() -> tuple[WatcherPanel, Recorder]:
    actions = Recorder()
    panel = WatcherPanel(PanelState("sec"), actions)
    panel.apply(WatcherEvent(session="nb", watcher="sec", status="attached", role="security", mode="manual"))
    return panel, actions


def pend(panel: WatcherPanel, id_: str = "i1") -> None:
    i = Interjection(content="use a parameterised query", watcher="sec", id=id_)
    panel.apply(InterjectionEvent(session="nb", watcher="sec", interjection=i, status="pending"))


def test_buttons_appear_with_a_pending_interjection_and_act_on_it() -> None:
    panel, actions = manual_panel()
    assert panel.pending_box.children == ()
    pend(panel)
    assert panel.inject_button in panel.pending_box.children[1].children
    assert "use a parameterised query" in panel.pending.value
    panel.inject_button.click()
    assert actions.calls == [("accept", "nb", "sec", "i1", "")]
    panel.dismiss_button.click()
    assert actions.calls[-1] == ("dismiss", "nb", "sec", "i1")
    panel.apply(DeliveryEvent(session="nb", watcher="sec", interjection_id="i1", outcome="delivered"))
    assert panel.pending_box.children == ()
    assert "delivered: use a parameterised query" in panel.delivered.value


def test_edit_fills_the_editor_and_inject_sends_the_edited_text() -> None:
    panel, actions = manual_panel()
    pend(panel)
    panel.edit_button.click()
    assert panel.editor.layout.display == "" and panel.editor.value == "use a parameterised query"
    assert panel.edit_button.description == "Cancel edit"
    panel.editor.value = "use sqlite3 placeholders (?)"  # what the browser would set
    panel.inject_button.click()
    assert actions.calls == [("accept", "nb", "sec", "i1", "use sqlite3 placeholders (?)")]


def test_clicks_without_a_pending_interjection_do_nothing() -> None:
    panel, actions = manual_panel()
    panel.inject_button.click()
    panel.dismiss_button.click()
    assert actions.calls == []


async def test_updates_are_coalesced_to_at_most_20_flushes_a_second() -> None:
    panel = WatcherPanel(PanelState("sec"), Recorder(), loop=asyncio.get_running_loop())
    panel.apply(WatcherEvent(session="nb", watcher="sec", status="attached", role="errors", mode="autonomous"))
    start = panel.flushes
    loop = asyncio.get_running_loop()
    began = loop.time()
    for i in range(300):  # a burst of observations over ~0.3 s
        panel.apply(ObservationEvent(session="nb", index=i, observation=CellExecuted(source=f"x = {i}")))
        if i % 10 == 0:
            await asyncio.sleep(0.01)
    await asyncio.sleep(1.0 / MAX_FLUSHES_PER_S + 0.02)
    elapsed = loop.time() - began
    flushes = panel.flushes - start
    assert 2 <= flushes <= elapsed * MAX_FLUSHES_PER_S + 2
    assert "#299" in panel.observations.value  # the last state was shown
