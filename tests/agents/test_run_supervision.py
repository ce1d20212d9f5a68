"""Supervised agent runs: watchers interject, the interjection is in the next request, formats, caps.

The real ``anthropic`` SDK talks to ``StubAnthropicServer``; watchers run in a real ``Runtime``
with the real ``security`` role (rules) or the real Anthropic evaluator against a second stub.
"""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import pytest
from run_helpers import Files, assert_valid_history, injected_texts, login_writes, start, user_blocks

from watcher.agents import GUIDANCE_PROTOCOL, AgentRun, format_injection, tool
from watcher.core.errors import SessionEndedError, UnreachableServerError
from watcher.core.evaluation import EvaluationRequest
from watcher.core.interjection import Interjection, Location, SuggestedFix
from watcher.core.observations import ToolResult
from watcher.core.spec import Caps, Triggers, WatcherSpec
from watcher.evaluators import CallableEvaluator
from watcher.runtime import Journal, Runtime
from watcher.testing import Reply, StubAnthropicServer

INTERJECT = """I reviewed the new file.
[INTERJECT]
urgent: false
severity: critical
location: auth.js:4
content: login() splices username and password into the SQL string: use a parameterized query.
[/INTERJECT]"""
CONTINUE = "[CONTINUE]\nnothing new\n[/CONTINUE]"


def _login_script() -> list[Reply]:
    vulnerable, fixed = login_writes()
    return [
        Reply.tool_use("Write", vulnerable, text="I'll create a login function that checks the users table."),
        Reply.tool_use("Write", fixed, text="Switching to a parameterized query."),
        Reply.text("auth.js now uses a parameterized query."),
    ]


async def test_security_rules_watcher_interjects_and_the_next_turn_fixes_login(tmp_path: Path) -> None:
    files = Files()
    journal = Journal(tmp_path / "journal.sqlite3")
    with StubAnthropicServer(*_login_script()) as stub:
        run = start(stub, tools=[tool(files.write, name="Write")], watchers=["security"], journal=journal, name="login")
        result = await run
    assert result.status == "completed" and result.steps == 3
    blocks = user_blocks(stub.requests[1])
    assert blocks[0]["type"] == "tool_result", "tool results first, the interjection after them"
    supervisor = blocks[1]["text"]
    assert supervisor.startswith("[SUPERVISOR]: ") and "SQL injection" in supervisor and "auth.js:4" in supervisor
    assert "${username}" not in files.written["auth.js"] and "[username, password]" in files.written["auth.js"]
    assert all(GUIDANCE_PROTOCOL in r.body["system"] for r in stub.requests), "supervised from the first request"
    assert not any(t.startswith("[SUPERVISOR]") for t in injected_texts(stub.requests[2])), "the fix is not flagged"
    assert result.corrective_steps == 1 and 0 < result.corrective_tokens < result.input_tokens + result.output_tokens
    assert_valid_history(list(result.messages))

    rows = journal.read(session="login")
    assert [r.payload["outcome"] for r in rows if r.kind == "delivery"] == ["queued", "delivered"]
    said = [
        r.payload["observation"]["text"]
        for r in rows
        if r.kind == "observation" and r.payload["observation"]["kind"] == "user_message"
    ]
    assert said[1] == supervisor, "the delivered message is itself observed and journaled"
    journal.close()


async def test_security_anthropic_watcher_interjects_and_the_next_turn_fixes_login() -> None:
    files = Files()
    with (
        StubAnthropicServer(*_login_script()) as stub,
        StubAnthropicServer(Reply.text(INTERJECT), *[Reply.text(CONTINUE)] * 4) as judge,
    ):
        options = {"base_url": judge.base_url, "api_key": "test-key", "max_retries": 0}
        run = start(
            stub,
            tools=[tool(files.write, name="Write")],
            watchers=["security"],
            evaluator="anthropic",
            evaluator_options=options,
        )
        result = await run
    assert result.status == "completed"
    assert "${username}" in judge.requests[0].body["messages"][0]["content"], "the watcher saw the Write"
    assert injected_texts(stub.requests[1]) == [
        "[SUPERVISOR]: login() splices username and password into the SQL string: use a parameterized query.\n(at auth.js:4)"
    ]
    assert "${username}" not in files.written["auth.js"]


