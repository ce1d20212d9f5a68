"""``watcher.fleet(...)``: started in a notebook (shown live, buttons act) and without one (it says how).

Real agent runs against the stub server, the real journal, and for the notebook an in-process
IPython shell with ``%load_ext watcher`` (the real-kernel test lives in ``tests/kernel_ext``).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

import watcher
from watcher.core.errors import ConfigurationError, MissingCredentialsError
from watcher.fleet import Fleet, TaskSpec
from watcher.fleet._launch import LaunchedFleet, launch
from watcher.runtime.host import notebook_host
from watcher.runtime.journal import Journal

from .fleet_scripts import BASH, LIVELY, FleetScript


def wait_for(predicate: Callable[[], Any], seconds: float = 20.0, what: str | Callable[[], str] = "condition") -> Any:
    """Poll ``predicate`` until it holds; ``what`` (or what it returns, read at the failure) says what was awaited."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"not reached within {seconds}s: {what() if callable(what) else what}")


def applied(journal: Journal, kind: str, task: str) -> bool:
    return any(
        c.kind == kind and c.session == f"fleet:{task}" and c.status == "applied" for c in journal.commands(status=None)
    )


@pytest.fixture
def notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.setenv("WATCHER_JOURNAL", str(tmp_path / "notebook.sqlite3"))
    ip = InteractiveShell()
    ip.extension_manager.load_extension("watcher")
    try:
        yield ip
    finally:
        ip.extension_manager.unload_extension("watcher")
        InteractiveShell.clear_instance()


def test_in_a_notebook_the_fleet_runs_on_the_runtime_thread_and_its_dashboard_acts(
    notebook: InteractiveShell, tmp_path: Path
) -> None:
    script = FleetScript()
    host: Any = notebook_host()
    assert host is not None, "%load_ext watcher registered the notebook host"
    with script.server() as stub:
        fleet = watcher.fleet(script.specs, config=LIVELY, base_url=stub.base_url, api_key="x")  # type: ignore[operator]
        assert isinstance(fleet, LaunchedFleet) and fleet.journal is host.journal  # the notebook's journal
        [board] = host.dashboards
        wait_for(lambda: {"writer", "worker"} <= set(board.rows), what="a row per task")
        wait_for(lambda: "X-Token" in board.learnings.value, what="the relayed learning")
        assert "<b>writer</b>" in board.learnings.value and "worker" in board.learnings.value  # provenance
        worker = board.rows["worker"]
        worker.buttons["pause"].click()
        wait_for(lambda: applied(host.journal, "pause", "worker"), what="the pause applied")
        wait_for(lambda: "pause worker: applied" in board.notice.value, what="the fleet's answer shown")
        wait_for(lambda: not worker.buttons["resume"].disabled, what="the Resume button enabled")
        assert "paused" in worker.info.value and worker.buttons["pause"].disabled
        worker.message.value = "Use the cached build."
        worker.buttons["nudge"].click()
        worker.buttons["resume"].click()
        wait_for(lambda: applied(host.journal, "resume", "worker"), what="the resume applied")
        wait_for(lambda: applied(host.journal, "nudge", "worker"), what="the nudge applied")
        script.finish.set()
        results = asyncio.run(fleet.wait())  # another loop than the fleet's: ``wait`` crosses over
    assert {name: r.status for name, r in results.items()} == {"writer": "completed", "worker": "completed"}
    wait_for(lambda: "(ended)" in board.header.value, what="the dashboard's last refresh")
    assert all(b.disabled for row in board.rows.values() for b in row.buttons.values())
    relayed = re.search(r"(\d+) syncs relayed", board.header.value)
    assert relayed and int(relayed.group(1)) >= 1, board.header.value


async def test_without_a_notebook_the_fleet_runs_on_the_callers_loop_and_says_how_to_see_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = FleetScript()
    script.finish.set()
    with script.server() as stub:
        fleet = launch(script.specs, config=LIVELY, journal=tmp_path / "j.sqlite3", base_url=stub.base_url, api_key="x")
        assert fleet.home is asyncio.get_running_loop()
        results = await fleet.wait()
    assert all(r.status == "completed" for r in results.values()), results  # type: ignore[union-attr]
    assert "%load_ext watcher" in capsys.readouterr().err
    await fleet.close()  # closing an ended fleet is harmless


def test_plain_python_runs_a_tasks_file_on_a_loop_of_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tmp_path / "tasks.toml"
    tasks.write_text(
        '[fleet]\nname = "from-file"\nsync_interval_s = 0.05\n\n'
        '[[tasks]]\nname = "writer"\nprompt = "[task writer] write the API client"\ntools = ["Bash"]\ntags = ["api"]\n',
        encoding="utf-8",
    )
    script = FleetScript()
    with script.server() as stub:
        fleet = launch(tasks, tools={"Bash": BASH}, journal=tmp_path / "j.sqlite3", base_url=stub.base_url, api_key="x")
        # a loop of its own, started: still running, or already closed when the one task was quick
        assert fleet.config.name == "from-file" and fleet.home is not None
        assert fleet.home.is_running() or fleet.home.is_closed()
        results = asyncio.run(fleet.wait())
    assert results["writer"].status == "completed"  # type: ignore[union-attr]
    assert "fleet 'from-file' started with 1 task(s)" in capsys.readouterr().err
    wait_for(lambda: not fleet.home.is_running(), what="the fleet's own loop stopped")  # type: ignore[union-attr]


