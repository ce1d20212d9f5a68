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
    assert [r["index"] for r in rows] == [3, 6, 9, 11]  # the three tool results, then the session's end
    last = rows[2]
    assert last["decision"] == "interject" and last["action"] == "nudge"
    assert "OperationalError has now been raised 3 times" in str(last["content"])


def test_replay_claude_code_saved_session() -> None:
    done = watcher("replay", DATA / "claude_saved_session.jsonl", "--watcher", "errors", "--json")
    assert done.returncode == 0, done.stderr
    rows = evaluations(done.stdout)
    # the summary (a title) is no observation; the final text is judged at the session's end
    assert [(r["index"], r["decision"]) for r in rows] == [(3, "continue"), (4, "continue")]


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
    ("content", "flags", "message"),
    [
        ('{"kind": "user_message", "text": "ok"}\n{"kind": "user_message", "text": \n', ["--strict"], "bad.jsonl:2: not valid JSON"),
        ('{"kind": "user_message", "text": "ok"}\n\n{"kind": "teleport"}\n', ["--strict"], "bad.jsonl:3: unknown record type 'teleport' for the watcher format"),
        ('{"kind": "tool_call"}\n', ["--strict"], "bad.jsonl:1: a 'tool_call' record needs the field 'name'"),
        ('{"kind": "tool_call"}\n', [], "bad.jsonl: holds no observations (watcher format; skipped 1"),
        ("[1, 2]\n", [], "bad.jsonl: no reader recognises it: found no JSON object (first record: int)"),
        ('{"type": ["x"]}\n', [], "bad.jsonl: no reader recognises it: found record type ['x']; tried formats"),
        ('{"hello": "world"}\n', [], "bad.jsonl: no reader recognises it: found a record with keys ['hello']; tried formats watcher, claude-code,"),
        ("\n\n", [], "bad.jsonl: no reader recognises it: found no records"),
        ('{\n "trajectory": [\n  {"action": "ls"\n', [], "bad.jsonl: not valid JSON: none of its 3 non-blank lines is a JSON value"),
        ("hello\n", [], "bad.jsonl: not valid JSON: none of its 1 non-blank lines"),
        ('{"type": "user", "sessionId": "s"}\n', ["--format", "codex"], "bad.jsonl: holds no observations (codex format; skipped 1 'user')"),
    ],
)  # fmt: skip
def test_bad_input_exit_2_with_file_and_line(tmp_path: Path, content: str, flags: list[str], message: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)
    done = watcher("replay", bad, "--json", *flags)
    assert done.returncode == 2
    assert done.stdout == ""
    assert message in done.stderr and done.stderr.startswith("watcher: error: ")
    assert "Traceback" not in done.stderr


def test_lenient_replay_skips_and_counts_unknown_records_on_stderr(tmp_path: Path) -> None:
    lines = ['{"kind": "user_message", "text": "ok"}', '{"kind": "teleport"}', "{not json", '{"kind": "done"}']
    (tmp_path / "mixed.jsonl").write_text("\n".join(lines) + "\n")
    done = watcher("replay", tmp_path / "mixed.jsonl", "--json", "--watcher", "errors")
    assert done.returncode == 0, done.stderr
    rows = evaluations(done.stdout)  # stdout holds evaluations only, one per line
    assert rows and all("watcher" in r for r in rows)
    assert json.loads(done.stderr) == {"skipped": {"teleport": 1, "invalid JSON": 1}}
    table = watcher("replay", tmp_path / "mixed.jsonl", "--watcher", "errors")
    assert "4 records, 2 observations, 1 session; skipped 1 'invalid JSON', 1 'teleport'" in table.stdout


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


SAMPLES = ROOT / "tests" / "transcripts" / "data"


@pytest.mark.parametrize(
    "sample", sorted(p for p in SAMPLES.iterdir() if p.name != "expected.json"), ids=lambda p: p.name
)
def test_every_format_replays_with_the_three_offline_roles(sample: Path) -> None:
    done = watcher("replay", sample, "--watcher", "security", "--watcher", "stuck", "--watcher", "errors", "--json")
    assert done.returncode == 0, done.stderr
    rows = evaluations(done.stdout)
    assert rows and {r["watcher"] for r in rows} == {"security", "stuck", "errors"}


