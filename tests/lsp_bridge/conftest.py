"""Shared helpers for the language-server tests: a real client over stdio, a second process
writing the journal, and waits on conditions (never sleeps)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

WRITER = Path(__file__).with_name("journal_writer.py")
PROFILES = ["neovim", "visual-studio-code"]
SERVER = [
    sys.executable,
    "-m",
    "watcher.lsp_bridge",
    "--poll",
    "0.05",
    "--log-level",
    os.environ.get("WATCHER_LSP_TEST_LOG", "INFO"),
]


def server_env(**extra: str) -> dict[str, str]:
    """The test's environment without a stray WATCHER_JOURNAL, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k != "WATCHER_JOURNAL"}
    env.update(extra)
    return env


def fix_code_action_parsing(client: LanguageClient) -> None:
    """lsprotocol 2025.0.0 reads a CodeAction carrying a command as a Command (research §4.9)."""
    converter = client.protocol._converter

    def structure(obj: Any, _: Any) -> Any:
        target = types.Command if isinstance(obj.get("command"), str) else types.CodeAction
        return converter.structure(obj, target)

    converter.register_structure_hook(types.Command | types.CodeAction, structure)
    from typing import Union

    converter.register_structure_hook(Union[types.Command, types.CodeAction], structure)  # noqa: UP007


def make_workspace(tmp_path: Path) -> Path:
    """A project folder (with ``.git``) whose default journal the server follows."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True, exist_ok=True)
    return repo


def journal_of(repo: Path) -> Path:
    return repo / ".watcher" / "journal.sqlite3"


def capabilities(profile: str) -> types.ClientCapabilities:
    caps = client_capabilities(profile)
    caps.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities()
    )
    return caps


async def start_session(client: LanguageClient, profile: str, repo: Path) -> None:
    fix_code_action_parsing(client)
    client.interjections = []  # type: ignore[attr-defined]
    client.feature("watcher/interjection")(lambda params: client.interjections.append(params))  # type: ignore[attr-defined]
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(profile),
            root_uri=repo.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=repo.as_uri(), name="repo")],
        )
    )


@pytest_lsp.fixture(config=ClientServerConfig(SERVER, server_env=server_env()), params=PROFILES, scope="module")
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """One server per module and client profile (server start-up dominates the suite's time);
    tests share its workspace, so each uses its own files, ids and sessions."""
    repo = make_workspace(tmp_path_factory.mktemp("lsp"))
    lsp_client.repo = repo  # type: ignore[attr-defined]
    await start_session(lsp_client, request.param, repo)
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def repo(client: LanguageClient) -> Path:
    """The workspace folder of the module's server."""
    return client.repo  # type: ignore[attr-defined,no-any-return]


# --- journal writing from another process ---------------------------------------------------------


def interjection(
    id: str,
    content: str = "SQL query built from user input",
    *,
    session: str = "agent-1",
    watcher: str = "security",
    status: str = "pending",
    severity: str = "critical",
    urgent: bool = False,
    locations: list[dict[str, Any]] | None = None,
    fix: dict[str, Any] | None = None,
    index: int = 0,
) -> dict[str, Any]:
    """One ``interjection`` event for ``journal_writer.py``."""
    body = {
        "id": id,
        "watcher": watcher,
        "content": content,
        "urgent": urgent,
        "severity": severity,
        "action": "guidance",
        "locations": locations if locations is not None else [{"path": "auth.js", "start_line": 4, "end_line": 5}],
        "fix": fix,
    }
    return {
        "kind": "interjection",
        "session": session,
        "watcher": watcher,
        "payload": {"interjection": body, "status": status, "index": index},
    }


def delivery(id: str, outcome: str, *, session: str = "agent-1", watcher: str = "security") -> dict[str, Any]:
    return {
        "kind": "delivery",
        "session": session,
        "watcher": watcher,
        "payload": {"interjection_id": id, "outcome": outcome, "detail": "", "content": None},
    }


async def write_events(journal: Path | str, events: list[dict[str, Any]]) -> None:
    """Commit ``events`` to ``journal`` from a separate Python process."""
    spec = json.dumps(events)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:  # argv holds 128 kB at most
        file.write(spec)
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(WRITER), str(journal), f"@{file.name}", stderr=asyncio.subprocess.PIPE
        )
        _, err = await proc.communicate()
    finally:
        os.unlink(file.name)
    assert proc.returncode == 0, err.decode()


def diagnostics(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    return list(client.diagnostics.get(uri, ()))


def pytest_configure(config: pytest.Config) -> None:
    """``xdist_group`` is xdist's marker; declare it so ``-p no:xdist`` runs still collect."""
    config.addinivalue_line("markers", "xdist_group(name): run these tests on one xdist worker")