def test_a_fleet_that_cannot_start_says_why_at_the_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(MissingCredentialsError, match="ANTHROPIC_API_KEY"):
        launch([TaskSpec("a", "p")], journal=tmp_path / "j.sqlite3")


SPEC = TaskSpec("a", "do it")


@pytest.mark.parametrize(
    ("tasks", "options", "message"),
    [
        ([], {}, "got no tasks: pass a tasks file or a list of at least one"),
        ({"a": "do it"}, {}, "takes a tasks file (a TOML path) or a list of TaskSpec, not dict"),
        ([SPEC, "do it too"], {}, "task 1 is of type str, not a TaskSpec"),
        ("no-such-tasks.toml", {}, "cannot read the tasks file no-such-tasks.toml"),
        ([SPEC], {"tools": {"Bash": BASH}}, "tools= names the tools of a tasks file"),
        ([SPEC], {"journal": 3}, "journal= takes a path or a watcher.Journal, not int"),
        ([SPEC], {"config": {"watch_interval_s": 1}}, "config= takes a FleetConfig, not dict"),
        ([SPEC], {}, "needs a journal: pass journal="),
        ([SPEC, SPEC], {"journal": "j.sqlite3"}, "task names must be unique"),
    ],
)
def test_a_wrong_argument_gets_a_clear_configuration_error(
    tasks: Any, options: dict[str, Any], message: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigurationError) as caught:
        watcher.fleet(tasks, **options)  # type: ignore[operator]
    assert message in str(caught.value)


def test_unloading_the_extension_closes_the_fleets_started_in_the_notebook(notebook: InteractiveShell) -> None:
    script = FleetScript()  # ``worker`` never finishes by itself
    with script.server() as stub:
        fleet = watcher.fleet(script.specs, config=LIVELY, base_url=stub.base_url, api_key="x")  # type: ignore[operator]
        host: Any = notebook_host()
        [board] = host.dashboards
        wait_for(lambda: "worker" in board.rows, what="the worker's row")
        notebook.extension_manager.unload_extension("watcher")
        assert notebook_host() is None
        assert fleet.ended, "the fleet was closed before the runtime thread stopped"
        results = asyncio.run(fleet.wait())
    assert results["worker"].status == "aborted", results  # type: ignore[union-attr]
    notebook.extension_manager.load_extension("watcher")  # the fixture unloads it again


def test_show_presents_a_fleet_running_elsewhere(notebook: InteractiveShell, tmp_path: Path) -> None:
    script = FleetScript()
    script.finish.set()
    elsewhere = tmp_path / "elsewhere.sqlite3"
    with script.server() as stub:  # run as ``watcher fleet run`` runs it, in no notebook
        fleet = Fleet(script.specs, config=LIVELY, journal=elsewhere, base_url=stub.base_url, api_key="x")
        results = asyncio.run(fleet.run())
    assert all(r.status == "completed" for r in results.values())  # type: ignore[union-attr]
    host: Any = notebook_host()
    watcher.fleet.show(elsewhere)
    board = host.dashboards[-1]
    wait_for(lambda: {"writer", "worker"} <= set(board.rows), what="the other fleet's rows")
    assert "completed" in board.rows["worker"].info.value and board.rows["worker"].buttons["pause"].disabled


def test_a_cell_run_twice_shows_only_the_new_fleet(notebook: InteractiveShell) -> None:
    """The notebook's journal keeps the first run; the second dashboard shows neither its ends nor its counts."""
    first, second = FleetScript(), FleetScript()
    first.finish.set()
    host: Any = notebook_host()
    with first.server() as stub:
        done = watcher.fleet(first.specs, config=LIVELY, base_url=stub.base_url, api_key="x")  # type: ignore[operator]
        assert all(r.status == "completed" for r in asyncio.run(done.wait()).values())  # type: ignore[union-attr]
    with second.server() as stub:
        again = watcher.fleet(second.specs, config=LIVELY, base_url=stub.base_url, api_key="x")  # type: ignore[operator]
        board = host.dashboards[-1]
        wait_for(
            lambda: "worker" in board.rows and "iteration 3" in board.rows["worker"].info.value,
            seconds=60.0,  # a loaded CI machine (two test workers, a browser) runs the second fleet slowly
            what=lambda: (
                f"the second fleet's turns; the board shows {board.header.value!r}, "
                f"{ {task: row.info.value for task, row in board.rows.items()} }, {board.notice.value!r}"
            ),
        )
        worker = board.rows["worker"]
        assert "<b>worker</b> running" in worker.info.value and not worker.buttons["pause"].disabled
        second.finish.set()
        asyncio.run(again.wait())
    learned = board.learnings.value
    assert learned.count("X-Token") == 1, learned  # the second run's relay only


def test_a_fleet_with_a_journal_of_its_own_shows_its_end_and_the_dashboard_stops(
    notebook: InteractiveShell, tmp_path: Path
) -> None:
    script = FleetScript()
    script.finish.set()
    host: Any = notebook_host()
    with script.server() as stub:
        own = tmp_path / "own.sqlite3"  # opened (and closed at the end) by the fleet itself
        fleet = watcher.fleet(script.specs, config=LIVELY, journal=own, base_url=stub.base_url, api_key="x")  # type: ignore[operator]
        assert fleet.journal is not host.journal
        results = asyncio.run(fleet.wait())
    assert all(r.status == "completed" for r in results.values())  # type: ignore[union-attr]
    board = host.dashboards[-1]
    wait_for(lambda: board._task is None, what="the dashboard's refresh loop ended")
    assert {"writer", "worker"} <= set(board.rows) and "(ended)" in board.header.value, board.header.value
