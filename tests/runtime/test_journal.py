"""The journal on both stores (a SQLite file, a PostgreSQL database): processes, redaction, commands, history."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import polars as pl
import pytest

import watcher
from watcher.agents import read_transcript, replay
from watcher.core.errors import JournalError
from watcher.core.observations import UserMessage
from watcher.evaluators import make_evaluator
from watcher.roles import spec_for_role
from watcher.runtime import Journal
from watcher.runtime.events import ObservationEvent
from watcher.runtime.journal import default_journal_path

ROOT = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent(
    """
    import sys
    from watcher.core.observations import UserMessage
    from watcher.runtime import Journal
    from watcher.runtime.events import ObservationEvent
    journal = Journal(sys.argv[1])
    for i in range(int(sys.argv[2])):
        journal.append(ObservationEvent(session="other-process", observation=UserMessage(text=f"m{i}"), index=i))
        if i % 97 == 0:
            journal.flush()
    journal.close()
    """
)


def test_second_process_follows_live_and_misses_nothing(journal_at: Path | str) -> None:
    path = journal_at
    reader = Journal(path)
    count = 2000
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(count)])
    seen: list[int] = []
    ids: list[int] = []
    deadline = time.monotonic() + 60
    try:
        while len(seen) < count and time.monotonic() < deadline:  # as the language server follows: by id
            rows = reader.read(ids[-1] if ids else 0)
            for row in rows:
                assert row.kind == "observation" and row.session == "other-process"
                seen.append(row.payload["index"])
                ids.append(row.id)
            if not rows:
                time.sleep(0.01)
    finally:
        assert writer.wait(timeout=60) == 0
    assert seen == list(range(count)), "every event, in order, none lost"
    assert ids == sorted(ids)
    reader.close()


def _raw_rows(path: Path | str) -> bytes:
    """Every stored byte of the journal: the file and its WAL, or every row the server holds."""
    if isinstance(path, Path):
        wal = path.with_name(path.name + "-wal")
        return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    import psycopg

    with psycopg.connect(path) as conn:
        rows = conn.execute("SELECT payload FROM events UNION ALL SELECT payload FROM commands").fetchall()
    return "".join(r[0] for r in rows).encode()


def _insert_raw(path: Path | str, payload: str) -> None:
    """A row written behind the journal's back (as a damaged or foreign writer would)."""
    sql = "INSERT INTO events(ts, session, watcher, kind, payload) VALUES (0, 's', '', 'observation', '{}')"
    if isinstance(path, Path):
        conn = sqlite3.connect(path)
        conn.execute(sql.format(payload))
        conn.commit()
        conn.close()
        return
    import psycopg

    with psycopg.connect(path) as pg:
        pg.execute(sql.format(payload))


def test_secrets_are_redacted_before_writing(journal_at: Path | str) -> None:
    path = journal_at
    key = "sk-ant-api03-" + "Z" * 40
    with Journal(path) as journal:
        journal.append(ObservationEvent(session="s", observation=UserMessage(text=f"my key is {key}"), index=0))
        journal.submit_command("s", "inject", "x", payload={"content": f"use {key}"})
        journal.flush()
    raw = _raw_rows(path)
    assert b"my key is" in raw and b"use " in raw
    assert key.encode() not in raw
    with Journal(path) as journal:
        (row,) = journal.read()
        assert "sk-ant-…[REDACTED]" in row.payload["observation"]["text"]


def test_corrupt_rows_are_skipped(journal_at: Path | str, caplog: pytest.LogCaptureFixture) -> None:
    path = journal_at
    with Journal(path) as journal:
        journal.append(ObservationEvent(session="s", observation=UserMessage(text="ok"), index=0))
        journal.flush()
    _insert_raw(path, "{{broken")
    with Journal(path) as journal:
        journal.append(ObservationEvent(session="s", observation=UserMessage(text="after"), index=1))
        journal.flush()
        assert [r.payload["observation"]["text"] for r in journal.read()] == ["ok", "after"]
    assert "skipping corrupt journal row" in caplog.text


