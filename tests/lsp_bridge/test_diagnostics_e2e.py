"""End to end: a second process journals interjections; a real LSP client sees diagnostics."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from watcher.testing import wait_until

from .conftest import delivery, diagnostics, interjection, journal_of, write_events

# one server per module and profile: the module runs on one xdist worker
pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.xdist_group("test_diagnostics_e2e")]

AUTH_JS = (
    "const db = require('./db');\n"
    "\n"
    "function login(username, password) {\n"
    "  const query = `SELECT * FROM users WHERE username='${username}'`;\n"
    "  return db.query(query);\n"
    "}\n"
)


def _file(repo: Path, name: str) -> str:
    (repo / name).write_text(AUTH_JS)
    return (repo / name).as_uri()


async def test_interjection_from_another_process_becomes_a_diagnostic(client: LanguageClient, repo: Path) -> None:
    uri = _file(repo, "auth.js")
    await write_events(journal_of(repo), [interjection("i1", severity="critical")])
    found = await wait_until(lambda: diagnostics(client, uri), what="a diagnostic on auth.js")
    [diag] = found
    assert diag.source == "watcher"
    assert diag.severity == types.DiagnosticSeverity.Error
    assert diag.range == types.Range(types.Position(3, 2), types.Position(4, 25))
    assert diag.message == "security: SQL query built from user input (pending: inject or dismiss)"
    assert diag.data["interjection_id"] == "i1"
    assert diag.data["session"] == "agent-1"
    # a live interjection is also announced with the custom notification
    await wait_until(
        lambda: [n for n in client.interjections if n.interjection.id == "i1"], what="watcher/interjection"
    )


async def test_severities_and_absolute_paths(client: LanguageClient, repo: Path) -> None:
    uri = _file(repo, "severities.js")
    other = repo.parent / "elsewhere.py"
    other.write_text("x = 1\n")
    events = [
        interjection("w", severity="warning", locations=[{"path": "severities.js", "start_line": 1, "end_line": 1}]),
        interjection("h", severity="hint", locations=[{"path": str(other), "start_line": 1, "end_line": 1}]),
    ]
    await write_events(journal_of(repo), events)
    await wait_until(lambda: diagnostics(client, uri) and diagnostics(client, other.as_uri()), what="both diagnostics")
    assert [d.severity for d in diagnostics(client, uri)] == [types.DiagnosticSeverity.Warning]
    assert [d.severity for d in diagnostics(client, other.as_uri())] == [types.DiagnosticSeverity.Information]
    assert diagnostics(client, other.as_uri())[0].range == types.Range(types.Position(0, 0), types.Position(0, 5))


async def test_code_actions_offered_and_dismiss_clears(client: LanguageClient, repo: Path) -> None:
    uri = _file(repo, "actions.js")
    fix = {
        "location": {"path": "actions.js", "start_line": 4, "end_line": 5},
        "replacement": "  return db.query('SELECT * FROM users WHERE username = ?', [username]);",
        "title": "Use a parameterised query",
    }
    await write_events(
        journal_of(repo), [interjection("i2", fix=fix, locations=[{"path": "actions.js", "start_line": 4}])]
    )
    [diag] = await wait_until(lambda: diagnostics(client, uri), what="the diagnostic")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="javascript", version=1, text=AUTH_JS)
        )
    )
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag]),
        )
    )
    assert result is not None
    by_title = {a.title: a for a in result}
    assert set(by_title) == {"Inject into agent-1", "Use a parameterised query", "Dismiss"}
    assert all(isinstance(a, types.CodeAction) and a.diagnostics for a in result)
    assert by_title["Inject into agent-1"].command.command == "watcher.inject"
    [edit] = by_title["Use a parameterised query"].edit.changes[uri]
    assert edit.range == types.Range(types.Position(3, 0), types.Position(5, 0))
    assert edit.new_text == fix["replacement"] + "\n"

    dismiss = by_title["Dismiss"].command
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=dismiss.command, arguments=dismiss.arguments)
    )
    await wait_until(lambda: diagnostics(client, uri) == [], what="the diagnostic to clear")


async def test_delivery_updates_and_dismissal_by_owner_removes(client: LanguageClient, repo: Path) -> None:
    uri = _file(repo, "delivery.js")
    here = [{"path": "delivery.js", "start_line": 2, "end_line": 3}]
    journal = journal_of(repo)
    await write_events(journal, [interjection("a", status="queued", locations=here), interjection("b", locations=here)])
    await wait_until(lambda: len(diagnostics(client, uri)) == 2, what="two diagnostics")
    await write_events(journal, [delivery("a", "delivered"), delivery("b", "dismissed")])

    def settled() -> list[types.Diagnostic]:
        found = diagnostics(client, uri)
        return found if len(found) == 1 and "delivered" in found[0].message else []

    [diag] = await wait_until(settled, what="a delivered diagnostic and the dismissed one gone")
    assert diag.data["interjection_id"] == "a"
    assert diag.message.endswith("(delivered to agent-1)")


async def test_interjection_without_location_is_a_message(client: LanguageClient, repo: Path) -> None:
    events = [
        interjection("urgent", "Stop: you are looping", urgent=True, locations=[]),
        interjection("calm", "Consider writing a test first", severity="hint", locations=[]),
    ]
    await write_events(journal_of(repo), events)
    ids = {"urgent", "calm"}
    await wait_until(lambda: ids <= {n.interjection.id for n in client.interjections}, what="watcher/interjection x2")
    shown = await wait_until(lambda: [m for m in client.messages if "looping" in m.message], what="showMessage")
    assert shown[0].type == types.MessageType.Error
    logged = await wait_until(lambda: [m for m in client.log_messages if "test first" in m.message], what="logMessage")
    assert logged[0].type == types.MessageType.Info
    assert not [m for m in client.messages if "test first" in m.message]


async def test_audit_flow_replay_shows_the_finding_on_the_file(client: LanguageClient, repo: Path) -> None:
    """``watcher replay FILE --journal PATH`` of an agent that wrote auth.js: the editor shows it."""
    transcript = Path(__file__).parents[2] / "example_notebooks" / "data" / "agent_writes_vulnerable_code.jsonl"
    first_write = json.loads(transcript.read_text().splitlines()[2])["input"]
    (repo / first_write["file_path"]).write_text(first_write["content"])  # what the agent left on disk
    uri = (repo / "auth.js").as_uri()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "watcher", "replay", str(transcript), "--journal", str(journal_of(repo)),
        cwd=repo, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()

    def from_replay() -> list[types.Diagnostic]:
        return [d for d in diagnostics(client, uri) if d.data["session"] == "agent-login"]

    [diag] = await wait_until(from_replay, what="the replayed security finding on auth.js")
    assert diag.data["watcher"] == "security"
    assert diag.severity == types.DiagnosticSeverity.Error
    assert "SQL injection" in diag.message
    assert (diag.range.start.line, diag.range.end.line) == (3, 4)
    deploy = await wait_until(lambda: diagnostics(client, (repo / "deploy.py").as_uri()), what="deploy.py findings")
    assert {d.range.start.line for d in deploy} == {3, 6}


async def test_history_lists_findings_and_attached_watchers(client: LanguageClient, repo: Path) -> None:
    """``watcher.history``: what an editor's history view and status bar show."""
    _file(repo, "history.js")
    here = [{"path": "history.js", "start_line": 1, "end_line": 1}]

    def watcher(status: str) -> dict[str, object]:
        payload = {"status": status, "role": "security", "mode": "manual", "authority": "supervisor", "evaluator": ""}
        return {"kind": "watcher", "session": "history-1", "watcher": "security", "payload": payload}

    def history_of() -> Any:
        return client.workspace_execute_command_async(types.ExecuteCommandParams(command="watcher.history"))

    await write_events(journal_of(repo), [watcher("attached"), interjection("h1", session="history-1", locations=here)])
    await wait_until(lambda: diagnostics(client, (repo / "history.js").as_uri()), what="the diagnostic")
    history = await history_of()
    assert {"session": "history-1", "watcher": "security", "journal": str(journal_of(repo))} in history["watchers"]
    [h1] = [f for f in history["findings"] if f["interjection"]["id"] == "h1"]
    assert (h1["status"], h1["shown"], h1["injectable"]) == ("pending", True, True)
    # the status bar's question, every 3 s: counts, not every finding
    params = types.ExecuteCommandParams(command="watcher.history", arguments=[{"summary": True}])
    counts = await client.workspace_execute_command_async(params)
    waiting = [f for f in history["findings"] if f["shown"] and f["status"] in ("pending", "queued", "requested")]
    assert (counts["waiting"], counts["total"]) == (len(waiting), len(history["findings"])) and "findings" not in counts
    assert counts["watchers"] == history["watchers"]

    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="watcher.dismiss", arguments=[{"interjection_id": "h1"}])
    )
    await write_events(journal_of(repo), [watcher("detached")])
    for _ in range(500):  # until the server has read the detach (10 s at most)
        history = await history_of()
        if not [w for w in history["watchers"] if w["session"] == "history-1"]:
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("the detached watcher is still listed as attached")
    [h1] = [f for f in history["findings"] if f["interjection"]["id"] == "h1"]
    assert (h1["status"], h1["shown"]) == ("dismissed", False)
