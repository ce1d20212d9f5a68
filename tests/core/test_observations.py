"""Observations: JSONL round trip, unknown fields kept, bad records rejected with a clear error."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from watcher.agents import read_transcript
from watcher.core.errors import TranscriptError
from watcher.core.observations import (
    KINDS,
    CellError,
    CellExecuted,
    Observation,
    ToolCall,
    ToolResult,
    observation_from_dict,
)

RECORDS = [
    {"kind": "user_message", "text": "hi", "ts": 1.5, "session": "s1"},
    {"kind": "assistant_message", "text": "I'll do it"},
    {"kind": "tool_call", "id": "t1", "name": "Write", "input": {"file_path": "a.py", "content": "x = 1\n"}},
    {"kind": "tool_result", "tool_call_id": "t1", "output": "ok", "is_error": False, "exit_code": 0},
    {
        "kind": "cell_executed",
        "source": "1/0",
        "cell_id": "c1",
        "execution_count": 3,
        "stdout": "",
        "error": {"ename": "ZeroDivisionError", "evalue": "division by zero", "lineno": 1},
        "duration_s": 0.01,
    },
    {"kind": "condensation"},
    {"kind": "error", "text": "timeout after 60s"},
    {"kind": "done", "ts": 9.0},
    {"kind": "tool_call", "id": "t0", "name": "Read", "input": {}, "session": "s1/subagent-1", "parent_session": "s1"},
]


@pytest.mark.parametrize("record", RECORDS, ids=[r["kind"] for r in RECORDS])
def test_round_trip(record: dict[str, object]) -> None:
    obs = observation_from_dict(record)
    again = observation_from_dict(json.loads(obs.to_json()))
    assert again == obs
    for key, value in record.items():
        assert obs.to_dict()[key] == value


def test_a_top_level_session_writes_no_parent() -> None:
    assert "parent_session" not in observation_from_dict({"kind": "done", "session": "s1"}).to_dict()
    with pytest.raises(TranscriptError, match="field 'parent_session' of a 'done' record must be a string"):
        observation_from_dict({"kind": "done", "parent_session": 3})


def test_unknown_fields_are_preserved() -> None:
    record = {"kind": "tool_call", "id": "t", "name": "Bash", "input": {}, "x_agent": "claude", "cost": {"usd": 0.1}}
    obs = observation_from_dict(record)
    assert obs.extra == {"x_agent": "claude", "cost": {"usd": 0.1}}
    assert obs.to_dict() == record


def test_every_kind_of_the_transcript_format_exists() -> None:
    assert set(KINDS) == {
        "user_message",
        "assistant_message",
        "tool_call",
        "tool_result",
        "cell_executed",
        "condensation",
        "error",
        "done",
    }


def test_typed_fields() -> None:
    obs = observation_from_dict(RECORDS[4])
    assert isinstance(obs, CellExecuted) and obs.error == CellError("ZeroDivisionError", "division by zero", 1)
    assert isinstance(observation_from_dict(RECORDS[3]), ToolResult)
    assert isinstance(observation_from_dict(RECORDS[2]), ToolCall)


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"kind": "telepathy"}, "unknown kind 'telepathy'"),
        ({"text": "no kind"}, "unknown kind None"),
        ({"kind": "user_message"}, "needs the field 'text'"),
        ({"kind": "tool_result", "output": 3}, "'output' of a 'tool_result' record must be a string"),
        ({"kind": "tool_result", "output": "x", "is_error": "yes"}, "must be true or false"),
        ({"kind": "cell_executed", "source": "x", "error": "boom"}, "must be an object with 'ename'"),
    ],
)
def test_bad_records_are_explained(record: dict[str, object], message: str) -> None:
    with pytest.raises(TranscriptError, match=message.replace("(", r"\(").replace(")", r"\)")):
        observation_from_dict(record)


def _read_lines(lines: list[str], *, strict: bool = False) -> list[Observation]:
    """Read ``lines`` as a transcript file, through the one JSONL reader users call."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.jsonl"
        path.write_text("\n".join(lines), encoding="utf-8")
        return read_transcript(path, strict=strict)


def test_bad_line_names_source_and_line() -> None:
    lines = [json.dumps(RECORDS[0]), "", "{not json"]
    with pytest.raises(TranscriptError, match=r"t\.jsonl:3: not valid JSON"):
        _read_lines(lines, strict=True)  # lenient reading skips the line and counts it


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=40),
            st.builds(
                json.dumps,
                st.dictionaries(
                    st.sampled_from(["kind", "text", "output", "input", "error", "name", "ts"]),
                    st.one_of(
                        st.text(max_size=8), st.integers(), st.none(), st.booleans(), st.sampled_from(list(KINDS))
                    ),
                    max_size=5,
                ),
            ),
        ),
        max_size=6,
    )
)
def test_reader_only_raises_transcript_errors(lines: list[str]) -> None:
    failure: TranscriptError | None = None
    try:
        kinds = [obs.kind for obs in _read_lines(lines)]
    except TranscriptError as exc:
        failure = exc
    if failure is None:
        assert set(kinds) <= set(KINDS)
    else:
        message = str(failure)
        assert (
            (failure.line is not None and failure.line >= 1)
            or "holds no observations" in message
            or ("no reader recognises it" in message)
            or ("and watcher reads UTF-8" in message)  # a NUL right after a bracket: UTF-16 or UTF-32 text
            or ("not valid JSON" in message)
        )
