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
from watcher.runtime.fates import CommandFate, Fates, answer
from watcher.runtime.history import history
from watcher.runtime.journal import Command
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


def _command(id: int, kind: str, iid: str, status: str = "new", detail: str = "", session: str = S) -> Command:
    return Command(id, 0.0, session, W, kind, iid, {}, status, detail)


def test_commands_fold_with_the_interjections_they_name() -> None:
    """A person's command: requested until its owner answers; an interjection's request and dismissal fold in too."""
    fates = Fates()
    for event in (_evaluation(0, "p"), _announced("p", "pending"), _evaluation(1, "q"), _announced("q", "pending")):
        fates.apply(event)
    assert fates.command(_command(1, "accept", "p")).status == "requested"  # type: ignore[union-attr]
    assert not fates.command_fate(1).answered and fates.open_requests() == [1]  # type: ignore[union-attr]
    failed = fates.command(_command(1, "accept", "p", "failed", "no watcher holds it"))
    assert (failed.status, failed.detail) == ("failed", "no watcher holds it")  # type: ignore[union-attr]
    assert fates.command_fate(1).state == "failed" and fates.open_requests() == []  # type: ignore[union-attr]

    fates.command(_command(2, "inject", "q", "claimed"))
    fates.apply(_fate("q", "queued"))  # the owner delivers, then marks the command
    assert fates.command(_command(2, "inject", "q", "claimed")) is None  # read again: not set back
    assert fates.command(_command(2, "inject", "q", "applied")) is None
    assert fates.get("q").status == "queued" and fates.command_fate(2).state == "applied"  # type: ignore[union-attr]
    assert fates.command(_command(3, "dismiss", "q")).status == "dismissed"  # type: ignore[union-attr]

    nudge = _command(4, "nudge", "", session="fleet:build")  # a fleet task's command names no interjection
    assert fates.command(nudge) is None and fates.command_fate(4).state == "requested"  # type: ignore[union-attr]
    fates.command(_command(4, "nudge", "", "applied", "queued as n1", session="fleet:build"))
    assert fates.command_fate(4) == CommandFate(4, "nudge", "fleet:build", "", "applied", "queued as n1")


def test_the_answer_to_a_command_is_its_owner_s_mark() -> None:
    rows = [_command(5, "pause", "", "claimed", session="fleet:build"), _command(6, "abort", "", session="fleet:x")]
    assert answer(rows, 5) is None and answer(rows, 7) is None  # claimed is not answered; 7 was not read
    rows[0] = _command(5, "pause", "", "failed", "already paused", session="fleet:build")
    assert answer(rows, 5) == CommandFate(5, "pause", "fleet:build", "", "failed", "already paused")
