"""Each format's reader on small samples shaped exactly like the real tools' output.

The samples (``data/``) were written for these tests; ``data/expected.json`` holds, per sample,
the detected format, the skipped record counts, each session (its parent and the kinds of its
observations in order) and field checks on single observations. The mis-mappings a naive
reader makes (a title read as a condensation, one compaction counted twice, a subagent merged
into its parent, runs merged into one session, an API-error message read as assistant text,
thinking dropped, event copies counted twice) are each pinned by one of them.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from watcher.core.errors import TranscriptError
from watcher.core.observations import Observation
from watcher.transcripts import FORMATS, read_file, reader_for

DATA = Path(__file__).parent / "data"
EXPECTED: dict[str, dict[str, Any]] = json.loads((DATA / "expected.json").read_text())


def field(obs: Observation, path: str) -> object:
    """``text``, ``input.command``, ``extra.permission_denials.0.tool_name``: one value of ``obs``."""
    head, *rest = path.split(".")
    value: Any = getattr(obs, head)
    for part in rest:
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_reads_as_expected(name: str) -> None:
    expected = EXPECTED[name]
    transcript = read_file(DATA / name)
    assert transcript.format == expected["format"]
    assert dict(transcript.skipped) == expected["skipped"]
    sessions = transcript.sessions()
    got = {s: {"parent": parent, "kinds": [o.kind for o in obs]} for s, (parent, obs) in sessions.items()}
    assert got == expected["sessions"]
    for session, index, path, value in expected["fields"]:
        assert field(sessions[session][1][index], path) == value, (session, index, path)


def test_every_format_has_a_sample() -> None:
    assert {e["format"] for e in EXPECTED.values()} == {f.name for f in FORMATS}


def test_a_claude_code_title_is_no_condensation_and_a_compaction_is_one() -> None:
    old = read_file(DATA / "claude_code_session_v1_subagent.jsonl")  # starts with a summary (title) record
    assert not any(o.kind == "condensation" for o in old.observations)
    assert old.ignored["summary (session title)"] == 1
    new = read_file(DATA / "claude_code_session_v2.jsonl")  # compact_boundary + isCompactSummary
    assert [o.kind for o in new.observations].count("condensation") == 1
    assert new.ignored["queue-operation"] == 1 and new.ignored["progress"] == 1
    assert new.ignored["file-history-snapshot"] == 1
    assert new.ignored["last-prompt"] == new.ignored["tools-used"] == new.ignored["cost-state"] == 1  # 2.1.3xx


def test_codex_event_copies_are_not_counted_twice() -> None:
    transcript = read_file(DATA / "codex_rollout.jsonl")
    texts = [getattr(o, "text", None) for o in transcript.observations]
    assert texts.count("run the migrations") == 1
    assert texts.count("The migration fails: the shop_order table is missing.") == 1
    assert [o.kind for o in transcript.observations].count("tool_result") == 2  # not 3 with exec_command_end
    assert transcript.ignored["event_msg/exec_command_end"] == 1
    assert transcript.ignored["response_item/message (user, harness context)"] == 1  # AGENTS.md is not the user
    assert transcript.ignored["world_state"] == transcript.ignored["token_usage_record"] == 1  # 0.16x bookkeeping


def test_a_gemini_recording_is_read_once_whatever_it_restates() -> None:
    transcript = read_file(DATA / "gemini_chat_v061.jsonl")
    # a message rewritten with its tool calls, the user-role tool responses, the history restated
    # on a resume: each part read once
    assert [o.kind for o in transcript.observations].count("tool_call") == 1
    assert transcript.ignored["user (tool responses)"] == 1 and transcript.ignored["$set"] == 7
    assert not any("session_context" in getattr(o, "text", "") for o in transcript.observations)


def test_a_reader_works_record_by_record_and_flushes_at_the_end() -> None:
    reader = reader_for("gemini-stream", session="live")
    lines = (DATA / "gemini_stream.jsonl").read_text().splitlines()
    got: list[Observation] = []
    for line in lines[:10]:  # up to the streamed text, before the result
        got.extend(reader.feed(json.loads(line)))
    assert [o.kind for o in got][-1] == "tool_result"  # the deltas are held until the message ends
    tail = reader.end()
    assert [(o.kind, getattr(o, "text", "")) for o in tail] == [
        ("assistant_message", "I have built the landing page in React and pushed it.")
    ]


def test_format_override_reads_an_ambiguous_file(tmp_path: Path) -> None:
    path = tmp_path / "steps.jsonl"
    path.write_text((DATA / "antigravity.jsonl").read_text())
    assert read_file(path, format="antigravity").format == "antigravity"
    with pytest.raises(Exception, match="unknown format 'nope'; known formats: watcher, claude-code"):
        read_file(path, format="nope")


@pytest.mark.parametrize(
    "bad",
    [
        "[" * 5000 + "]" * 5000,
        '{"kind": "done", "ts": 1' + "0" * 400 + "}",
        '{"kind": "done", "ts": NaN}',
        "{'kind': 1}",
    ],
    ids=["deep", "huge-number", "nan", "python-repr"],
)
def test_a_line_json_cannot_take_is_skipped_or_named(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"kind": "user_message", "text": "hi"}\n' + bad + '\n{"kind": "done"}\n')
    lenient = read_file(path)
    assert [o.kind for o in lenient.observations] == ["user_message", "done"]
    assert lenient.skipped == {"invalid JSON": 1} and lenient.records == 3
    with pytest.raises(TranscriptError, match=r"t\.jsonl:2: not valid JSON"):
        read_file(path, strict=True)


@pytest.mark.parametrize(
    ("encoding", "named"),
    [("utf-16", "UTF-16"), ("utf-16-le", "UTF-16LE"), ("utf-16-be", "UTF-16BE"), ("utf-32", "UTF-32")],
)
def test_a_utf16_or_utf32_transcript_is_named_with_the_conversion(tmp_path: Path, encoding: str, named: str) -> None:
    # what PowerShell's `>` or Notepad writes: read as UTF-8 it is no JSON at all
    path = tmp_path / "wide.jsonl"
    path.write_text((DATA / "claude_code_session_v2.jsonl").read_text(), encoding=encoding)
    with pytest.raises(TranscriptError, match=rf"is {named} text, and watcher reads UTF-8") as caught:
        read_file(path)
    assert f"iconv -f {named} -t UTF-8 {path}" in str(caught.value)
    path.write_text(path.read_text(encoding=encoding), encoding="utf-8")
    assert read_file(path).format == "claude-code"  # converted, it reads


@pytest.mark.parametrize("record", ['{"type": ["x"]}', '{"type": {}}', '{"kind": ["x"]}', '{"kind": {}, "type": [1]}'])
def test_a_type_or_kind_that_is_no_string_is_named_not_a_crash(tmp_path: Path, record: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(record + "\n")
    with pytest.raises(TranscriptError, match="no reader recognises it: found record type"):
        read_file(path)


def test_a_device_is_refused_at_once_and_a_pipe_is_read(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match="/dev/zero: is a device, not a file"):
        read_file("/dev/zero")  # read as a file, it would fill memory and never end
    fifo = tmp_path / "t.pipe"
    os.mkfifo(fifo)
    record = b'{"type":"user","message":{"role":"user","content":"hi"},"sessionId":"a","uuid":"u1"}\n'
    writer = threading.Thread(target=fifo.write_bytes, args=(record,))
    writer.start()
    try:
        assert read_file(fifo).format == "claude-code"
    finally:
        writer.join(timeout=10)
