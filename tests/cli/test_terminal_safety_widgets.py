"""A panel's ``text/plain`` form, which a terminal console prints, shows what an agent or a model said, never obeys it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import ipywidgets as w
import pytest

from watcher.spawn.monitor import ProgressState
from watcher.widgets.run_output import RunOutput
from watcher.widgets.spawn_panel import SpawnPanel

HOSTILE = "x\x1b]52;c;cm0=\x07 csi\x9b2J bidi\u202edesrever"
ORDINARY = "café 東京 👍"


@pytest.fixture(autouse=True)
def _close_widgets() -> Iterator[None]:
    yield
    w.Widget.close_all()


def test_a_panel_shows_a_tasks_and_a_tools_control_sequences(tmp_path: Path) -> None:
    panel = SpawnPanel(f"fix it {HOSTILE} {ORDINARY}")
    panel(ProgressState("a1", tmp_path, phase="execute", last_tool="Bash\x1b[2J"))
    text = repr(panel.widget)
    assert "last tool Bash⟨U+001B⟩[2J" in text
    assert "⟨U+001B⟩]52;c;cm0=⟨U+0007⟩" in text and "⟨U+009B⟩2J" in text and "⟨U+202E⟩desrever" in text
    assert "\x1b" not in text and "\x9b" not in text and "\u202e" not in text and ORDINARY in text


def test_an_agent_runs_last_line_shows_its_control_sequences() -> None:
    shown = RunOutput(title="run")
    shown.text = f"→ bash\n← {HOSTILE} {ORDINARY}\n"
    shown._dirty = True
    shown.flush()
    text = repr(shown.widget)
    assert text.startswith("agent run: run · ← x⟨U+001B⟩]52;c;") and ORDINARY in text
    assert "\x1b" not in text and "\x9b" not in text and "\u202e" not in text