def test_formats_lists_every_format_with_an_example() -> None:
    done = watcher("formats")
    assert done.returncode == 0
    names = [line.split(" — ")[0] for line in done.stdout.splitlines() if not line.startswith(" ")]
    assert names == [
        "watcher", "claude-code", "codex", "codex-exec", "gemini-stream", "gemini-chat", "openhands", "swe-agent",
        "mini-swe-agent", "managed-agents", "pi", "antigravity",
    ]  # fmt: skip
    assert sum("watcher replay" in line for line in done.stdout.splitlines()) == len(names)


def test_format_override_and_a_wrong_guess(tmp_path: Path) -> None:
    forced = watcher("replay", SAMPLES / "antigravity.jsonl", "--format", "antigravity", "--json")
    assert forced.returncode == 0 and evaluations(forced.stdout)
    wrong = watcher("replay", SAMPLES / "antigravity.jsonl", "--format", "pi", "--strict")
    assert wrong.returncode == 2 and wrong.stdout == ""
    assert "antigravity.jsonl:1: unknown record type 'USER_INPUT' for the pi format" in wrong.stderr


def test_show_prompt_prints_what_the_model_would_be_sent_without_a_key() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")}
    transcript = EXAMPLES / "agent_writes_vulnerable_code.jsonl"
    command = [sys.executable, "-m", "watcher", "replay", str(transcript), "-w", "security", "--evaluator", "anthropic"]
    done = subprocess.run(
        [*command, "--show-prompt", "1"], capture_output=True, text=True, timeout=60, env=env, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("# evaluation 1 of watcher 'security'") and "(estimated); budget 12000" in out
    assert "=== system (cache_control: ephemeral) ===\n[WATCHER EVALUATION]" in out
    assert "=== user ===\nRECENT ACTIVITY IN PARENT SESSION:" in out
    assert " | " in out and "cite lines as" in out  # the written file is a numbered code block
    beyond = subprocess.run(
        [*command, "--show-prompt", "99"], capture_output=True, text=True, timeout=60, env=env, cwd=ROOT
    )
    assert beyond.returncode == 2 and "choose N from 1 to" in beyond.stderr and beyond.stdout == ""


def test_a_prompt_budget_below_1_is_refused_and_a_prompt_over_budget_is_named() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")}
    transcript = EXAMPLES / "agent_writes_vulnerable_code.jsonl"
    command = [sys.executable, "-m", "watcher", "replay", str(transcript), "-w", "security", "--evaluator", "anthropic"]
    for budget in ("-5", "0"):
        done = subprocess.run(
            [*command, "--show-prompt", "1", "--prompt-budget", budget],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            cwd=ROOT,
        )
        assert done.returncode == 2 and done.stdout == ""
        assert f"--prompt-budget takes a number of tokens from 1, not {budget}" in done.stderr
    small = subprocess.run(
        [*command, "--show-prompt", "1", "--prompt-budget", "10"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=ROOT,
    )
    assert small.returncode == 2 and small.stdout == ""
    assert "--show-prompt 1: evaluation 1 of this watcher could not build its request" in small.stderr
    assert "over the prompt budget of 10" in small.stderr and "choose N from" not in small.stderr


def test_show_prompt_json_is_the_body_the_sdk_sends() -> None:
    """The body shown equals, fence nonce aside, what the real SDK sent the stub in a real replay."""
    import re

    from watcher.testing import Reply, StubAnthropicServer

    transcript = EXAMPLES / "agent_writes_vulnerable_code.jsonl"
    base = [sys.executable, "-m", "watcher", "replay", str(transcript), "-w", "security", "--evaluator", "anthropic"]
    with StubAnthropicServer(default_reply=Reply.text("[CONTINUE]\nfine\n[/CONTINUE]")) as stub:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key-000000"}
        real = subprocess.run(
            [*base, "--base-url", stub.base_url, "--json"],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            cwd=ROOT,
        )
        assert real.returncode == 0, real.stderr
        sent = [r.body for r in stub.requests if r.path == "/v1/messages"]
    no_key = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    assert len(sent) >= 2
    for n, body in [(1, sent[0]), (len(sent), sent[-1])]:
        shown = subprocess.run(
            [*base, "--show-prompt", str(n), "--json"], capture_output=True, text=True, timeout=60, env=no_key, cwd=ROOT
        )
        assert shown.returncode == 0, shown.stderr

        def same(text: str) -> str:
            return re.sub(r"OBSERVED-[0-9a-f]{12}", "OBSERVED-N", text)

        assert json.loads(same(shown.stdout)) == json.loads(same(json.dumps(body)))
