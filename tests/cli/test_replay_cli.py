"""``watcher replay`` and ``watcher roles`` as a user runs them: a real subprocess each time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from watcher.runtime import Journal

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"
EXAMPLES = ROOT / "example_notebooks" / "data"


def watcher(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "watcher", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=60
    )


def evaluations(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines()]


@pytest.mark.parametrize("transcript", sorted(EXAMPLES.glob("*.jsonl")), ids=lambda p: p.stem)
def test_replay_examples_json(transcript: Path) -> None:
    done = watcher("replay", transcript, "--json")
    assert done.returncode == 0, done.stderr
    rows = evaluations(done.stdout)
    assert rows, "every example has breakpoints"
    for row in rows:
        assert set(row) >= {"watcher", "index", "decision", "urgent", "severity", "action", "content", "locations"}
        assert row["decision"] in ("continue", "interject")
        assert isinstance(row["index"], int)
    assert any(r["decision"] == "interject" for r in rows)


def test_replay_claude_code_stream_json() -> None:
    done = watcher("replay", DATA / "claude_stream.jsonl", "--watcher", "errors", "--json")
    assert done.returncode == 0, done.stderr
    rows = evaluations(done.stdout)
    assert [r["index"] for r in rows] == [3, 6, 9]  # the three tool results
    last = rows[-1]
    assert last["decision"] == "interject" and last["action"] == "nudge"
    assert "OperationalError has now been raised 3 times" in str(last["content"])


def test_replay_claude_code_saved_session() -> None:
    done = watcher("replay", DATA / "claude_saved_session.jsonl", "--watcher", "errors", "--json")
    assert done.returncode == 0, done.stderr
    rows = evaluations(done.stdout)
    assert [(r["index"], r["decision"]) for r in rows] == [(4, "continue")]


def test_replay_table_is_readable() -> None:
    done = watcher("replay", EXAMPLES / "notebook_error_loop.jsonl", "--watcher", "errors")
    assert done.returncode == 0
    assert "replayed 5 observations of 'notebook-sales'" in done.stdout
    assert "errors" in done.stdout and "interject" in done.stdout and "cell:c3f1a2:4" in done.stdout


def test_replay_records_into_a_journal(tmp_path: Path) -> None:
    path = tmp_path / "audit.sqlite3"
    done = watcher("replay", EXAMPLES / "notebook_error_loop.jsonl", "--watcher", "errors", "--journal", path, "--json")
    assert done.returncode == 0, done.stderr
    with Journal(path) as journal:
        kinds = [row.kind for row in journal.read(limit=10_000)]
    assert kinds.count("observation") == 5 and kinds.count("evaluation") == 5
    assert kinds.count("interjection") == 1 and kinds.count("delivery") == 1
    assert kinds[0] == "session" and "watcher" in kinds


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"kind": "user_message", "text": "ok"}\n{"kind": "user_message", "text": \n', "bad.jsonl:2: not valid JSON"),
        ('{"kind": "user_message", "text": "ok"}\n\n{"kind": "teleport"}\n', "bad.jsonl:3: unknown kind 'teleport'"),
        ('{"kind": "tool_call"}\n', "bad.jsonl:1: a 'tool_call' record needs the field 'name'"),
        ("[1, 2]\n", "bad.jsonl:1: expected a JSON object"),
        ('{"hello": "world"}\n', "bad.jsonl:1: neither a watcher record"),
        ("\n\n", "bad.jsonl: holds no observations"),
    ],
)
def test_bad_input_exit_2_with_file_and_line(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)
    done = watcher("replay", bad, "--json")
    assert done.returncode == 2
    assert done.stdout == ""
    assert message in done.stderr and done.stderr.startswith("watcher: error: ")
    assert "Traceback" not in done.stderr


def test_missing_file_and_unknown_role(tmp_path: Path) -> None:
    missing = watcher("replay", tmp_path / "nope.jsonl")
    assert missing.returncode == 2 and missing.stdout == "" and "nope.jsonl: no such file" in missing.stderr
    role = watcher("replay", EXAMPLES / "notebook_error_loop.jsonl", "--watcher", "astrology")
    assert role.returncode == 2 and role.stdout == "" and "unknown role 'astrology'" in role.stderr


def test_replay_with_an_llm_evaluator_through_the_real_sdk(tmp_path: Path) -> None:
    from watcher.testing import Reply, StubAnthropicServer

    def answer(request: object) -> Reply:
        return Reply.text(
            "[INTERJECT]\nurgent: false\naction: nudge\ncontent: Read the KeyError: 'month' is not a column.\n[/INTERJECT]"
        )

    with StubAnthropicServer(*[Reply.dynamic(answer)] * 5) as stub:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key-000000"}
        done = subprocess.run(
            [sys.executable, "-m", "watcher", "replay", str(EXAMPLES / "notebook_error_loop.jsonl"), "--watcher", "errors",
             "--evaluator", "anthropic", "--watcher-base-url", stub.base_url, "--watcher-model", "claude-haiku-4-5", "--json"],
            capture_output=True, text=True, timeout=60, env=env, cwd=ROOT,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        rows = evaluations(done.stdout)
        assert len(rows) == 5 and all(r["decision"] == "interject" and r["action"] == "nudge" for r in rows)
        assert len(stub.requests) == 5
        assert stub.requests[0].body is not None and stub.requests[0].body["model"] == "claude-haiku-4-5"


def test_roles_lists_briefs() -> None:
    done = watcher("roles")
    assert done.returncode == 0
    assert "errors — Error-loop watcher (supervisor)" in done.stdout
    assert "same exception" in done.stdout


def test_console_script_and_module_agree() -> None:
    script = Path(sys.executable).with_name("watcher")
    done = subprocess.run([script, "roles"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == watcher("roles").stdout


def test_a_role_given_twice_is_a_clear_error() -> None:
    done = watcher("replay", EXAMPLES / "notebook_error_loop.jsonl", "-w", "errors", "-w", "errors")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("watcher: error: replay: role 'errors' is given more than once with -w")
    assert "Traceback" not in done.stderr and "--name" not in done.stderr
