"""The fleet dashboard: rows, badges and learnings from a journal; its buttons write fleet commands.

The journal is real; the widget state is read back as a frontend would receive it
(``get_state``), which is how the no-secret check looks at everything the widget holds.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import ipywidgets as w

from watcher.fleet import COMMAND_PREFIX
from watcher.fleet.events import FleetTask, LearningExtracted, SyncMessageSent, TaskHealthCheck, TaskTurn, WatcherPause
from watcher.fleet.query import FleetView, TaskRow, read_fleet
from watcher.runtime.host import FleetBoard
from watcher.runtime.journal import Journal
from watcher.widgets.fleet_html import describe_row
from watcher.widgets.fleet_panel import FleetDashboard

SECRET = "sk-ant-api03-" + "Zq7" * 30  # an Anthropic-style key, long enough for the redactor


def board_of(journal: Journal, **kw: Any) -> FleetBoard:
    return FleetBoard("auth-work", journal, read_fleet, COMMAND_PREFIX, **kw)


def widget_strings(widget: w.Widget) -> list[str]:
    """Every string in the state of ``widget`` and its descendants (what the frontend is sent)."""
    out: list[str] = []
    for value in widget.get_state().values():
        if isinstance(value, str):
            out.append(value)
    for child in getattr(widget, "children", ()):
        out.extend(widget_strings(child))
    return out


def test_rows_learnings_and_buttons(journal_at: Path | str) -> None:
    journal = Journal(journal_at)
    for task in ("a<1>", "b"):
        journal.append(FleetTask(session=task, fleet="auth-work", model="claude-sonnet-4-5"))
    journal.append(TaskTurn(fleet="auth-work", session="a<1>", step=9, input_tokens=100_000, output_tokens=20_000))
    journal.append(
        TaskHealthCheck(
            fleet="auth-work",
            session="a<1>",
            cycle=4,
            health="stuck",
            status="running",
            freshness="fresh",
            iteration=9,
            nudges=2,
            tokens=120,
            diagnosis="the same <b>Bash</b> call 4 times",
        )
    )
    journal.append(
        TaskHealthCheck(
            fleet="auth-work", session="b", cycle=4, health="healthy", status="running", freshness="fresh", iteration=3
        )
    )
    journal.append(WatcherPause(fleet="auth-work", session="b", reason="by hand", by="person"))
    journal.append(
        LearningExtracted(
            fleet="auth-work",
            session="a<1>",
            learning_id="l1",
            text="the API needs X-Token",
            source="assistant_text",
            urgency="helpful",
        )
    )
    journal.append(
        SyncMessageSent(
            fleet="auth-work",
            session="b",
            interjection_id="s1",
            learning_id="l1",
            source_task="a<1>",
            urgency="helpful",
            text="",
            status="queued",
            observation=3,
        )
    )
    journal.flush()
    board = FleetDashboard(board_of(journal))
    board.refresh()
    a, b = board.rows["a<1>"], board.rows["b"]
    assert "stuck" in a.info.value and "a&lt;1&gt;" in a.info.value
    assert (
        "iteration 9" in a.info.value
        and "0 nudge(s) sent · ladder 2" in a.info.value
        and "120,000 tokens" in a.info.value
    )
    assert "$0.6000" in a.info.value and "$" not in b.info.value  # 100k in + 20k out at $3 / $15 per million
    assert "the same &lt;b&gt;Bash&lt;/b&gt; call 4 times" in a.info.value  # the diagnosis, escaped
    assert "paused" in b.info.value and not b.buttons["resume"].disabled and b.buttons["pause"].disabled
    assert a.buttons["resume"].disabled and not a.buttons["pause"].disabled
    learned = board.learnings.value
    assert "the API needs X-Token" in learned and "queued" in learned and "[helpful]" in learned
    assert "<b>a&lt;1&gt;</b> observation 3, assistant text → b" in learned  # provenance: task, observation, source
    assert "fleet auth-work" in board.header.value and "1 paused" in board.header.value
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


def test_a_cost_column_appears_only_when_the_row_has_one() -> None:
    row = {"task": "a", "health": "healthy", "status": "running", "iteration": 2, "last_activity_s": 3.0}
    assert "$" not in describe_row(row)
    assert "$0.0123" in describe_row({**row, "cost_usd": 0.0123})


def test_no_secret_reaches_the_widget_state(tmp_path: Path) -> None:
    """A key in a diagnosis, a learning, a task name or a nudge box never reaches the frontend unredacted."""
    journal = Journal(tmp_path / "j.sqlite3")
    leaked = f"found that ANTHROPIC_API_KEY={SECRET} works"
    sync = SyncMessageSent(
        session="b", interjection_id="s1", learning_id="l1", source_task="a", urgency="blocking", text=leaked
    )
    learning = LearningExtracted(
        fleet="auth-work", session="a", learning_id="l1", text=leaked, source="tool_result", urgency="blocking"
    )
    view = FleetView(
        f"f {SECRET}",
        {"a": TaskRow("a", health="stuck", diagnosis=f"the agent echoed {SECRET}"), "b": TaskRow(f"b {SECRET}")},
        syncs=[sync],
        learnings=[learning],
    )  # built by hand: the journal would have redacted the key already, the widget must not rely on it
    board = FleetDashboard(FleetBoard("f", journal, lambda _j: view, COMMAND_PREFIX))
    board.refresh()
    board.command("a", "abort")  # the notice line too
    shown = widget_strings(board.widget)
    assert any("found that ANTHROPIC_API_KEY=" in s for s in shown), "the learning itself is shown"
    assert not any(SECRET in s or SECRET[:24] in s for s in shown), [s for s in shown if "sk-ant" in s]
    journal.append(FleetTask(session="a", fleet="auth-work"))  # and through the journal, as the dashboard reads it
    journal.append(learning)
    journal.flush()
    from_journal = FleetDashboard(board_of(journal))
    from_journal.refresh()
    assert not any(SECRET[:24] in s for s in widget_strings(from_journal.widget))
    journal.close()


async def test_the_live_dashboard_refreshes_until_the_fleet_ends(journal_at: Path | str) -> None:
    journal = Journal(journal_at)
    ended = False
    board = FleetDashboard(board_of(journal, ended=lambda: ended)).start(interval=0.02)
    journal.append(FleetTask(session="t", fleet="auth-work"))
    journal.append(
        TaskHealthCheck(fleet="auth-work", session="t", cycle=1, health="healthy", status="running", freshness="fresh")
    )
    journal.flush()
    for _ in range(250):
        if "t" in board.rows:
            break
        await asyncio.sleep(0.02)
    assert "t" in board.rows and not board.rows["t"].buttons["pause"].disabled
    ended = True
    for _ in range(250):
        if "(ended)" in board.header.value:
            break
        await asyncio.sleep(0.02)
    assert "(ended)" in board.header.value and board.rows["t"].buttons["pause"].disabled
    count = board.refreshes
    await asyncio.sleep(0.1)
    assert board.refreshes == count, "no refresh after the last one"
    journal.close()
