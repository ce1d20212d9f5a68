"""A real editor: headless Neovim starts ``watcher-lsp`` with the documented Lua and reads the
diagnostic back. Skipped when ``nvim`` is not installed (CI installs Debian's ``neovim``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import interjection, journal_of, make_workspace, server_env

HERE = Path(__file__).parent / "nvim"
NVIM = shutil.which("nvim")

pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim is not installed (apt-get install neovim); CI installs it")


def test_neovim_shows_the_diagnostic(tmp_path: Path) -> None:
    repo = make_workspace(tmp_path)
    (repo / "deploy.py").write_text('import os\n\nAPI_KEY = "sk-ant-xxxx"\n')
    journal = journal_of(repo)
    where = [{"path": "deploy.py", "start_line": 3, "end_line": 3}]
    events = [interjection("nv1", "Hard-coded API key", severity="critical", locations=where, session="agent-nv")]
    subprocess.run(
        [sys.executable, str(Path(__file__).with_name("journal_writer.py")), str(journal), json.dumps(events)],
        check=True,
        timeout=60,
    )
    out = tmp_path / "nvim-out.json"
    env = server_env(
        WATCHER_NVIM_OUT=str(out),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",  # watcher-lsp of this venv
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    command = [NVIM, "--headless", "-n", "-i", "NONE", "-u", str(HERE / "watcher.lua")]
    command += ["-c", f"luafile {HERE / 'read_diagnostics.lua'}", str(repo / "deploy.py")]
    proc = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert out.exists(), f"nvim wrote nothing (exit {proc.returncode}): {proc.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert result["clients"] == ["watcher"]
    assert result["ok"], f"no diagnostic reached Neovim: {result}"
    [diag] = result["diagnostics"]
    assert (diag["lnum"], diag["col"], diag["end_lnum"], diag["end_col"]) == (2, 0, 2, 23)
    assert diag["severity"] == 1  # vim.diagnostic.severity.ERROR
    assert diag["source"] == "watcher"
    assert diag["message"].startswith("security: Hard-coded API key")


def test_the_documented_snippet_is_the_tested_one() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "editors.md").read_text()
    assert (HERE / "watcher.lua").read_text().strip() in docs
