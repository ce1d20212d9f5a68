"""The journal: WAL SQLite shared between processes, redaction, commands, history."""

from __future__ import annotations

import json
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


def test_second_process_follows_live_and_misses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
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


def test_secrets_are_redacted_before_writing(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    key = "sk-ant-api03-" + "Z" * 40
    with Journal(path) as journal:
        journal.append(ObservationEvent(session="s", observation=UserMessage(text=f"my key is {key}"), index=0))
        journal.submit_command("s", "inject", "x", payload={"content": f"use {key}"})
        journal.flush()
    raw = path.read_bytes() + (
        path.with_name(path.name + "-wal").read_bytes() if path.with_name(path.name + "-wal").exists() else b""
    )
    assert key.encode() not in raw
    with Journal(path) as journal:
        (row,) = journal.read()
        assert "sk-ant-…[REDACTED]" in row.payload["observation"]["text"]


def test_corrupt_rows_are_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import sqlite3

    path = tmp_path / "j.sqlite3"
    with Journal(path) as journal:
        journal.append(ObservationEvent(session="s", observation=UserMessage(text="ok"), index=0))
        journal.flush()
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO events(ts, session, watcher, kind, payload) VALUES (0, 's', '', 'observation', '{broken')"
    )
    conn.commit()
    conn.close()
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


async def test_history_dataframe(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
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


async def test_history_outcomes_follow_each_interjection(tmp_path: Path) -> None:
    from watcher.core.interjection import Interjection
    from watcher.core.observations import ToolResult
    from watcher.core.spec import Caps, Triggers, WatcherSpec
    from watcher.evaluators import CallableEvaluator

    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    spec = WatcherSpec(
        name="w", role="t", triggers=Triggers(on=frozenset({"tool_result"})), caps=Caps(max_interjections_per_turn=1)
    )
    observations = [ToolResult(tool_call_id=str(i), output="x") for i in range(2)]
    await replay(observations, [(spec, CallableEvaluator(lambda r: Interjection(content="again")))], journal=journal)
    journal.close()
    assert watcher.history(path)["outcome"].to_list() == ["delivered", "capped"]
