"""A session whose name holds a key is journaled under its redacted name, and everything that
reads sessions back still finds it: its events by name, and the commands an editor sends it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from watcher.core.interjection import Interjection
from watcher.core.observations import ToolCall, ToolResult, UserMessage
from watcher.core.redact import redact
from watcher.core.spec import WatcherSpec
from watcher.evaluators import CallableEvaluator
from watcher.runtime import Journal, RecordingSession, Runtime
from watcher.runtime.events import SessionEvent
from watcher.runtime.journal import stored_session as journal_session

KEY = "sk-ant-api03-Qx7vT2mKp9LwZr4nBc8dFh1jYs6uEe3oGi5aNt0lXq"
NAME = f"sess-{KEY}"
STORED = "sess-sk-ant-…[REDACTED]~3090397a"  # the key masked, a digest of the whole name after it
SPEC = WatcherSpec(name="w", role="test", mode="manual")
TURN = [
    UserMessage(text="go"),
    ToolCall(id="t", name="Bash", input={"command": "ls"}),
    ToolResult(tool_call_id="t", output="a b"),
    ToolResult(tool_call_id="t2", output="c"),
]


def _columns(path: Path) -> list[tuple[str, str]]:
    """Every session and detail column the journal file holds, read with sqlite3 itself."""
    with sqlite3.connect(path) as db:
        events = db.execute("SELECT session, payload FROM events").fetchall()
        commands = db.execute("SELECT session, detail FROM commands").fetchall()
    return [(str(a), str(b)) for a, b in events + commands]


async def test_a_secret_session_name_is_stored_redacted_and_still_answers_its_commands(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    runtime = Runtime(journal=journal)
    session = RecordingSession(NAME)
    watcher = runtime.attach(SPEC, CallableEvaluator(lambda r: Interjection(content="proposal")), session)
    for obs in TURN:
        runtime.observe(NAME, obs)
        await runtime.settle()
    journal.flush()

    rows = journal.read()
    assert rows and {row.session for row in rows} == {STORED}  # one session, one name
    assert redact(STORED) == STORED  # a name read back is stored as it is: no second name for one session
    assert [r.id for r in journal.read(session=NAME)] == [r.id for r in rows]  # asked by its own name
    assert journal.tail(NAME, kinds=("observation",), limit=10)

    first, second, *_ = list(watcher.pending)
    # an editor answers with the name it read from the journal; the process itself uses the real one
    inject = journal.submit_command(rows[0].session, "inject", first, payload={"content": "edited"})
    dismiss = journal.submit_command(NAME, "dismiss", second)
    bogus = journal.submit_command(NAME, "inject", "unknown-id")  # its failure names the session
    assert await runtime.apply_commands() == 3
    await runtime.settle()
    assert [i.content for i in session.delivered] == ["edited"]
    status = {c.id: (c.session, c.status) for c in journal.commands(status=None)}
    assert status[inject] == (STORED, "applied") and status[dismiss] == (STORED, "applied")
    assert status[bogus] == (STORED, "failed")
    (claimed,) = [c for c in journal.commands(sessions=[NAME], status=None) if c.id == bogus]
    assert claimed.session == NAME  # read for a session, a command names it as the caller does
    await runtime.close()
    journal.close()

    stored = _columns(path)
    assert stored and not [row for row in stored if KEY[10:30] in "".join(row)]


def test_two_processes_claim_a_secret_session_s_commands_by_its_real_name(tmp_path: Path) -> None:
    one, two = Journal(tmp_path / "j.sqlite3"), Journal(tmp_path / "j.sqlite3")
    other = "fleet:task-1"
    ids = [one.submit_command(NAME, "nudge", payload={"message": "go"}), one.submit_command(other, "pause")]
    claimed = two.claim_commands([NAME, other])
    assert [(c.id, c.session) for c in claimed] == list(zip(ids, [NAME, other], strict=True))
    assert one.claim_commands([NAME]) == []  # taken once
    assert two.release_claims(-1.0, [NAME]) == 1  # released by the real name too
    assert not [row for row in _columns(tmp_path / "j.sqlite3") if KEY[10:30] in "".join(row)]
    (again,) = one.claim_commands([NAME])
    assert (again.id, again.session, again.payload) == (ids[0], NAME, {"message": "go"})
    one.close()
    two.close()


def test_two_sessions_whose_names_differ_only_in_a_key_stay_two(tmp_path: Path) -> None:
    other = NAME.replace("Qx7v", "Zz9w")
    with Journal(tmp_path / "j.sqlite3") as journal:
        journal.append(SessionEvent(session=NAME, status="started"))
        journal.append(SessionEvent(session=other, status="started"))
        journal.flush()
        stored = {row.session for row in journal.read()}
        assert len(stored) == 2 and all(name.startswith("sess-sk-ant-…[REDACTED]~") for name in stored)
        assert [r.session for r in journal.read(session=other)] == [journal_session(other)]
        assert not any(KEY[10:30] in name or other[15:35] in name for name in stored)
