"""The spawn panel: progress snapshots become the phase line and files, the result the report and PR link."""

from __future__ import annotations

from pathlib import Path

from watcher.runtime.session import EndState
from watcher.spawn.integrate import FileChange, PullRequest
from watcher.spawn.monitor import ProgressState
from watcher.spawn.report import SpawnResult
from watcher.widgets.spawn_panel import SpawnPanel


def test_progress_then_report(tmp_path: Path) -> None:
    panel = SpawnPanel("Add <login>")
    assert "&lt;login&gt;" in panel.title.value
    state = ProgressState("a1", tmp_path, phase="execute", last_tool="Write", output_lines=7, interjections=1)
    state.files_written["src/auth/login.js"] = None
    panel(state)
    assert "<b>execute</b>" in panel.status.value and "last tool Write" in panel.status.value
    assert "1 interjection(s)" in panel.status.value and "src/auth/login.js" in panel.files.value
    panel(state)  # a second snapshot within the same tenth of a second is coalesced
    assert panel.updates == 1
    result = SpawnResult(
        "a1", "Add login", "claude", EndState.COMPLETED, 2.5, "spawn/a1", "main", str(tmp_path), str(tmp_path)
    )
    result.pr = PullRequest(3, "http://127.0.0.1/acme/shop/pull/3")
    result.files = [FileChange("src/auth/login.js", 8, 0, "Add login()")]
    panel.finish(result)
    assert 'href="http://127.0.0.1/acme/shop/pull/3"' in panel.status.value and "PR #3" in panel.status.value
    assert "(+8, −0) Add login()" in panel.files.value and "Spawn Complete" in panel.report.value
