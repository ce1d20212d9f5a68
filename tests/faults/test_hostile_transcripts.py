"""Fault class 3: hostile transcripts cannot crash, hang or bloat a run; every secret form is redacted."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from .conftest import no_traceback, watcher_cli, write_transcript

pytestmark = [pytest.mark.faults, pytest.mark.slow]


def _nest(depth: int) -> Any:
    return json.loads("[" * depth + "]" * depth)


def _rows(path: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT kind, payload FROM events WHERE kind = 'observation' ORDER BY id").fetchall()
    conn.close()
    return rows


HOSTILE: dict[str, str] = {
    "nested 300 deep": json.dumps({"kind": "tool_call", "id": "t", "name": "x", "input": {"a": _nest(300)}}),
    "lone surrogate": '{"kind": "user_message", "text": "before \\ud800 after"}',
    "NUL bytes": '{"kind": "tool_result", "tool_call_id": "t", "output": "a\\u0000b", "is_error": false}',
    "20 MB output": json.dumps({"kind": "tool_result", "tool_call_id": "t", "output": "y" * 20_000_000}),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_replay_journals_every_observation_and_says_what_it_changed(tmp_path: Path, case: str) -> None:
    transcript = write_transcript(
        tmp_path / "t.jsonl", [{"kind": "user_message", "text": "hi"}, HOSTILE[case], {"kind": "done"}]
    )
    journal = tmp_path / "journal.sqlite3"
    result = watcher_cli("replay", str(transcript), "--journal", str(journal))
    assert result.returncode == 0 and no_traceback(result.stderr), result.stderr
    rows = _rows(journal)
    assert len(rows) == 3, "no observation silently missing"
    payload = json.loads(rows[1][1])
    assert len(rows[1][1]) < 1_100_000, "nothing bloats the journal"
    if case != "NUL bytes":
        assert "journal_note" in payload, "what was clipped or re-encoded is said in the event"
    else:
        assert payload["observation"]["output"] == "a\x00b"


def test_json_nested_ten_thousand_deep_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    transcript = write_transcript(
        tmp_path / "t.jsonl", ['{"kind": "user_message", "text": ' + "[" * 10_000 + "]" * 10_000 + "}"]
    )
    result = watcher_cli("replay", str(transcript), "--journal", str(tmp_path / "j.sqlite3"))
    assert result.returncode == 2 and no_traceback(result.stderr)
    assert result.stderr.startswith("watcher: error:") and "t.jsonl" in result.stderr


# one key of every provider the security role knows, in its usual and its unquoted shapes
PLANTED: dict[str, str] = json.loads((Path(__file__).parent / "data" / "planted_secrets.json").read_text())


def _planted_records() -> list[dict[str, Any]]:
    env = "\n".join(f"{k.upper().replace(' ', '_')}_TOKEN={v}" for k, v in PLANTED.items())
    creds = f"[default]\naws_secret_access_key = {PLANTED['aws secret']}\naws_access_key_id = {PLANTED['aws access']}"
    pem = f"-----BEGIN RSA PRIVATE KEY-----\n{PLANTED['private key']}\n-----END RSA PRIVATE KEY-----"
    quoted = "\n".join(f'secret_{i} = "{v}"' for i, v in enumerate(PLANTED.values()))
    shapeless = ("aws secret", "password", "private key")  # recognisable only by their name or markers
    bare = " ".join(v for k, v in PLANTED.items() if k not in shapeless)
    return [
        {"kind": "user_message", "text": f"here are my keys: {bare}\npassword: {PLANTED['password']}"},
        {"kind": "tool_call", "id": "t1", "name": "Write", "input": {"file_path": ".env", "content": env}},
        {"kind": "tool_result", "tool_call_id": "t1", "output": creds + "\n" + pem, "is_error": False},
        {"kind": "cell_executed", "source": quoted + "\nprint(KEY)", "stdout": env + "\n" + bare},
        {"kind": "done"},
    ]


def test_no_planted_secret_reaches_the_journal_file_or_the_json_output(tmp_path: Path) -> None:
    transcript = write_transcript(tmp_path / "t.jsonl", _planted_records())  # type: ignore[arg-type]
    journal = tmp_path / "journal.sqlite3"
    result = watcher_cli("replay", str(transcript), "--journal", str(journal), "--json", "--all")
    assert result.returncode == 0, result.stderr
    conn = sqlite3.connect(journal)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("journal.sqlite3*"))
    shown = (result.stdout + result.stderr).encode()
    for provider, secret in PLANTED.items():
        core = secret.removeprefix("AccountKey=")[8:]  # the part a mask never keeps
        assert core.encode() not in stored, f"{provider} key in the journal file"
        assert core.encode() not in shown, f"{provider} key in the output"


def test_a_line_too_deep_to_read_among_good_ones_is_skipped_and_said(tmp_path: Path) -> None:
    deep = '{"kind": "user_message", "text": ' + "[" * 10_000 + "]" * 10_000 + "}"
    transcript = write_transcript(
        tmp_path / "t.jsonl", [{"kind": "user_message", "text": "hi"}, deep, {"kind": "done"}]
    )
    journal = tmp_path / "journal.sqlite3"
    result = watcher_cli("replay", str(transcript), "--journal", str(journal))
    assert result.returncode == 0 and no_traceback(result.stderr), result.stderr
    assert "skipped 1" in result.stdout + result.stderr, "the missing line is said, not silent"
    assert len(_rows(journal)) == 2


@pytest.mark.parametrize("layout", ["jsonl", "document"])
def test_invalid_utf8_inside_a_string_is_replaced_and_the_record_read(tmp_path: Path, layout: str) -> None:
    """Tool output carries bytes that are not UTF-8; the record is read with them replaced, not skipped."""
    bad = b'{"kind":"user_message","text":"bad \xff\xfe bytes rm -rf /"}'
    done = b'{"kind":"done"}'
    path = tmp_path / "t.jsonl"
    path.write_bytes(bad + b"\n" + done + b"\n" if layout == "jsonl" else b"[" + bad + b"," + done + b"]")
    journal = tmp_path / "j.sqlite3"
    replayed = watcher_cli("replay", str(path), "--json", "--journal", str(journal))
    assert replayed.returncode == 0 and no_traceback(replayed.stderr), replayed.stderr
    assert "skipped" not in replayed.stdout, replayed.stdout
    with sqlite3.connect(journal) as conn:
        texts = [row[0] for row in conn.execute("SELECT payload FROM events WHERE kind = 'observation'")]
    assert any("bad \ufffd\ufffd bytes" in json.loads(text)["observation"]["text"] for text in texts), texts
