"""Manual mode where no widget can render (a console, nbconvert): text, ids, and two magics."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import start_new_kernel

from watcher.runtime import Journal

from .kernel_driver import Driver, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("kernel")]

INJECTABLE = 'def find(conn, name):\n    return conn.execute("SELECT * FROM t WHERE n = \'" + name + "\'")\n'


@pytest.fixture
def driver(tmp_path: Path) -> Iterator[tuple[Driver, Path]]:
    journal = tmp_path / "journal.sqlite3"
    env = {**os.environ, "WATCHER_JOURNAL": str(journal), "JPY_SESSION_NAME": "/work/plain.ipynb"}
    km, kc = start_new_kernel(kernel_name="python3", env=env)
    try:
        yield Driver(kc), journal
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def rows(path: Path, kind: str) -> list[dict[str, Any]]:
    with Journal(path) as journal:
        return [dict(r.payload) for r in journal.read(0, limit=100_000) if r.kind == kind]


def test_pending_interjections_are_shown_as_text_and_decided_with_magics(driver: tuple[Driver, Path]) -> None:
    kernel, journal = driver
    assert kernel.execute("%load_ext watcher").reply["status"] == "ok"
    attached = kernel.execute("%watch security --mode manual")
    plain = [o["data"]["text/plain"] for o in attached.outputs if "text/plain" in o.get("data", {})]
    assert plain and all("children=" not in p and "VBox" not in p for p in plain), plain
    assert "watcher 'security'" in plain[0] and "0 pending" in plain[0]

    kernel.execute(INJECTABLE, cell_id="c1")
    first = wait_for(lambda: rows(journal, "interjection"), what="the first interjection")[0]["interjection"]["id"]
    listed = kernel.execute("%watcher_pending")
    assert first in listed.stdout and "%watcher_accept ID" in listed.stdout
    watchers = kernel.execute("%watchers").stdout
    assert "1 pending" in watchers

    dismissed = kernel.execute(f"%watcher_dismiss {first}")
    assert f"dismissed {first}" in dismissed.stdout, dismissed.stderr
    wait_for(
        lambda: [d for d in rows(journal, "delivery") if d["interjection_id"] == first and d["outcome"] == "dismissed"],
        what="the dismissal in the journal",
    )
    again = kernel.execute(f"%watcher_dismiss {first}")
    assert "no pending interjection" in again.stderr and "Traceback" not in again.stderr

    kernel.execute(INJECTABLE.replace("find", "lookup"), cell_id="c2")
    second = wait_for(
        lambda: [i["interjection"]["id"] for i in rows(journal, "interjection") if i["interjection"]["id"] != first],
        what="the second interjection",
    )[0]
    accepted = kernel.execute(f"%watcher_accept {second} Use a parameterised query here.")
    assert f"accepted {second}" in accepted.stdout, accepted.stderr
    delivered = wait_for(
        lambda: [
            d for d in rows(journal, "delivery") if d["interjection_id"] == second and d["outcome"] == "delivered"
        ],
        what="the delivery",
    )
    assert delivered
    shown = accepted.stdout + kernel.execute("x = 1", cell_id="c3").stdout  # shown at the next breakpoint
    assert re.search(r"\[watcher security\][^\n]*\n?.*Use a parameterised query here", shown), shown


def test_a_missing_key_is_said_before_the_sdk_loads_and_a_dead_server_before_any_cell(
    driver: tuple[Driver, Path],
) -> None:
    kernel, _ = driver
    kernel.execute("import os; os.environ.pop('ANTHROPIC_API_KEY', None); os.environ.pop('ANTHROPIC_AUTH_TOKEN', None)")
    kernel.execute("%load_ext watcher")
    missing = kernel.execute("%watch security --evaluator anthropic")
    assert "ANTHROPIC_API_KEY is not set" in missing.stderr and "Traceback" not in missing.stderr
    loaded = kernel.execute("import sys; print('anthropic' in sys.modules)")
    assert loaded.stdout.strip() == "False"  # the answer came without loading the SDK
    dead = kernel.execute("%watch security --evaluator openai --model m --base-url http://127.0.0.1:9/v1")
    assert "cannot reach openai:m's server" in dead.stderr, dead.stderr
    assert "no watchers attached" in kernel.execute("%watchers").stdout
