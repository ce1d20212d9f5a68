"""The hook wire contract, from data files: every event's payload in, the answer the CLI reads out."""

from __future__ import annotations

from pathlib import Path

import pytest
from hook_vectors import DATA, SESSION_ID, load, matches, run_each_alone, run_with_desk, session_end_evaluations

import watcher
from watcher.hooks._serve_one import answer_once
from watcher.hooks._wire import EVENTS
from watcher.lsp_bridge.findings import FindingBook
from watcher.runtime.journal import Journal

VECTORS = sorted(DATA.glob("*.json"))


@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_a_warm_desk_answers_every_call_as_the_vector_says(path: Path, tmp_path: Path) -> None:
    pairs = run_with_desk(load(path), tmp_path)
    for i, (expected, actual) in enumerate(pairs):
        assert matches(expected, actual), f"call {i}: expected {expected}, got {actual}"


@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_each_call_judged_alone_gives_the_same_answers(path: Path, tmp_path: Path) -> None:
    # without a daemon every call is a new process: the session's history and pending
    # interjections are read back from the journal, so a loop is still seen as one
    pairs = run_each_alone(load(path), tmp_path, answer_once)
    for i, (expected, actual) in enumerate(pairs):
        assert matches(expected, actual), f"call {i}: expected {expected}, got {actual}"


ENDING = [p for p in VECTORS if "session_end" in load(p)]


@pytest.mark.parametrize("path", ENDING, ids=[p.stem for p in ENDING])
def test_the_end_of_a_hooked_session_judges_what_is_still_buffered(path: Path, tmp_path: Path) -> None:
    vector = load(path)
    for how, run in (("warm", run_with_desk), ("alone", lambda v, t: run_each_alone(v, t, answer_once))):
        tmp = tmp_path / how  # a daemon's desk, then every call a process of its own (history read back)
        tmp.mkdir()
        run(vector, tmp)
        judged = session_end_evaluations(tmp / "journal.sqlite3", vector.get("agent", "claude"))
        expected = vector["session_end"]
        assert len(judged) == len(expected), f"{how}: expected {expected}, got {judged}"
        for want, got in zip(expected, judged, strict=True):
            assert matches(want, got), f"{how}: expected {want}, got {got}"


def test_every_event_watcher_installs_has_a_vector() -> None:
    covered = {call["event"] for path in VECTORS for call in load(path)["calls"]}
    assert set(EVENTS) <= covered, f"no vector for {sorted(set(EVENTS) - covered)}"


def test_a_hooked_session_is_in_the_history_like_any_parent_session(tmp_path: Path) -> None:

    run_with_desk(load(DATA / "pretooluse_deny_rm_home.json"), tmp_path)
    frame = watcher.history(tmp_path / "journal.sqlite3", session=f"claude:{SESSION_ID}")
    denied = frame.filter(frame["urgent"])
    assert denied.height == 1
    assert denied["watcher"][0] == "security" and denied["outcome"][0] == "delivered"
    assert "Recursive delete" in denied["content"][0]


def test_a_denied_write_is_a_finding_the_editor_shows_on_the_file(tmp_path: Path) -> None:
    vector = load(DATA / "pretooluse_sql_in_auth.json")
    target = tmp_path / "app" / "auth.py"  # Claude Code sends absolute paths
    vector["calls"][0]["payload"]["tool_input"]["file_path"] = str(target)
    run_with_desk(vector, tmp_path)
    book = FindingBook(tmp_path / "journal.sqlite3", tmp_path)
    journal = Journal(tmp_path / "journal.sqlite3", create=False)
    try:
        book.apply_rows(journal.read(0), live_after=0)
    finally:
        journal.close()
    (finding,) = [f for f in book.findings.values() if f.shown]
    assert finding.session == f"claude:{SESSION_ID}" and finding.status == "delivered"
    (where,) = finding.interjection.locations
    assert (where.path, where.start_line) == (str(target), 5)