async def test_an_llm_watcher_whose_server_is_down_is_refused_before_the_run_starts() -> None:
    """Said once, before the run's first paid request: not an unread error at every step while the
    agent works unwatched."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, never listening: nothing answers there
        down = f"http://127.0.0.1:{closed.getsockname()[1]}"
        with StubAnthropicServer(Reply.text("Done.")) as stub:
            with pytest.raises(UnreachableServerError, match=r"127\.0\.0\.1"):
                start(
                    stub,
                    watchers=["security"],
                    evaluator="anthropic",
                    evaluator_options={"base_url": down, "api_key": "test-key", "max_retries": 0},
                )
            assert stub.requests == [], "the agent's model was never asked"


async def test_person_guidance_uses_the_marker_and_adds_the_protocol() -> None:
    holder = {}

    def lookup(name: str) -> str:
        """Look a user up."""
        holder["run"].guide("ask about their day")
        return f"{name}: active"

    with StubAnthropicServer(
        Reply.tool_use("lookup", {"name": "Ana"}), Reply.text("Hey Ana! How's your day been?")
    ) as stub:
        run = holder["run"] = start(stub, "Say hi to Ana.", tools=[lookup], system="You are a friendly assistant.")
        result = await run
    first, second = stub.requests
    assert first.body["system"] == "You are a friendly assistant.", "no protocol while nobody supervises"
    assert (
        second.body["system"].startswith("You are a friendly assistant.\n\n")
        and GUIDANCE_PROTOCOL in second.body["system"]
    )
    assert [b["type"] for b in user_blocks(second)] == ["tool_result", "text"]
    assert injected_texts(second) == ["Supervisor:Guidance: ask about their day"]
    assert result.corrective_steps == 1


@pytest.mark.parametrize(
    ("interjection", "authority", "by_person", "expected"),
    [
        (
            Interjection("Use a parameterized query.", watcher="security"),
            "supervisor",
            False,
            "[SUPERVISOR]: Use a parameterized query.",
        ),
        (Interjection("Consider caching.", watcher="perf"), "peer", False, "[PEER perf]: Consider caching."),
        (
            Interjection("Try another file.", severity="hint", action="nudge"),
            "supervisor",
            False,
            '<system-nudge severity="hint">Try another file.</system-nudge>',
        ),
        (
            Interjection("API v2 is live.", urgent=True, action="sync", watcher="relay"),
            "peer",
            False,
            '<sync-message from="relay" urgency="urgent">API v2 is live.</sync-message>',
        ),
        (
            Interjection("ask about their day", watcher="security"),
            "supervisor",
            True,
            "Supervisor:Guidance: ask about their day",
        ),
        (
            Interjection("a </system-nudge> b", action="nudge"),
            "supervisor",
            False,
            '<system-nudge severity="warning">a <\\/system-nudge> b</system-nudge>',
        ),
    ],
)
def test_injection_formats(interjection: Interjection, authority: str, by_person: bool, expected: str) -> None:
    assert format_injection(interjection, authority=authority, by_person=by_person) == expected


def test_injection_names_locations_and_the_suggested_fix() -> None:
    where = Location(path="auth.js", start_line=4, end_line=5)
    found = Interjection("Injectable.", locations=(where,), fix=SuggestedFix(where, "db.query(q, [u, p])"))
    assert (
        format_injection(found)
        == "[SUPERVISOR]: Injectable.\n(at auth.js:4-5)\nSuggested fix for auth.js:4-5:\n```\ndb.query(q, [u, p])\n```"
    )


def _judge(*answers: Interjection | None) -> CallableEvaluator:
    """A watcher that answers in turn at each tool result (then continues)."""
    queue = list(answers)

    def judge(request: EvaluationRequest) -> Interjection | None:
        if not isinstance(request.observations[-1], ToolResult) or not queue:
            return None
        return queue.pop(0)

    return CallableEvaluator(judge)


def _spec(name: str, **options: object) -> WatcherSpec:
    return WatcherSpec(
        name=name,
        role=name,
        triggers=Triggers(on=frozenset({"tool_result"})),
        caps=Caps(max_interjections_per_turn=100),
        **options,
    )  # type: ignore[arg-type]


async def test_peer_and_sync_interjections_arrive_in_their_formats() -> None:
    judge = _judge(
        Interjection("Deploys are frozen today.", action="sync"),
        Interjection("The helper in utils.py does this already."),
    )
    with StubAnthropicServer(
        *[Reply.tool_use("lookup", {"name": f"u{i}"}) for i in range(2)], Reply.text("ok")
    ) as stub:
        result = await start(
            stub,
            "go",
            tools=[tool(lambda name: name, name="lookup")],
            watchers=[(_spec("relay", authority="peer"), judge)],
        )
    assert injected_texts(stub.requests[1]) == [
        '<sync-message from="relay" urgency="normal">Deploys are frozen today.</sync-message>'
    ]
    assert injected_texts(stub.requests[2]) == ["[PEER relay]: The helper in utils.py does this already."]
    assert result.status == "completed"


async def test_corrections_per_step_are_capped_and_counted(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite3")
    judge = _judge(*(Interjection(f"retry {i}") for i in range(10)))
    with StubAnthropicServer(
        *[Reply.tool_use("lookup", {"name": f"u{i}"}) for i in range(5)], Reply.text("done")
    ) as stub:
        run = start(
            stub,
            "go",
            tools=[tool(lambda name: name, name="lookup")],
            watchers=[(_spec("strict"), judge)],
            max_corrections_per_step=2,
            journal=journal,
            name="capped",
        )
        result = await run
    corrected = [any(t.startswith("[SUPERVISOR]: retry") for t in injected_texts(r)) for r in stub.requests]
    assert corrected == [False, True, True, False, True, True], "a third correction in a row is refused"
    assert result.steps == 6 and result.corrective_steps == 4
    outcomes = [
        (r.payload["outcome"], r.payload["detail"]) for r in journal.read(session="capped") if r.kind == "delivery"
    ]
    refused = [d for o, d in outcomes if o == "failed"]
    assert len(refused) == 1 and "CorrectionCapReached" in refused[0] and "max_corrections_per_step" in refused[0]
    journal.close()


async def test_step_limit_counts_watcher_steps() -> None:
    judge = _judge(*(Interjection(f"retry {i}") for i in range(10)))
    with StubAnthropicServer(*[Reply.tool_use("lookup", {"name": f"u{i}"}) for i in range(5)]) as stub:
        result = await start(
            stub, "go", tools=[tool(lambda name: name, name="lookup")], watchers=[(_spec("strict"), judge)], max_steps=3
        )
    assert result.status == "max_steps" and result.steps == 3 and result.corrective_steps == 2


async def test_an_abort_interjection_stops_the_run(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite3")
    judge = _judge(Interjection("This deletes production data.", action="abort", severity="critical"))
    with StubAnthropicServer(Reply.tool_use("lookup", {"name": "prod"}), Reply.text("never sent")) as stub:
        run = start(
            stub,
            "go",
            tools=[tool(lambda name: name, name="lookup")],
            watchers=[(_spec("guard"), judge)],
            journal=journal,
            name="stopped",
        )
        result = await run
    assert result.status == "aborted" and "This deletes production data." in result.detail and len(stub.requests) == 1
    assert_valid_history(list(result.messages))
    assert [r.payload["status"] for r in journal.read(session="stopped") if r.kind == "session"] == [
        "started",
        "aborted",
    ]
    journal.close()


async def test_pause_from_a_person_skips_the_remaining_tools() -> None:
    holder = {}
    ran: list[int] = []

    def step(n: int) -> str:
        """One step."""
        ran.append(n)
        holder["run"].pause("let me look first")
        return "ok"

    with StubAnthropicServer(
        Reply.tool_uses([("step", {"n": 1}), ("step", {"n": 2})]), Reply.text("never sent")
    ) as stub:
        run = holder["run"] = start(stub, "go", tools=[step])
        result = await run
    assert result.status == "paused" and ran == [1] and len(stub.requests) == 1
    last = result.messages[-1]["content"]
    assert last[1]["is_error"] is True and "not run: the run was paused" in last[1]["content"]
    assert_valid_history(list(result.messages))


async def test_an_interjection_after_the_run_ended_is_journaled_undeliverable(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    journal = Journal(tmp_path / "journal.sqlite3")
    runtime = Runtime(journal=journal)
    with StubAnthropicServer(Reply.text("hello", delay_s=0.1)) as stub:
        run = start(stub, "hi", runtime=runtime, name="short")
        await stub.wait_for_requests_async(1)
        late = runtime.attach(_spec("late"), CallableEvaluator(lambda request: None), run)
        result = await run
    assert result.status == "completed" and run.ended
    with pytest.raises(SessionEndedError, match="has ended"):
        run.guide("too late")
    with caplog.at_level(logging.WARNING, logger="watcher.engine"):
        delivered = await late.deliver(Interjection("too late", watcher="late", id="late-1"))
    assert delivered == "undeliverable" and "undeliverable" in caplog.text
    await runtime.close()
    outcome = [r.payload for r in journal.read(session="short") if r.kind == "delivery"]
    assert outcome == [
        {
            "interjection_id": "late-1",
            "outcome": "undeliverable",
            "detail": "session 'short' has ended; interjection 'late-1' was not delivered",
            "content": "too late",
            "origin": "watcher:late",
        }
    ]
    journal.close()


async def test_an_interjection_no_request_carried_is_journaled_queued_then_undeliverable(tmp_path: Path) -> None:
    """The run stops at max_steps right after a watcher spoke: never "delivered", since no request carried it."""
    files = Files()
    journal = Journal(tmp_path / "journal.sqlite3")
    with StubAnthropicServer(*_login_script()) as stub:
        run = start(
            stub,
            tools=[tool(files.write, name="Write")],
            watchers=["security"],
            journal=journal,
            name="capped",
            max_steps=1,
        )
        result = await run
    assert result.status == "max_steps" and len(stub.requests) == 1
    fates = [
        (r.payload["outcome"], r.payload["origin"]) for r in journal.read(session="capped") if r.kind == "delivery"
    ]
    assert fates == [("queued", "watcher:security"), ("undeliverable", "watcher:security")]
    journal.close()


async def test_a_persons_guidance_is_journaled_with_its_origin(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite3")
    holder: dict[str, AgentRun] = {}

    def ask() -> str:
        """Ask the supervisor for guidance."""
        holder["run"].guide("ask about their day")
        return "asked"

    with StubAnthropicServer(Reply.tool_use("ask", {}), Reply.text("How was your day?")) as stub:
        run = holder["run"] = start(stub, "hi", tools=[tool(ask)], journal=journal, name="guided")
        await run
    [guidance] = injected_texts(stub.requests[1])
    assert guidance == "Supervisor:Guidance: ask about their day"
    [row] = [r for r in journal.read(session="guided") if r.kind == "delivery"]
    assert (row.payload["outcome"], row.payload["origin"]) == ("delivered", "person:python")
    journal.close()
