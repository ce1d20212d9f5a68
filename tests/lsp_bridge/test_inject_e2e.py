"""End to end: Inject from the editor reaches a live session through the journal's commands.

The session's owner (a real ``Runtime`` with a manual watcher, its command poller running) lives
in this test process; the language server is a separate process. The only link is the journal.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import LanguageClient

from watcher.core.interjection import Interjection, Location
from watcher.core.observations import ToolResult
from watcher.core.spec import WatcherSpec
from watcher.evaluators.callable import CallableEvaluator
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Journal
from watcher.runtime.session import RecordingSession
from watcher.testing import wait_until

from .conftest import diagnostics, journal_of

# one server per module and profile: the module runs on one xdist worker
pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.xdist_group("test_inject_e2e")]


@pytest_asyncio.fixture(loop_scope="module")
async def owner(repo: Path) -> AsyncIterator[tuple[Runtime, RecordingSession]]:
    """A live session with a manual watcher that flags ``app.py:2`` after each tool result."""
    journal = Journal(journal_of(repo))
    runtime = Runtime(journal=journal)
    session = RecordingSession("live-agent")
    flagged = Interjection(
        content="Hard-coded password in app.py",
        severity="critical",
        locations=(Location(path="app.py", start_line=2),),
    )
    spec = WatcherSpec(name="reviewer", role="security", mode="manual")
    runtime.attach(spec, CallableEvaluator(lambda request: flagged, name="reviewer"), session)
    runtime.start_command_poller(interval=0.05)
    yield runtime, session
    await runtime.close()
    journal.close()


async def _actions(client: LanguageClient, uri: str, diag: types.Diagnostic) -> dict[str, types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri), range=diag.range, context=types.CodeActionContext([diag])
        )
    )
    return {a.title: a for a in result or []}


async def test_inject_is_applied_by_the_owning_session(
    client: LanguageClient, repo: Path, owner: tuple[Runtime, RecordingSession]
) -> None:
    runtime, session = owner
    (repo / "app.py").write_text("import os\npassword = 'hunter2'\n")
    uri = (repo / "app.py").as_uri()
    runtime.observe(session.name, ToolResult(tool_call_id="t1", output="wrote app.py"))
    await runtime.settle()

    [diag] = await wait_until(lambda: diagnostics(client, uri), what="the pending interjection's diagnostic")
    assert diag.message.endswith("(pending: inject or dismiss)")
    actions = await _actions(client, uri, diag)
    assert set(actions) == {"Inject into live-agent", "Dismiss"}  # no fix: no fix action
    inject = actions["Inject into live-agent"].command
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=inject.command, arguments=inject.arguments)
    )
    assert result["session"] == "live-agent"

    # the owner applies the command and journals the delivery; the editor shows it
    await wait_until(lambda: session.delivered, what="the session to receive the interjection")
    assert session.delivered[0].content == "Hard-coded password in app.py"
    [after] = await wait_until(
        lambda: [d for d in diagnostics(client, uri) if d.message.endswith("(delivered to live-agent)")],
        what="the diagnostic to show the delivery",
    )
    assert after.severity == types.DiagnosticSeverity.Error
    assert set(await _actions(client, uri, after)) == {"Dismiss"}  # delivered: nothing left to inject
    commands = runtime.journal.commands(status=None) if runtime.journal else []
    assert [(c.kind, c.status) for c in commands] == [("inject", "applied")]


async def test_a_failed_command_is_reported(client: LanguageClient, repo: Path) -> None:
    """An injection nobody can apply (the owner marks it failed) says so on the diagnostic."""
    (repo / "gone.py").write_text("x = 1\n")
    uri = (repo / "gone.py").as_uri()
    from .conftest import interjection, write_events

    await write_events(
        journal_of(repo), [interjection("lost", session="ended", locations=[{"path": "gone.py", "start_line": 1}])]
    )
    [diag] = await wait_until(lambda: diagnostics(client, uri), what="the diagnostic")
    inject = (await _actions(client, uri, diag))["Inject into ended"].command
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=inject.command, arguments=inject.arguments)
    )
    await wait_until(lambda: "injection requested" in diagnostics(client, uri)[0].message, what="requested")
    with Journal(journal_of(repo)) as journal:  # stands in for an owner that cannot apply it
        journal.mark_command(result["command_id"], "failed", "session ended")
    await wait_until(
        lambda: diagnostics(client, uri)[0].message.endswith("(delivery failed: session ended)"), what="failure"
    )


async def test_bad_commands_are_errors_not_crashes(client: LanguageClient, repo: Path) -> None:
    for command, arguments in [
        ("watcher.inject", [{"interjection_id": "no-such-thing"}]),
        ("watcher.dismiss", []),
        ("watcher.dismiss", ["not an object"]),
        ("watcher.nonsense", [{}]),
    ]:
        with pytest.raises(Exception, match=r"interjection|argument|not defined"):
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command=command, arguments=arguments)
            )
    # the server still answers
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier((repo / "none.py").as_uri()),
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext([]),
        )
    )
    assert not result


async def test_a_command_carries_a_message_not_a_file(client: LanguageClient, repo: Path) -> None:
    """Content over 20,000 characters is refused; a dismissal stores none of what it was sent."""
    (repo / "big.py").write_text("x = 1\n")
    uri = (repo / "big.py").as_uri()
    from .conftest import interjection, write_events

    await write_events(
        journal_of(repo), [interjection("big", session="live", locations=[{"path": "big.py", "start_line": 1}])]
    )
    await wait_until(lambda: diagnostics(client, uri), what="the diagnostic")
    with pytest.raises(Exception, match="at most 20,000"):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="watcher.inject", arguments=[{"interjection_id": "big", "content": "x" * 1_000_000}]
            )
        )
    dismissed = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="watcher.dismiss", arguments=[{"interjection_id": "big", "content": "y" * 1_000_000}]
        )
    )
    with Journal(journal_of(repo)) as journal:
        [command] = [c for c in journal.commands(status=None) if c.id == dismissed["command_id"]]
    assert command.kind == "dismiss" and command.payload == {}