def test_not_a_journal_is_a_clear_error(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.txt"
    bogus.write_text("hello, not sqlite " * 100)
    with pytest.raises(JournalError, match=r"notes\.txt"):
        Journal(bogus)


def test_location_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WATCHER_JOURNAL", raising=False)
    project = tmp_path / "proj"
    (project / "src" / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    assert default_journal_path(project / "src" / "pkg") == project.resolve() / ".watcher" / "journal.sqlite3"
    monkeypatch.setenv("WATCHER_JOURNAL", str(tmp_path / "elsewhere.db"))
    assert default_journal_path(project) == tmp_path / "elsewhere.db"


async def test_history_dataframe(journal_at: Path | str) -> None:
    path = journal_at
    journal = Journal(path)
    observations = read_transcript(ROOT / "example_notebooks" / "data" / "notebook_error_loop.jsonl")
    await replay(
        observations, [(spec_for_role("errors"), make_evaluator("rules", "errors"))], session="nb", journal=journal
    )
    journal.close()
    frame = watcher.history(path)
    assert isinstance(frame, pl.DataFrame)
    assert frame.columns[:9] == [
        "time",
        "watcher",
        "session",
        "index",
        "decision",
        "urgent",
        "severity",
        "action",
        "content",
    ]
    interjections = frame.filter(pl.col("decision") == "interject")
    assert interjections.height == 1
    row = interjections.row(0, named=True)
    assert (
        row["watcher"] == "errors"
        and row["session"] == "nb"
        and row["action"] == "nudge"
        and row["outcome"] == "delivered"
    )
    assert "KeyError" in row["content"]
    assert frame.schema["time"] == pl.Datetime("ms", "UTC")
    assert watcher.history(path, watcher="nobody").height == 0
    exported = json.loads(json.dumps(frame.to_dicts(), default=str))  # the frame exports as plain JSON
    assert len(exported) == frame.height and [r["outcome"] for r in exported] == frame["outcome"].to_list()


async def test_history_outcomes_follow_each_interjection(journal_at: Path | str) -> None:
    from watcher.core.interjection import Interjection
    from watcher.core.observations import ToolResult
    from watcher.core.spec import Caps, Triggers, WatcherSpec
    from watcher.evaluators import CallableEvaluator

    path = journal_at
    journal = Journal(path)
    spec = WatcherSpec(
        name="w", role="t", triggers=Triggers(on=frozenset({"tool_result"})), caps=Caps(max_interjections_per_turn=1)
    )
    observations = [ToolResult(tool_call_id=str(i), output="x") for i in range(2)]
    await replay(observations, [(spec, CallableEvaluator(lambda r: Interjection(content="again")))], journal=journal)
    journal.close()
    assert watcher.history(path)["outcome"].to_list() == ["delivered", "capped"]


def test_commands_claims_and_leases(journal_at: Path | str) -> None:
    with Journal(journal_at) as journal:
        first = journal.submit_command("a", "nudge", payload={"text": "go"})
        second = journal.submit_command("b", "pause")
        assert [c.id for c in journal.commands()] == [first, second]
        assert [c.kind for c in journal.commands(sessions=["b"])] == ["pause"]
        assert [c.id for c in journal.claim_commands(["a"])] == [first], "a claims its own commands"
        assert journal.claim_commands(["a", "b"]) and not journal.claim_commands(["a", "b"]), "each is claimed once"
        assert journal.release_claims(60, ["a"]) == 0, "a fresh claim is not released"
        time.sleep(0.05)
        assert journal.release_claims(0.01, ["a"]) == 1, "a claim older than its lease goes back to new"
        (again,) = journal.claim_commands(["a"])
        assert (again.id, again.status, again.payload) == (first, "claimed", {"text": "go"})
        journal.mark_commands([(first, "applied", "done"), (second, "failed", "no such task")])
        assert [(c.id, c.status, c.detail) for c in journal.commands(status=None)] == [
            (first, "applied", "done"),
            (second, "failed", "no such task"),
        ]
        batch = [journal.submit_command(f"c{i % 3}", "nudge") for i in range(7)]
        assert [c.id for c in journal.claim_commands(["c0", "c2"], limit=3)] == [batch[0], batch[2], batch[3]]
        assert [c.id for c in journal.claim_commands(["c0", "c2"])] == [batch[5], batch[6]], "the rest, oldest first"


SUBMITTER = "import sys; from watcher.runtime import Journal; Journal(sys.argv[1]).submit_command('a', 'dismiss', 'i1')"


def test_new_commands_are_read_at_once_from_a_file_and_on_a_thread_from_a_server(journal_at: Path | str) -> None:
    with Journal(journal_at) as journal:
        assert journal.new_commands_now(["a"]) == ([] if isinstance(journal_at, Path) else None)
        subprocess.run([sys.executable, "-c", SUBMITTER, str(journal_at)], check=True, timeout=60)
        now = journal.new_commands_now(["a", "b"])
        if isinstance(journal_at, Path):  # a file: read by the caller, the same rows as a read that may wait
            assert now is not None and [(c.session, c.kind, c.interjection_id) for c in now] == [("a", "dismiss", "i1")]
            assert now == journal.commands(sessions=["a", "b"])
            assert journal.new_commands_now(["b"]) == []
        else:  # a server is a network round trip away: never read on the caller's thread
            assert now is None


def test_positions_latest_tail_and_prune(journal_at: Path | str) -> None:
    with Journal(journal_at) as journal:
        assert journal.last_id() == 0
        for i in range(6):
            journal.append(ObservationEvent(session=f"s{i % 2}", observation=UserMessage(text=f"m{i}"), index=i, ts=i))
        journal.flush()
        rows = journal.read()
        assert [r.payload["index"] for r in rows] == list(range(6))
        assert [r.id for r in rows] == sorted(r.id for r in rows) and journal.last_id() == rows[-1].id
        assert [r.payload["index"] for r in journal.read(rows[2].id)] == [3, 4, 5]
        newest = {session: payload["index"] for _, session, payload in journal.latest("observation")}
        assert newest == {"s0": 4, "s1": 5}
        upto = {session: payload["index"] for _, session, payload in journal.latest("observation", upto=rows[2].id)}
        assert upto == {"s0": 2, "s1": 1}
        assert [r.payload["index"] for r in journal.tail("s1", kinds=["observation"], limit=2)] == [3, 5]
        assert journal.prune(3.0) == (3, 0)
        assert [r.payload["index"] for r in journal.read()] == [3, 4, 5]


def test_a_lease_is_held_by_one_holder_until_it_expires_or_is_dropped(journal_at: Path | str) -> None:
    with Journal(journal_at) as journal:
        assert journal.hold_lease("lead", "a", 0.3) and journal.hold_lease("lead", "a", 0.3), "taken, then renewed"
        assert not journal.hold_lease("lead", "b", 0.3), "not while a holds it"
        time.sleep(0.4)
        assert journal.hold_lease("lead", "b", 30), "expired: b takes it"
        journal.drop_lease("lead", "a")
        assert not journal.hold_lease("lead", "a", 30), "a cannot drop what b holds"
        journal.drop_lease("lead", "b")
        assert journal.hold_lease("lead", "a", 30), "dropped: free at once"


def test_a_journal_deleted_while_in_use_is_started_again_and_nothing_after_is_lost(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / ".watcher"
    journal = Journal(folder / "journal.sqlite3")
    try:
        journal.append(ObservationEvent(session="nb", observation=UserMessage(text="before"), index=0))
        journal.flush()
        for leftover in folder.iterdir():  # rm -rf .watcher, git clean -fdx: the file is gone under the writer
            leftover.unlink()
        folder.rmdir()
        journal.append(ObservationEvent(session="nb", observation=UserMessage(text="after"), index=1))
        journal.flush()
        texts = [row.payload["observation"]["text"] for row in journal.read(0)]
    finally:
        journal.close()
    assert texts == ["after"]  # what the deleted file held went with it; what came after is in the new one
    assert "was deleted or replaced while in use; a new one is started there" in caplog.text
    reread = Journal(folder / "journal.sqlite3", create=False)
    try:
        assert [row.payload["observation"]["text"] for row in reread.read(0)] == ["after"]
    finally:
        reread.close()
