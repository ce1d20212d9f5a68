"""``watcher.fleet(...)`` in a real ipykernel, driven over ZeroMQ the way JupyterLab drives it.

With ``%load_ext watcher`` the fleet runs on the runtime thread and its dashboard reaches the
frontend as comm messages; a click sent as the browser's comm message writes the fleet command
(read back from this, second, process) and the fleet applies it. After ``%unload_ext watcher``
the same call runs on the kernel's own loop and says how to get the dashboard.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from jupyter_client.manager import start_new_kernel

from watcher.runtime.journal import Journal

from .kernel_driver import Driver, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("kernel")]

SCRIPTS = Path(__file__).parents[1] / "widgets" / "fleet_scripts.py"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
def journal_file(tmp_path: Path) -> Path:
    return tmp_path / "journal.sqlite3"


@pytest.fixture
def driver(journal_file: Path) -> Iterator[Driver]:
    env = {**os.environ, "WATCHER_JOURNAL": str(journal_file), "JPY_SESSION_NAME": "/work/fleet.ipynb"}
    km, kc = start_new_kernel(kernel_name="python3", env=env)
    try:
        yield Driver(kc)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def button(driver: Driver, tooltip: str) -> str:
    """The comm id of the newest button with ``tooltip`` (the dashboard's are ``<command> <task>``)."""
    found = [c["comm_id"] for c in driver.comm_opens("ButtonModel") if c["data"]["state"].get("tooltip") == tooltip]
    assert found, f"no button {tooltip!r} was opened"
    return found[-1]


def command_status(journal_file: Path, task: str, kind: str) -> str:
    with Journal(journal_file) as journal:
        found = [c.status for c in journal.commands(status=None) if (c.session, c.kind) == (f"fleet:{task}", kind)]
    return found[-1] if found else ""


def shown(driver: Driver, *needles: str) -> bool:
    return any(all(n in v for n in needles) for v in driver.widget_values())


def test_the_dashboard_shows_the_tasks_and_its_buttons_act_on_the_fleet(driver: Driver, journal_file: Path) -> None:
    assert driver.execute("%load_ext watcher").error is None
    assert driver.execute(SCRIPTS.read_text(encoding="utf-8")).error is None
    started = driver.execute(
        "import watcher\n"
        "script = FleetScript()\n"
        "stub = script.server()\n"
        "stub.start()\n"
        "f = watcher.fleet(script.specs, config=LIVELY, base_url=stub.base_url, api_key='x')\n"
    )
    assert started.error is None, started.error
    assert any(WIDGET_VIEW in o.get("data", {}) for o in started.outputs), "the dashboard was displayed"
    assert "%load_ext watcher" not in started.stderr
    wait_for(lambda: shown(driver, "<b>writer</b>") and shown(driver, "<b>worker</b>"), poll=driver.drain, what="rows")
    wait_for(lambda: shown(driver, "relayed learnings", "X-Token"), poll=driver.drain, what="the relayed learning")

    driver.click(button(driver, "pause worker"))
    wait_for(lambda: command_status(journal_file, "worker", "pause") == "applied", what="the pause applied")
    wait_for(lambda: shown(driver, "<b>worker</b> paused"), poll=driver.drain, what="the paused row")
    driver.click(button(driver, "resume worker"))
    wait_for(lambda: command_status(journal_file, "worker", "resume") == "applied", what="the resume applied")

    finished = driver.execute(
        "script.finish.set()\nresults = await f.wait()\nprint(sorted((k, r.status) for k, r in results.items()))"
    )
    assert finished.error is None, finished.error
    assert finished.stdout.strip() == "[('worker', 'completed'), ('writer', 'completed')]"
    wait_for(lambda: shown(driver, "(ended)"), poll=driver.drain, what="the dashboard's last refresh")

    # without the extension: the kernel's own loop runs it, and it says how to see the dashboard
    assert driver.execute("%unload_ext watcher").error is None
    plain = driver.execute(
        f"g = watcher.fleet(script.specs[:1], journal={str(journal_file.with_name('plain.sqlite3'))!r}, "
        "base_url=stub.base_url, api_key='x')\n"
    )
    assert plain.error is None, plain.error
    assert "run `%load_ext watcher` in a notebook first to see its live dashboard" in plain.stderr
    assert not any(WIDGET_VIEW in o.get("data", {}) for o in plain.outputs)
    waited = driver.execute("print({k: r.status for k, r in (await g.wait()).items()})")
    assert waited.stdout.strip() == "{'writer': 'completed'}"
    wrong = driver.execute("watcher.fleet([])")
    assert wrong.error is not None and wrong.error["ename"] == "ConfigurationError"
    assert "got no tasks" in wrong.error["evalue"]
