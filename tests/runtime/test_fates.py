"""One fate per interjection: every display folds the same events through ``Fates`` and agrees.

The same event sequence (every status an interjection can end in, plus a person's own words) is
fed to the fold itself, the notebook panel's state, the language server's finding book, the
``history()`` frame and the demo's summary; they must report the same statuses and counts. The
engine's own counter is checked against the panel with a real runtime (the count that used to
differ: a watcher capped at one interjection per turn, three tool results).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from watcher.core.interjection import Interject, Interjection, Location, Origin
from watcher.core.observations import ToolResult
from watcher.core.spec import Caps, WatcherSpec
from watcher.demo.notebooks import summarise
from watcher.evaluators import CallableEvaluator
from watcher.lsp_bridge.findings import FindingBook
from watcher.runtime import Journal, RecordingSession, Runtime
from watcher.runtime.events import DeliveryEvent, EvaluationEvent, Event, InterjectionEvent, SessionEvent, WatcherEvent
from watcher.runtime.fates import Fates
from watcher.runtime.history import history
from watcher.widgets import PanelState

S, W = "s", "w"


def _said(iid: str) -> Interjection:
    where = (Location(path="a.py", start_line=1),)
    return Interjection(content=f"say {iid}", watcher=W, id=iid, locations=where, origin=Origin.of_watcher(W))


def _evaluation(index: int, iid: str, *, capped: str | None = None) -> EvaluationEvent:
    return EvaluationEvent(
        session=S, watcher=W, index=index, breakpoint="tool_result", decision="interject",
        interjection=_said(iid), capped=capped,
    )  # fmt: skip


def _announced(iid: str, status: str) -> InterjectionEvent:
    return InterjectionEvent(session=S, watcher=W, interjection=_said(iid), status=status, index=0)  # type: ignore[arg-type]


def _fate(iid: str, outcome: str, content: str | None = None, origin: str = "watcher:w") -> DeliveryEvent:
    text = f"say {iid}" if content is None else content
    return DeliveryEvent(session=S, watcher=W, interjection_id=iid, outcome=outcome, content=text, origin=origin)  # type: ignore[arg-type]


EVENTS: list[Event] = [
    SessionEvent(session=S, status="started"),
    WatcherEvent(session=S, watcher=W, status="attached", role="test", mode="manual"),
    _evaluation(0, "capped", capped="max_interjections_per_turn (1) reached"),
    _evaluation(1, "delivered"),
    _announced("delivered", "queued"),
    _fate("delivered", "delivered"),
    _evaluation(2, "pending"),
    _announced("pending", "pending"),
    _evaluation(3, "dismissed"),
    _announced("dismissed", "pending"),
    _fate("dismissed", "dismissed"),
    _evaluation(4, "edited"),
    _announced("edited", "pending"),
    _fate("edited", "queued", content="said better"),
    _fate("edited", "delivered", content="said better"),
    _evaluation(5, "undeliverable"),
    _announced("undeliverable", "queued"),
    _fate("undeliverable", "queued"),
    _fate("undeliverable", "undeliverable"),
    _evaluation(6, "failed"),
    _announced("failed", "queued"),
    _fate("failed", "failed"),
    _evaluation(7, "queued"),
    _announced("queued", "queued"),
    _fate("queued", "queued"),
    _fate("by-hand", "delivered", content="a person's words", origin="person:editor"),
]
#: what every consumer must say became of each interjection a watcher made
EXPECTED = {
    "capped": "capped",
    "delivered": "delivered",
    "pending": "pending",
    "dismissed": "dismissed",
    "edited": "edited",
    "undeliverable": "undeliverable",
    "failed": "failed",
    "queued": "queued",
}
COUNTED = 7  # everything but the capped one and the person's words


def test_the_fold_itself() -> None:
    fates = Fates()
    for event in EVENTS:
        fates.apply(event)
    assert {f.id: f.status for f in fates if not f.origin.by_person} == EXPECTED
    assert fates.count() == COUNTED
    assert fates.get("by-hand") is not None and fates.get("by-hand").origin == Origin.of_person("editor")  # type: ignore[union-attr]
    assert fates.get("edited").interjection.content == "said better"  # type: ignore[union-attr]


def test_every_consumer_agrees(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite3")
    for event in EVENTS:
        journal.append(event)
    journal.flush()
    rows = journal.read(limit=1000)

    panel = PanelState(W)
    for event in EVENTS:
        panel.apply(event)
    assert panel.interjections == COUNTED
    assert list(panel.pending) == [iid for iid, status in EXPECTED.items() if status == "pending"]

    book = FindingBook(tmp_path / "journal.sqlite3", tmp_path)
    book.apply_rows(rows, live_after=0)
    shown_to_the_editor = {iid: status for iid, status in EXPECTED.items() if status != "capped"}
    assert {iid: f.status for iid, f in book.findings.items()} == shown_to_the_editor

    frame = history(journal)
    outcomes = dict(zip(frame["content"].to_list(), frame["outcome"].to_list(), strict=True))
    assert outcomes == {f"say {iid}": status for iid, status in EXPECTED.items()}

    report = "\n".join(summarise(rows))
    for iid, status in shown_to_the_editor.items():
        said = "pending: waiting for a person" if status == "pending" else status
        assert f"-> {said}\n       say {iid}" in report or f"-> {said}\n       said better" in report
    assert report.count(">> w interjected") == len(shown_to_the_editor)
    journal.close()


@pytest.mark.parametrize("mode", ["autonomous", "manual"])
async def test_the_panel_and_watchers_count_the_same_interjections(mode: str) -> None:
    """Capped at one per turn, three tool results: one interjection, in the engine and the panel alike."""
    spec = WatcherSpec(name=W, role="test", mode=mode, caps=Caps(max_interjections_per_turn=1))  # type: ignore[arg-type]
    runtime = Runtime(live=False)
    panel = PanelState(W)
    runtime.bus.subscribe("panel", panel.apply)
    watcher = runtime.attach(
        spec, CallableEvaluator(lambda request: Interject(Interjection("again"))), RecordingSession(S)
    )
    for n in range(3):
        runtime.observe(S, ToolResult(tool_call_id=f"t{n}", output="same"))
    await runtime.close()
    assert watcher.evaluations == panel.evaluations == 3
    assert watcher.state()["interjections"] == panel.interjections == 1
