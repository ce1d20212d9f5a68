"""Replay per session, and the end of a transcript as a breakpoint, with the real roles."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from watcher.agents.replay import replay, replay_sessions
from watcher.evaluators.registry import make_evaluator
from watcher.roles import spec_for_role
from watcher.runtime import Journal
from watcher.transcripts import read_file, read_transcript

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"
SAMPLES = ROOT / "tests" / "transcripts" / "data"


def watchers(*roles: str) -> list[tuple[object, object]]:
    return [(spec_for_role(role), make_evaluator("rules", role)) for role in roles]


@pytest.mark.parametrize(
    ("name", "why"),
    [("claude_code_ends_in_a_monologue.jsonl", "same message 3 times"), ("claude_code_ends_in_condensations.jsonl", "condensed 10 times")],
)  # fmt: skip
def test_a_loop_in_the_last_records_is_judged_at_the_end(name: str, why: str) -> None:
    observations = read_transcript(DATA / name)
    result = asyncio.run(replay(observations, watchers("stuck")))  # type: ignore[arg-type]
    last = result.evaluations[-1]
    assert last.breakpoint == "session_end"  # no natural breakpoint follows the loop: only the end judges it
    assert last.decision == "interject" and last.interjection is not None
    assert last.interjection.action == "pause" and why in last.interjection.content
    assert not any(e.decision == "interject" for e in result.evaluations[:-1])


def test_nothing_left_to_judge_means_no_extra_evaluation() -> None:
    observations = read_transcript(ROOT / "example_notebooks" / "data" / "notebook_error_loop.jsonl")
    result = asyncio.run(replay(observations, watchers("errors")))  # type: ignore[arg-type]
    assert all(e.breakpoint != "session_end" for e in result.evaluations)  # it ends on a breakpoint


def test_each_session_has_its_own_watchers(tmp_path: Path) -> None:
    transcript = read_file(DATA / "two_sessions_same_error_twice.jsonl")
    sessions = transcript.sessions()
    assert list(sessions) == ["run-a", "run-b"]
    journal = Journal(tmp_path / "j.sqlite3")
    try:
        results = asyncio.run(replay_sessions(sessions, lambda _s: watchers("errors"), journal=journal))  # type: ignore[arg-type,return-value]
    finally:
        journal.close()
    assert [r.session for r in results] == ["run-a", "run-b"]
    # two failures each: one watcher over both would have seen the same error 4 times and nudged
    assert not any(e.decision == "interject" for r in results for e in r.evaluations)
    merged = asyncio.run(replay(transcript.observations, watchers("errors")))  # type: ignore[arg-type]
    assert any(e.decision == "interject" for e in merged.evaluations)
    with Journal(tmp_path / "j.sqlite3") as journal:
        rows = journal.read(limit=10_000)
    assert {row.session for row in rows if row.kind == "observation"} == {"run-a", "run-b"}


def test_replay_output_groups_by_session_and_names_subagents() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "watcher", "replay", str(SAMPLES / "claude_code_stream_two_runs.jsonl")],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "as claude-code: 10 records, 9 observations, 3 sessions" in out
    first = out.index("replayed 4 observations of '11111111-aaaa-4bbb-8ccc-000000000001'")
    second = out.index("replayed 3 observations of '22222222-aaaa-4bbb-8ccc-000000000002'")
    sub = out.index(
        "replayed 2 observations of the subagent '22222222-aaaa-4bbb-8ccc-000000000002/subagent-toolu_02Task' "
        "of '22222222-aaaa-4bbb-8ccc-000000000002'"
    )
    assert first < second < sub
    as_json = subprocess.run(
        [sys.executable, "-m", "watcher", "replay", str(SAMPLES / "claude_code_stream_two_runs.jsonl"), "--json"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    rows = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert rows and all(set(row) == {"session", "watcher", "index", "decision", "urgent", "severity", "action", "content", "locations", "note", "error"} for row in rows)  # fmt: skip
    assert len({row["session"] for row in rows}) == 3  # each row names its session (a subagent's too)
    assert as_json.stderr == ""  # nothing skipped, nothing said


def test_an_interjection_about_a_subagent_says_so() -> None:
    transcript = read_file(DATA / "claude_code_subagent_monologue.jsonl")
    sessions = transcript.sessions()
    main, sub = list(sessions)
    assert sub == f"{main}/subagent-1" and sessions[sub][0] == main
    results = asyncio.run(replay_sessions(sessions, lambda _s: watchers("stuck")))  # type: ignore[arg-type,return-value]
    assert not any(e.decision == "interject" for e in results[0].evaluations)  # the main agent is fine
    paused = [e for e in results[1].evaluations if e.interjection is not None]
    assert len(paused) == 1 and paused[0].interjection is not None
    assert paused[0].interjection.action == "pause"
    assert paused[0].interjection.content.startswith(f"In the subagent 'subagent-1' of session {main[:8]}…: ")
