"""``watcher-lsp --stdio``: the flag vscode-languageclient (and other clients) add for a stdio server."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from watcher.testing import wait_until

from .conftest import (
    SERVER,
    diagnostics,
    interjection,
    journal_of,
    make_workspace,
    server_env,
    start_session,
    write_events,
)

pytestmark = pytest.mark.xdist_group("test_stdio_flag")


@pytest_lsp.fixture(config=ClientServerConfig([*SERVER, "--stdio"], server_env=server_env()), scope="module")
async def client(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[None]:
    repo = make_workspace(tmp_path_factory.mktemp("lsp-stdio"))
    lsp_client.repo = repo  # type: ignore[attr-defined]
    await start_session(lsp_client, "visual-studio-code", repo)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="module")
async def test_the_server_started_with_stdio_shows_interjections(client: LanguageClient) -> None:
    repo: Path = client.repo  # type: ignore[attr-defined]
    (repo / "app.py").write_text("a = 1\n")
    await write_events(journal_of(repo), [interjection("stdio-1", locations=[{"path": "app.py", "start_line": 1}])])
    [diag] = await wait_until(lambda: diagnostics(client, (repo / "app.py").as_uri()), what="the diagnostic")
    assert diag.data["interjection_id"] == "stdio-1"


def test_stdio_and_tcp_together_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "watcher.lsp_bridge", "--stdio", "--tcp"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "not allowed with argument" in done.stderr and "Traceback" not in done.stderr
