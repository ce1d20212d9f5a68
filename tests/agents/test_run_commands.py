"""A manual watcher's interjection waits as pending; another process accepts or dismisses it.

The second process writes to the journal's ``commands`` table with ``Journal.submit_command`` —
as the language server or a widget in another kernel would — and the run, which started the
runtime's command poller because it has a journal, applies it.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from run_helpers import Files, injected_texts, login_writes, start

from watcher.agents import AgentRun, tool
from watcher.roles import spec_for_role
from watcher.runtime import Journal
from watcher.testing import Reply, StubAnthropicServer, wait_until

SUBMIT = textwrap.dedent(
    """
    import json, sys
    from watcher.runtime import Journal
    path, session, kind, interjection_id, payload, watcher = sys.argv[1:7]
    journal = Journal(path)
    print(journal.submit_command(session, kind, interjection_id, watcher=watcher, payload=json.loads(payload)))
    journal.close()
    """
)


async def _submit(
    path: Path, session: str, kind: str, interjection_id: str, payload: dict[str, Any], watcher: str = ""
) -> int:
    args = [sys.executable, "-c", SUBMIT, str(path), session, kind, interjection_id, json.dumps(payload), watcher]
    done = await asyncio.to_thread(subprocess.run, args, capture_output=True, text=True, check=True, timeout=60)
    return int(done.stdout.strip())


def _review_tool(holder: dict[str, AgentRun]) -> Any:
    async def wait_for_review() -> str:
        """Wait until the reviewer has decided on every pending finding."""
        await wait_until(lambda: not holder["run"].pending)
        return "review finished"

    return tool(wait_for_review)


async def test_accept_with_an_edit_from_another_process_reaches_the_next_request(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    journal = Journal(path)
    vulnerable, fixed = login_writes()
    files, holder = Files(), {}
    script = [
        Reply.tool_use("Write", vulnerable),
        Reply.tool_use("wait_for_review", {}),
        Reply.tool_use("Write", fixed),
        Reply.text("Fixed."),
    ]
    with StubAnthropicServer(*script) as stub:
        run = holder["run"] = start(
            stub,
            tools=[tool(files.write, name="Write"), _review_tool(holder)],
            watchers=[spec_for_role("security", mode="manual")],
            journal=journal,
            name="manual",
        )
        pending = await wait_until(lambda: run.pending)
        [(interjection_id, proposed)] = pending.items()
        assert "SQL injection" in proposed.content
        await stub.wait_for_requests_async(2)
        assert injected_texts(stub.requests[1]) == [], "a manual watcher's interjection waits"
        command = await _submit(
            path, "manual", "accept", interjection_id, {"content": "Use a parameterized query in login()."}
        )
        result = await run
    assert result.status == "completed" and "${username}" not in files.written["auth.js"]
    [delivered] = injected_texts(stub.requests[2])
    assert delivered.startswith("[SUPERVISOR]: Use a parameterized query in login().")
    [row] = [c for c in journal.commands(status=None) if c.id == command]
    assert (row.status, row.detail) == ("applied", "queued")  # the run queues it for its next request
    fates = [r.payload["outcome"] for r in journal.read(session="manual") if r.kind == "delivery"]
    assert fates == ["queued", "delivered"]  # delivered once the request carrying it was sent
    journal.close()


async def test_dismiss_from_another_process_drops_the_interjection(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    journal = Journal(path)
    vulnerable, _ = login_writes()
    files, holder = Files(), {}
    script = [Reply.tool_use("Write", vulnerable), Reply.tool_use("wait_for_review", {}), Reply.text("Left as is.")]
    with StubAnthropicServer(*script) as stub:
        run = holder["run"] = start(
            stub,
            tools=[tool(files.write, name="Write"), _review_tool(holder)],
            watchers=[spec_for_role("security", mode="manual")],
            journal=journal,
            name="dismissed",
        )
        [interjection_id] = await wait_until(lambda: list(run.pending))
        await stub.wait_for_requests_async(2)
        command = await _submit(path, "dismissed", "dismiss", interjection_id, {"reason": "test fixture"})
        result = await run
    assert result.status == "completed" and result.corrective_steps == 0
    assert all(injected_texts(r) == [] for r in stub.requests[1:])
    [row] = [c for c in journal.commands(status=None) if c.id == command]
    assert (row.status, row.detail) == ("applied", "dismissed")
    outcomes = [r.payload["outcome"] for r in journal.read(session="dismissed") if r.kind == "delivery"]
    assert outcomes == ["dismissed"]
    journal.close()


async def test_accept_and_dismiss_from_python() -> None:
    vulnerable, _ = login_writes()
    files, holder = Files(), {}
    script = [Reply.tool_use("Write", vulnerable), Reply.tool_use("wait_for_review", {}), Reply.text("ok")]
    with StubAnthropicServer(*script) as stub:
        run = holder["run"] = start(
            stub,
            tools=[tool(files.write, name="Write"), _review_tool(holder)],
            watchers=[spec_for_role("security", mode="manual")],
        )
        [interjection_id] = await wait_until(lambda: list(run.pending))
        await stub.wait_for_requests_async(2)  # the agent is waiting in wait_for_review
        assert await run.accept(interjection_id) == "queued"
        await run
    [delivered] = injected_texts(stub.requests[2])
    assert delivered.startswith("[SUPERVISOR]: ") and "SQL injection" in delivered


async def test_an_inject_command_with_content_is_guidance_from_a_person(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    journal = Journal(path)

    async def wait_for_editor() -> str:
        """Wait until the editor's command was applied."""
        await wait_until(lambda: [c for c in journal.commands(status=None) if c.status != "new"])
        return "editor done"

    script = [Reply.tool_use("wait_for_editor", {}), Reply.text("ok")]
    with StubAnthropicServer(*script) as stub:
        run = start(stub, "go", tools=[tool(wait_for_editor)], watchers=["security"], journal=journal, name="edited")
        await stub.wait_for_requests_async(1)
        await _submit(path, "edited", "inject", "", {"content": "Prefer the ORM helpers."}, watcher="security")
        result = await run
    assert injected_texts(stub.requests[1]) == ["Supervisor:Guidance: Prefer the ORM helpers."]
    assert result.status == "completed"
    journal.close()
