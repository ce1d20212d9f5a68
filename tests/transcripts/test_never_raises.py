"""Property: no reader raises on any JSON record, however strange; lenient readers skip or count.

Records are drawn both as arbitrary JSON and as near misses: objects whose ``type``/``kind``
is one each format knows, with arbitrary values in the fields its reader looks at.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from watcher.core.errors import TranscriptError
from watcher.transcripts import FORMATS, reader_for
from watcher.transcripts._registry import detect_document, detect_records

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=20,
)
TYPES = [
    "user", "assistant", "system", "result", "summary", "progress", "session_meta", "response_item", "event_msg",
    "compacted", "thread.started", "item.started", "item.completed", "turn.failed", "init", "message", "tool_use",
    "tool_result", "error", "gemini", "session", "compaction", "USER_INPUT", "PLANNER_RESPONSE", "CODE_ACTION",
    "agent.tool_use", "agent.tool_result", "session.error", "user_message", "tool_call", "done",
]  # fmt: skip
KEYS = [
    "message", "content", "payload", "item", "history", "trajectory", "messages", "info", "tool_calls", "toolCalls",
    "isSidechain", "parentUuid", "parent_tool_use_id", "session_id", "sessionId", "toolUseResult", "args", "extras",
    "cause", "action", "observation", "raw", "role", "delta", "status", "output", "arguments", "thoughts", "task",
    "step_index", "isCompactSummary", "subtype", "is_error", "extra", "instance_id", "text", "input", "name",
]  # fmt: skip
NEAR_MISS = st.builds(
    lambda kind, role, fields: {"type": kind, "kind": kind, "role": role, **fields},
    st.sampled_from(TYPES),
    st.sampled_from(["user", "assistant", "tool", "exit", "toolResult", "system", "gemini"]),
    st.dictionaries(st.sampled_from(KEYS), JSON, max_size=6),
)
RECORDS = st.lists(JSON | NEAR_MISS, max_size=8)


@settings(max_examples=300, deadline=None)
@given(records=RECORDS, index=st.integers(min_value=0, max_value=len(FORMATS) - 1))
def test_lenient_readers_never_raise(records: list[Any], index: int) -> None:
    reader = reader_for(FORMATS[index].name)
    observations = []
    for record in records:
        observations.extend(reader.feed(record))
    observations.extend(reader.end())
    assert reader.records == len(records)
    for obs in observations:
        # every observation names its session (watcher's own records are kept exactly as written)
        assert obs.session or FORMATS[index].name == "watcher"
        obs.to_json()  # and can be written as a transcript line


@settings(max_examples=200, deadline=None)
@given(records=RECORDS, index=st.integers(min_value=0, max_value=len(FORMATS) - 1))
def test_strict_readers_raise_only_transcript_errors(records: list[Any], index: int) -> None:
    reader = reader_for(FORMATS[index].name, strict=True)
    error: TranscriptError | None = None
    try:
        for record in records:
            reader.feed(record)
        reader.end()
    except TranscriptError as exc:  # anything else fails the test
        error = exc
    assert error is None or "record" in str(error) or "reader" in str(error)  # it says what was wrong


# a record whose type or kind is any JSON value: a list or an object is unhashable
ODD_TYPES = st.builds(
    lambda kind, fields: {**fields, **kind},
    st.dictionaries(st.sampled_from(["type", "kind"]), JSON, min_size=1),
    st.dictionaries(st.sampled_from(KEYS), JSON, max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(records=st.lists(ODD_TYPES | NEAR_MISS | JSON, min_size=1, max_size=4))
@example(records=[{"type": ["x"]}]).via("the fault probe")
@example(records=[{"type": {}}]).via("the fault probe")
@example(records=[{"kind": ["x"]}]).via("the fault probe")
@example(records=[{"kind": {"a": 1}, "raw": {"type": ["x"]}}]).via("the fault probe")
def test_recognising_a_format_raises_only_transcript_errors(records: list[Any]) -> None:
    for fmt in FORMATS:
        for record in records:
            if fmt.sniff is not None and isinstance(record, dict):
                assert fmt.sniff(record) in (True, False)
            if fmt.sniff_document is not None:
                assert fmt.sniff_document(record) in (True, False)
    detect_document(records)
    error: TranscriptError | None = None
    try:
        detect_records(records, source="t.jsonl")
    except TranscriptError as exc:  # anything else fails the test
        error = exc
    assert error is None or "no reader recognises it" in str(error)
