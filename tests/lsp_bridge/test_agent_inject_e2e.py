"""End to end: Inject from the editor reaches a live agent run through the journal's commands.

A real ``AgentRun`` (the ``anthropic`` SDK against ``StubAnthropicServer``) writes the seed's
injectable ``login()`` to ``auth.js`` in the workspace; its ``security`` watcher, in manual mode
with the offline rules evaluator, holds the finding as pending and journals it. The language
server (another process, following the workspace's journal) shows it as a diagnostic; the client
asks for code actions and executes **Inject into <session>**; the run, which polls the journal's
``commands`` table, applies it, and the agent's next request carries ``[SUPERVISOR]: ...``.

The scripted agent keeps working (one short tool call per turn) until that text arrives, so the
run is live whenever the command lands, however slow the machine; then it fixes the file and ends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from watcher.agents import agent as start_agent
from watcher.agents import read_transcript, tool
from watcher.core.observations import ToolCall
from watcher.roles import spec_for_role
from watcher.runtime.journal import Journal
from watcher.testing import RecordedRequest, Reply, StubAnthropicServer, wait_until

from .conftest import diagnostics, journal_of

# one server per module and profile: the module runs on one xdist worker
pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.xdist_group("test_agent_inject_e2e")]

SEED = Path(__file__).resolve().parents[2] / "example_notebooks" / "data" / "agent_writes_vulnerable_code.jsonl"
SESSION = "auth-agent"
MARKER = "[SUPERVISOR]: "
TURNS = 400  # upper bound on the agent's busy turns; the test's own waits time out long before


def _login_writes() -> tuple[dict[str, Any], dict[str, Any]]:
    """The seed's two ``Write`` inputs for auth.js: the injectable login() and its fix."""
    calls = {obs.id: dict(obs.input) for obs in read_transcript(SEED) if isinstance(obs, ToolCall)}
    return calls["toolu_01"], calls["toolu_04"]


def _texts(request: RecordedRequest) -> list[str]:
    """The text blocks of the last message a request sent (where an injection lands)."""
    assert request.body is not None
    content = request.body["messages"][-1]["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    return [b["text"] for b in blocks if b.get("type") == "text"]


def _supervised(request: RecordedRequest) -> list[str]:
    return [t for t in _texts(request) if t.startswith(MARKER)]


def _agent_script(vulnerable: dict[str, Any], fixed: dict[str, Any]) -> list[Reply]:
    """Write the vulnerable file; run the tests each turn until told otherwise; then fix and stop."""
    told: list[int] = []

    def turn(request: RecordedRequest) -> Reply:
        if told:
            return Reply.text("login() now uses a parameterized query.")
        if _supervised(request):
            told.append(1)
            return Reply.tool_use("Write", fixed)
        return Reply.tool_use("run_tests", {}, delay_s=0.02)

    return [Reply.tool_use("Write", vulnerable), *[Reply.dynamic(turn) for _ in range(TURNS)]]


async def _actions(client: LanguageClient, uri: str, diag: types.Diagnostic) -> dict[str, types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri), range=diag.range, context=types.CodeActionContext([diag])
        )
    )
    return {a.title: a for a in result or []}


def _of(client: LanguageClient, uri: str, interjection_id: str) -> list[types.Diagnostic]:
    return [d for d in diagnostics(client, uri) if (d.data or {}).get("interjection_id") == interjection_id]


async def test_inject_from_the_editor_reaches_the_live_agent_run(client: LanguageClient, repo: Path) -> None:
    vulnerable, fixed = _login_writes()
    uri = (repo / vulnerable["file_path"]).as_uri()

    def write(file_path: str, content: str) -> str:
        """Write ``content`` to ``file_path``, replacing it.

        Args:
            file_path: the file to write, relative to the project
            content: the whole new content
        """
        (repo / file_path).write_text(content)
        return f"Successfully wrote {file_path}"

    def run_tests() -> str:
        """Run the project's tests."""
        return "3 passed"

    journal = Journal(journal_of(repo))
    with StubAnthropicServer(*_agent_script(vulnerable, fixed)) as stub:
        run = start_agent(
            "Write a login function for our Express app in auth.js, then keep the tests green.",
            base_url=stub.base_url,
            api_key="test-key",
            max_retries=0,
            tools=[tool(write, name="Write"), tool(run_tests)],
            watchers=[spec_for_role("security", mode="manual")],
            journal=journal,
            name=SESSION,
            max_steps=TURNS,
        )
        try:
            [(interjection_id, proposed)] = (await wait_until(lambda: run.pending, what="the pending finding")).items()
            assert "SQL injection" in proposed.content

            # the editor: the pending finding on auth.js, and its Inject action
            [diag] = await wait_until(lambda: _of(client, uri, interjection_id), what="the pending diagnostic")
            assert diag.message == f"security: {proposed.content} (pending: inject or dismiss)"
            assert diag.severity == types.DiagnosticSeverity.Error
            assert diag.data["session"] == SESSION
            actions = await _actions(client, uri, diag)
            assert {f"Inject into {SESSION}", "Dismiss"} <= set(actions)
            inject = actions[f"Inject into {SESSION}"].command
            assert inject is not None

            # the manual watcher held it back: the agent went on working without it
            assert not run.ended and not any(_supervised(r) for r in stub.requests)
            asked_at = len(stub.requests)
            result = await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command=inject.command, arguments=inject.arguments)
            )
            assert result["session"] == SESSION and result["interjection_id"] == interjection_id

            # the run applies the command: the agent's next request carries the interjection
            [landed] = await wait_until(
                lambda: [r for r in stub.requests if _supervised(r)], what="a request carrying the interjection"
            )
            assert stub.requests.index(landed) >= asked_at, "delivered only after the editor asked"
            [text] = _supervised(landed)
            assert text.startswith(f"{MARKER}{proposed.content}")
            assert "auth.js" in text  # the location travels with it

            # the owner journaled the delivery; the editor shows it, with nothing left to inject
            [after] = await wait_until(
                lambda: [
                    d for d in _of(client, uri, interjection_id) if d.message.endswith(f"(delivered to {SESSION})")
                ],
                what="the diagnostic to show the delivery",
            )
            assert after.severity == types.DiagnosticSeverity.Error
            assert not any(title.startswith("Inject into") for title in await _actions(client, uri, after))

            outcome = await run
        finally:
            if not run.ended:
                run.abort("test cleanup")
                await run
    try:
        assert outcome.status == "completed" and outcome.corrective_steps >= 1
        assert "${username}" not in (repo / "auth.js").read_text()
        commands = [(c.kind, c.interjection_id, c.status) for c in journal.commands(status=None)]
        assert commands == [("inject", interjection_id, "applied")]
    finally:
        journal.close()
