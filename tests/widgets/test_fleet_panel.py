"""The fleet dashboard: rows, badges and learnings from a journal; its buttons write fleet commands."""

from __future__ import annotations

from pathlib import Path

from watcher.runtime.events import LearningExtracted, SyncMessageSent, TaskHealthCheck, WatcherPause
from watcher.runtime.journal import Journal
from watcher.widgets.fleet_panel import FleetDashboard


def test_rows_learnings_and_buttons(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite3")
    journal.append(
        TaskHealthCheck(
            session="a<1>",
            cycle=4,
            health="stuck",
            status="running",
            freshness="fresh",
            iteration=9,
            nudges=2,
            tokens=120,
        )
    )
    journal.append(
        TaskHealthCheck(session="b", cycle=4, health="healthy", status="running", freshness="fresh", iteration=3)
    )
    journal.append(WatcherPause(session="b", reason="by hand", by="person"))
    journal.append(
        LearningExtracted(
            session="a<1>", learning_id="l1", text="the API needs X-Token", source="assistant_text", urgency="helpful"
        )
    )
    journal.append(
        SyncMessageSent(
            session="b",
            interjection_id="s1",
            learning_id="l1",
            source_task="a<1>",
            urgency="helpful",
            text="",
            status="queued",
        )
    )
    journal.flush()
    board = FleetDashboard(journal)
    board.refresh()
    a, b = board.rows["a<1>"], board.rows["b"]
    assert (
        "stuck" in a.info.value
        and "a&lt;1&gt;" in a.info.value
        and "iteration 9" in a.info.value
        and "2 nudge(s)" in a.info.value
    )
    assert "paused" in b.info.value and not b.buttons["resume"].disabled and b.buttons["pause"].disabled
    assert a.buttons["resume"].disabled and not a.buttons["pause"].disabled
    assert "the API needs X-Token" in board.learnings.value and "queued" in board.learnings.value
    assert "1 paused" in board.header.value
    b.buttons["resume"].click()
    a.buttons["nudge"].click()  # no message yet: nothing sent
    assert "type a message" in board.notice.value
    a.message.value = "Try the v2 endpoint"
    a.buttons["nudge"].click()
    sent = [(c.session, c.kind, c.payload) for c in journal.commands()]
    assert sent == [
        ("fleet:b", "resume", {"reason": "resume from the dashboard"}),
        ("fleet:a<1>", "nudge", {"message": "Try the v2 endpoint"}),
    ]
    journal.close()
