"""What a frontend without widgets (a console, nbconvert, a notebook viewer) prints for each panel.

ipywidgets gives every widget a ``text/plain`` form next to the widget view; for a box it is the
widget tree. Each panel's form is the text it shows instead, redacted like the widget itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import ipywidgets as w
import pytest

from watcher.fleet import COMMAND_PREFIX
from watcher.fleet.query import FleetView, TaskRow
from watcher.runtime.host import FleetBoard
from watcher.runtime.journal import Journal
from watcher.spawn.monitor import ProgressState
from watcher.widgets.fleet_panel import FleetDashboard
from watcher.widgets.run_output import RunOutput
from watcher.widgets.spawn_panel import SpawnPanel

SECRET = "sk-ant-api03-" + "Zq7" * 30


@pytest.fixture(autouse=True)
def _close_widgets() -> Iterator[None]:
    yield
    w.Widget.close_all()


def plain(widget: w.Widget) -> str:
    """The ``text/plain`` entry of the bundle the kernel sends when the widget is displayed."""
    text = widget._repr_mimebundle_()["text/plain"]
    assert isinstance(text, str)
    assert "children=" not in text and "Layout(" not in text and "<b>" not in text, text
    return text


def test_the_fleet_dashboard_reads_as_its_header_and_rows(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite3")
    view = FleetView(f"auth {SECRET}", {"a": TaskRow("a", health="stuck", diagnosis=f"echoed {SECRET}")})
    dashboard = FleetDashboard(FleetBoard("auth-work", journal, lambda _j: view, COMMAND_PREFIX))
    assert plain(dashboard.widget).startswith("fleet auth-work")
    dashboard.refresh()
    text = repr(dashboard.widget)
    assert text.startswith("fleet auth ") and "stuck" in text and "echoed" in text
    assert SECRET[:24] not in text
    journal.close()


def test_the_spawn_panel_reads_as_its_task_and_phase(tmp_path: Path) -> None:
    panel = SpawnPanel("Add <login> & logout")
    assert plain(panel.widget) == "spawn Add <login> & logout\nstarting…"
    panel(ProgressState("a1", tmp_path, phase="execute", last_tool="Write", output_lines=7))
    assert "execute" in repr(panel.widget) and "last tool Write" in repr(panel.widget)


def test_an_agent_run_reads_as_its_title_and_last_line() -> None:
    shown = RunOutput(title="read a.txt")
    assert plain(shown.widget) == "agent run: read a.txt"
    shown.text = f"→ read_file(a.txt)\n← key {SECRET}\n"
    shown._dirty = True
    shown.flush()
    assert repr(shown.widget).startswith("agent run: read a.txt · ← key ") and SECRET[:24] not in repr(shown.widget)
