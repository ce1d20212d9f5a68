"""The extension in a real ipykernel, driven over ZeroMQ the way JupyterLab drives it.

A cell sent with ``cellId`` metadata becomes an observation carrying that id; the security
watcher's interjection points at that cell; the panel's state reaches the frontend as comm
messages; a click sent as the browser's comm message delivers the pending interjection. The
journal is read from this (second) process.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import start_new_kernel

from watcher.runtime.journal import Journal

from .kernel_driver import Driver, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("kernel")]

VULNERABLE = """import sqlite3

def find_user(conn, name):
    return conn.execute("SELECT * FROM users WHERE name = '" + name + "'").fetchall()
"""


@pytest.fixture(scope="module")
def journal_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kernel") / "journal.sqlite3"


@pytest.fixture(scope="module")
def driver(journal_file: Path) -> Iterator[Driver]:
    import os

    env = {**os.environ, "WATCHER_JOURNAL": str(journal_file), "JPY_SESSION_NAME": "/work/test_kernel.ipynb"}
    km, kc = start_new_kernel(kernel_name="python3", env=env)
    try:
        yield Driver(kc)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def journal_rows(path: Path, kind: str) -> list[dict[str, Any]]:
    with Journal(path) as journal:
        return [
            dict(row.payload, session=row.session, watcher=row.watcher)
            for row in journal.read(0, limit=100_000)
            if row.kind == kind
        ]


def normalised(traceback: list[str]) -> list[str]:
    """A traceback without colours, cell file names and counts (which differ between runs)."""
    plain = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in traceback]
    return [re.sub(r"(/tmp/\S+\.py|<ipython-input-[^>]+>|Cell In\[\d+\])", "CELL", line) for line in plain]


def test_user_errors_surface_exactly_as_without_watcher(driver: Driver) -> None:
    failing = "values = {'a': 1}\nvalues['b']"
    before = driver.execute(failing, cell_id="err-before")
    loaded = driver.execute("%load_ext watcher")
    assert loaded.reply["status"] == "ok", loaded.stderr
    after = driver.execute(failing, cell_id="err-after")
    assert before.error is not None and after.error is not None
    assert (after.error["ename"], after.error["evalue"]) == (before.error["ename"], before.error["evalue"])
    assert normalised(after.error["traceback"]) == normalised(before.error["traceback"])
    assert after.reply["status"] == "error"


def test_cell_id_reaches_the_observation_and_the_interjection_reaches_the_widget(
    driver: Driver, journal_file: Path
) -> None:
    driver.execute("%load_ext watcher")  # loaded by the previous test; loading again is a no-op
    attached = driver.execute("%watch security --mode manual")
    assert "watcher 'security' (security, rules:security, manual)" in attached.stdout, attached.stderr
    ran = driver.execute(VULNERABLE, cell_id="cell-sql-1")
    assert ran.reply["status"] == "ok"

    cells = wait_for(
        lambda: [
            p for p in journal_rows(journal_file, "observation") if p["observation"].get("cell_id") == "cell-sql-1"
        ],
        what="the cell's observation in the journal",
    )
    obs = cells[0]["observation"]
    assert obs["source"] == VULNERABLE and obs["error"] is None
    assert cells[0]["session"].startswith("notebook:test_kernel@")

    said = wait_for(lambda: journal_rows(journal_file, "interjection"), what="the security interjection")
    interjection = said[0]["interjection"]
    assert said[0]["status"] == "pending"
    assert {"cell_id": "cell-sql-1", "start_line": 4, "end_line": 4} in interjection["locations"]
    assert "SQL" in interjection["content"]

    # the panel's pending interjection reached the frontend as comm traffic from the runtime thread
    wait_for(
        lambda: any("pending interjection" in v and "cell:cell-sql-1:4" in v for v in driver.widget_values()),
        poll=driver.drain,
        what="the pending interjection in the widget state",
    )

    # a click, sent exactly as the browser sends it, delivers it to the notebook
    driver.click(driver.button("Inject"))
    delivered = wait_for(
        lambda: [p for p in journal_rows(journal_file, "delivery") if p["interjection_id"] == interjection["id"]],
        what="the delivery after the click",
    )
    assert delivered[0]["outcome"] == "delivered"
    wait_for(
        lambda: any(
            v.startswith('<div class="watcher-outcomes">') and "delivered:" in v for v in driver.widget_values()
        ),
        poll=driver.drain,
        what="the delivered badge",
    )
    shown = driver.execute("x = 1", cell_id="cell-next")
    assert "[watcher security] warning (guidance @ cell:cell-sql-1:4)" in shown.stdout


AGENT_SETUP = """
import asyncio
import watcher
from watcher.testing import Reply, StubAnthropicServer

stub = StubAnthropicServer(
    Reply.tool_use("run_tests", {}, text="Running the tests."),
    Reply.tool_use("run_tests", {}),
    Reply.tool_use("run_tests", {}),
    Reply.text("Still thinking about the failure.", delay_s=1.0),
    Reply.text("Done."),
)
stub.start()

def run_tests() -> str:
    \"\"\"Run the test suite.\"\"\"
    raise AssertionError("test_login: expected 200, got 500")
"""


def test_a_click_on_inject_delivers_a_pending_interjection_into_a_running_agent(
    driver: Driver, journal_file: Path
) -> None:
    driver.execute("%load_ext watcher")
    assert driver.execute(AGENT_SETUP).error is None
    assert (
        "'reviewer' (errors, rules:errors, manual)"
        in driver.execute("%watch errors --mode manual --name reviewer").stdout
    )
    inject = driver.button("Inject")  # the reviewer panel's button, opened with the panel
    started = driver.execute(
        "run = watcher.agent('Make the tests pass.', tools=[run_tests], base_url=stub.base_url, api_key='scripted')"
    )
    assert started.error is None, started.error
    # the kernel is idle while the run goes on in the background on the runtime thread
    waited = driver.execute(
        "while not run.pending:\n    await asyncio.sleep(0.02)\nprint(run.status, list(run.pending))"
    )
    assert waited.stdout.startswith("running ")
    [pending_id] = re.findall(r"'(\w+)'", waited.stdout)
    driver.click(inject)

    def fates_once_delivered() -> list[str]:
        rows = [p for p in journal_rows(journal_file, "delivery") if p["interjection_id"] == pending_id]
        assert all(p["session"].startswith("agent-") for p in rows)
        outcomes = [p["outcome"] for p in rows]
        return outcomes if "delivered" in outcomes else []

    fates = wait_for(fates_once_delivered, what="the clicked interjection's delivery")
    assert fates == ["queued", "delivered"]  # queued by the click, delivered by the request that carried it
    finished = driver.execute(
        "result = await run\nprint(result.status)\nprint(stub.requests[-1].body['messages'][-1]['content'])"
    )
    assert finished.stdout.startswith("completed")
    assert '<system-nudge severity="warning">AssertionError has now been raised 3 times' in finished.stdout
