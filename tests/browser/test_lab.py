"""The quickstart notebook in a real JupyterLab, driven through Debian's chromium with Playwright.

The test starts ``jupyter lab`` on a random loopback port (no token, no browser), opens the
quickstart notebook, runs every cell, waits for the security panel to show its pending
interjection, clicks **Inject** with the mouse, and checks the side effects: the panel's delivered
badge and the delivery in the journal (read from this process). JupyterLab sends each cell's
nbformat id, so the interjection must point at the vulnerable cell by that id. Screenshots are
kept in ``tests/artifacts/``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from watcher.runtime.journal import Journal

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("browser"),
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="Debian's chromium is not installed (apt-get install -y chromium)"
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A JupyterLab serving a copy of the quickstart notebook; yields (base url, journal path)."""
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(ROOT / "example_notebooks" / "quickstart.ipynb", work / "quickstart.ipynb")
    kernels = tmp_path / "jupyter" / "kernels" / "python3"  # this interpreter's kernel, first on JUPYTER_PATH
    kernels.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3",
        "language": "python",
    }
    (kernels / "kernel.json").write_text(json.dumps(spec))
    settings = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    journal = tmp_path / "journal.sqlite3"
    port = _free_port()
    env = {**os.environ, "WATCHER_JOURNAL": str(journal), "JUPYTER_PATH": str(tmp_path / "jupyter")}
    args = [
        sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        "--ServerApp.port_retries=0", "--IdentityProvider.token=", "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True", "--LabApp.expose_app_in_browser=True",
        f"--ServerApp.root_dir={work}", f"--LabApp.user_settings_dir={tmp_path / 'settings'}",
        f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}", "--allow-root",
    ]  # fmt: skip
    log = (tmp_path / "lab.log").open("w")
    proc = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=work)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 40
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status", timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"jupyter lab did not start: {(tmp_path / 'lab.log').read_text()[-2000:]}"
                    ) from None
                time.sleep(0.1)
        yield base, journal
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _rows(journal: Path, kind: str) -> list[dict[str, object]]:
    if not journal.exists():
        return []
    with Journal(journal) as jr:
        return [row.payload for row in jr.read(0, limit=100_000) if row.kind == kind]


def test_quickstart_runs_the_panel_renders_and_inject_lands(lab: tuple[str, Path]) -> None:
    from playwright.sync_api import expect, sync_playwright

    base, journal = lab
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1400})
        try:
            page.goto(f"{base}/lab/tree/quickstart.ipynb")
            page.wait_for_function(
                "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'",
                timeout=60_000,
            )
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            security = page.locator(".watcher-panel").filter(has_text="role security")
            expect(security).to_have_count(1, timeout=60_000)
            pending = security.locator(".watcher-pending")
            expect(pending).to_contain_text("SQL", timeout=30_000)
            # every cell ran (the last one shows the history DataFrame)
            page.wait_for_function(
                "() => { const w = window.jupyterapp.shell.currentWidget.content.widgets;"
                " return w[w.length - 1].model.outputs.length > 0 }",
                timeout=60_000,
            )
            security.scroll_into_view_if_needed()
            security.screenshot(path=str(ARTIFACTS / "panel-pending.png"))

            said = _rows(journal, "interjection")
            assert said, "the security watcher's interjection was not journaled"
            interjection = said[0]["interjection"]
            assert isinstance(interjection, dict)
            assert interjection["locations"][0]["cell_id"] == "quick-06"  # JupyterLab's cell id for the vulnerable cell

            security.locator("button.widget-button", has_text="Inject").click()
            expect(security.locator(".watcher-outcomes")).to_contain_text("delivered", timeout=15_000)
            expect(pending).to_have_count(0)
            deadline = time.monotonic() + 15
            while not [d for d in _rows(journal, "delivery") if d["interjection_id"] == interjection["id"]]:
                assert time.monotonic() < deadline, "the click's delivery never reached the journal"
                time.sleep(0.1)
            [delivered] = [d for d in _rows(journal, "delivery") if d["interjection_id"] == interjection["id"]]
            assert delivered["outcome"] == "delivered"
            security.screenshot(path=str(ARTIFACTS / "panel.png"))
            page.screenshot(path=str(ARTIFACTS / "lab.png"), full_page=True)
        finally:
            browser.close()
