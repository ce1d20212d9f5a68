"""``%load_ext watcher`` reads the environment once, as it loads: the notebook's name, the journal, bad values."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _ipython(code: str, env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "IPython", "--no-banner", "--HistoryManager.enabled=False", "-c", code],
        capture_output=True, text=True, timeout=120, env={**os.environ, **env}, cwd=cwd,
    )  # fmt: skip
    return done.stdout + done.stderr


def test_the_session_is_named_after_the_notebook_and_journals_where_the_variable_says(tmp_path: Path) -> None:
    journal = tmp_path / "elsewhere.sqlite3"
    code = "%load_ext watcher\nfrom watcher.kernel_ext import current\nprint(current().session.name, current().journal_path)"
    env = {"JPY_SESSION_NAME": "/home/u/analysis.ipynb", "WATCHER_JOURNAL": str(journal)}
    output = _ipython(code, env, tmp_path)
    name, where = output.split()[:2]
    assert name.startswith("notebook:analysis@") and where == str(journal), output
    assert journal.exists()


def test_a_bad_variable_is_said_in_one_line_and_nothing_is_loaded(tmp_path: Path) -> None:
    code = "%load_ext watcher\nfrom watcher.kernel_ext import current\nprint('loaded:', current() is not None)"
    output = _ipython(code, {"ANTHROPIC_BASE_URL": "localhost:8080", "WATCHER_JOURNAL": ""}, tmp_path)
    assert "watcher: cannot load the extension: ANTHROPIC_BASE_URL='localhost:8080' is not an http(s) URL" in output
    assert "Traceback" not in output and "loaded: False" in output, output
    assert not (tmp_path / ".watcher").exists()  # no journal was opened
