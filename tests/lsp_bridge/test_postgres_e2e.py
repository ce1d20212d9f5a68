"""End to end on a PostgreSQL journal: another process journals an interjection, a real LSP client sees it.

The server follows ``$WATCHER_JOURNAL`` (a ``postgresql://`` URL) instead of the workspace's file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig

from watcher.runtime.journal import Journal
from watcher.testing import wait_until

from .conftest import (
    SERVER,
    diagnostics,
    interjection,
    make_workspace,
    server_env,
    start_session,
    write_events,
)

pytestmark = pytest.mark.asyncio(loop_scope="function")


async def test_the_language_server_follows_a_postgresql_journal(tmp_path: Path, pg_url: str) -> None:
    Journal(pg_url).close()  # the schema exists, as once any watched session has started
    repo = make_workspace(tmp_path)
    (repo / "auth.js").write_text("const db = 1;\n" * 6)
    uri = (repo / "auth.js").as_uri()
    secret = pg_url.replace("watcher@", "watcher:hunter2@")  # the server trusts us: the password is only carried
    client = await ClientServerConfig(SERVER, server_env=server_env(WATCHER_JOURNAL=secret)).start()
    try:
        await start_session(client, "visual-studio-code", repo)  # type: ignore[arg-type]
        payload = {"status": "attached", "role": "security", "mode": "manual", "authority": "supervisor"}
        attached = {"kind": "watcher", "session": "agent-1", "watcher": "security", "payload": payload}
        await write_events(pg_url, [attached, interjection("pg1", severity="warning")])
        [diag] = await wait_until(lambda: diagnostics(client, uri), within=30, what="a diagnostic from the server")  # type: ignore[arg-type]
        assert diag.severity == types.DiagnosticSeverity.Warning and diag.data["interjection_id"] == "pg1"
        assert not (repo / ".watcher").exists(), "the server read the server's journal, made no file"
        assert "hunter2" not in str(diag.data) and diag.data["journal"].startswith("postgresql://watcher@")
        actions = await client.text_document_code_action_async(  # type: ignore[attr-defined]
            types.CodeActionParams(types.TextDocumentIdentifier(uri), diag.range, types.CodeActionContext([diag]))
        )
        assert "Dismiss" in [a.title for a in actions or []], "a journal URL with a password lost its quick fixes"
        for asked in ([], [{"summary": True}]):  # the history view's and the status bar's
            history = await client.workspace_execute_command_async(  # type: ignore[attr-defined]
                types.ExecuteCommandParams(command="watcher.history", arguments=asked)
            )
            assert history["watchers"] and "hunter2" not in json.dumps(history)  # the watchers' journal carried it
        await client.workspace_execute_command_async(  # type: ignore[attr-defined]
            types.ExecuteCommandParams(
                command="watcher.dismiss", arguments=[{"interjection_id": "pg1", "journal": diag.data["journal"]}]
            )
        )
        with Journal(pg_url, create=False) as journal:
            assert [(c.session, c.kind, c.interjection_id) for c in journal.commands(status=None)] == [
                ("agent-1", "dismiss", "pg1")
            ], "the editor's dismissal is a command in the server's journal"
        await client.shutdown_session()  # type: ignore[attr-defined]
    finally:
        await client.stop()
