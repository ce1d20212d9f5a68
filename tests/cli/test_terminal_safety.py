"""What agents and models said reaches a person's terminal shown, never obeyed.

A model's answer or an agent's output may hold terminal control sequences (clear the screen, write
the clipboard through OSC 52, set the window title, a hyperlink), a bare carriage return or
backspaces that overwrite a line, an eight-bit CSI (U+009B), a bidirectional override (U+202E).
Each test runs the real ``watcher`` command on hostile content and reads what it printed: no such
character is left, each is shown as its code point, ordinary text (accents, CJK, emoji) is as it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from command_line import Ran
from watcher.testing import Reply, StubOpenAIServer

# clear screen, clipboard write, window title, hyperlink, overwrite, backspaces, 8-bit CSI, bidi override
HOSTILE = (
    "safe\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;pwned\x07\x1b]8;;http://x.invalid\x1b\\link\x1b]8;;\x1b\\"
    " over\rwritten back\x08\x08 csi\x9b31m bidi\u202edesrever\u202c"
)
ORDINARY = "café naïve 東京 👍 👨‍👩‍👧"
# what a terminal acts on or reorders (tab and newline are a printed line's own)
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def assert_shown(printed: str, *, carriage_return: bool = True) -> None:
    """``printed`` holds no raw control, shows each hostile character as its code point, and the ordinary text."""
    assert not RAW.findall(printed), RAW.findall(printed)
    for shown in ("⟨U+001B⟩[2J", "⟨U+001B⟩]52;c;", "⟨U+0007⟩", "⟨U+0008⟩", "⟨U+009B⟩", "⟨U+202E⟩"):
        assert shown in printed, (shown, printed)
    assert ("⟨U+000D⟩" in printed) == carriage_return
    assert ORDINARY in printed


def interjecting(content: str, location: str) -> Reply:
    return Reply.text(
        f"[INTERJECT]\nurgent: false\nseverity: warning\naction: nudge\nlocation: {location}\n"
        f"content: {content}\n[/INTERJECT]"
    )


def test_the_replay_table_shows_a_models_control_sequences_and_keeps_its_words(
    cli: Callable[..., Ran], tmp_path: Path
) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        json.dumps({"kind": "user_message", "text": "hi"}) + "\n" + json.dumps({"kind": "done"}) + "\n"
    )
    answer = interjecting(f"{HOSTILE} {ORDINARY}", "src/\x1b[8mapp.py:3")
    with StubOpenAIServer(default_reply=answer) as stub:
        done = cli("replay", str(transcript), "-w", "stuck", "--evaluator", "openai", "--base-url", stub.base_url,
                   "--model", "m", "--wide")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert_shown(done.stdout, carriage_return=False)  # the answer's parser reads a lone CR as a line's end
    assert "[src/⟨U+001B⟩[8mapp.py:3]" in done.stdout  # the location a model named, too
    finding = next(line for line in done.stdout.splitlines() if " interject " in line)
    assert "over written back" in finding  # a finding stays on its line


def test_replay_json_escapes_what_a_terminal_would_act_on_and_reads_back_the_same(
    cli: Callable[..., Ran], tmp_path: Path
) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        json.dumps({"kind": "user_message", "text": "hi"}) + "\n" + json.dumps({"kind": "done"}) + "\n"
    )
    with StubOpenAIServer(default_reply=interjecting(f"{HOSTILE} {ORDINARY}", "a.py:1")) as stub:
        done = cli("replay", str(transcript), "-w", "stuck", "--evaluator", "openai", "--base-url", stub.base_url,
                   "--model", "m", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not RAW.findall(done.stdout)
    assert "\\u009b" in done.stdout and "\\u202e" in done.stdout and ORDINARY in done.stdout  # readable, not ASCII-only
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    said = f"{HOSTILE} {ORDINARY}".replace("\r", "\n")  # (the answer's parser reads a lone CR as a line's end)
    assert [row["content"] for row in rows if row["content"]] == [said]  # exactly what the model said


def test_show_prompt_text_shows_a_transcripts_control_sequences(cli: Callable[..., Ran], tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    records = [{"kind": "user_message", "text": f"{HOSTILE} {ORDINARY}"}, {"kind": "done"}]
    transcript.write_text("".join(json.dumps(r) + "\n" for r in records))
    done = cli("replay", str(transcript), "-w", "stuck", "--evaluator", "openai", "--model", "m", "--show-prompt", "1")
    assert done.returncode == 0, done.stderr
    assert_shown(done.stdout.replace("⟨U+200D⟩", "\u200d"))  # (the prompt shows every invisible character, joiners too)
    body = cli("replay", str(transcript), "-w", "stuck", "--evaluator", "openai", "--model", "m", "--show-prompt", "1",
               "--json")  # fmt: skip
    assert not RAW.findall(body.stdout) and "café naïve 東京 👍" in body.stdout
    assert any("\x1b]52;c;" in str(m["content"]) for m in json.loads(body.stdout)["messages"])  # as it is sent


def test_an_error_quoting_a_file_name_shows_its_control_sequences(cli: Callable[..., Ran], tmp_path: Path) -> None:
    done = cli("replay", str(tmp_path / f"gone{HOSTILE}.jsonl"))
    assert done.returncode == 2 and done.stdout == ""
    assert "⟨U+001B⟩[2J" in done.stderr and not RAW.findall(done.stderr)


def _fleet_journal(path: Path) -> None:
    from watcher.fleet.events import FleetTask, LearningExtracted, SyncMessageSent, TaskHealthCheck
    from watcher.runtime.journal import Journal

    with Journal(path) as journal:
        for task in ("api", "web"):
            journal.append(FleetTask(session=task, fleet="f", run="r1"))
        journal.append(
            TaskHealthCheck(session="api", fleet="f", cycle=3, health=f"stuck{HOSTILE}", status="running",
                            freshness="fresh", recommendation="nudge", diagnosis=f"loops\non {HOSTILE} {ORDINARY}")
        )  # fmt: skip
        journal.append(LearningExtracted(session="api", fleet="f", learning_id="l1", text=f"{HOSTILE} {ORDINARY}",
                                         source="tool_result", urgency="helpful"))  # fmt: skip
        journal.append(SyncMessageSent(session="web", fleet="f", interjection_id="i1", learning_id="l1",
                                       source_task="api", urgency="helpful", text=f"{HOSTILE}\n{ORDINARY}"))  # fmt: skip


def test_fleet_views_show_what_tasks_and_models_said(cli: Callable[..., Ran], tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite3"
    _fleet_journal(journal)
    for argv in (["status"], ["diagnoses"], ["syncs"], ["health", "api"]):
        done = cli("fleet", *argv, "--journal", str(journal))
        assert done.returncode == 0, (argv, done.stderr)
        assert not RAW.findall(done.stdout), argv
        assert "⟨U+001B⟩[2J" in done.stdout, (argv, done.stdout)
        if argv != ["status"]:  # one line an item, however many the model wrote
            assert_shown(done.stdout)
            assert len(done.stdout.strip().splitlines()) == 1, done.stdout
        as_json = cli("fleet", *argv, "--journal", str(journal), "--json")
        assert not RAW.findall(as_json.stdout)
        assert any("\x1b[2J" in text for text in _strings(json.loads(as_json.stdout))), argv  # read back as written


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_hooks_check_and_policy_show_a_projects_and_a_commands_control_sequences(
    cli: Callable[..., Ran], tmp_path: Path
) -> None:
    (tmp_path / ".watcher").mkdir()
    rule = {"tool": "Bash", "command": "curl *", "reason": f"no downloads{HOSTILE} {ORDINARY}"}
    (tmp_path / ".watcher" / "policy.toml").write_text(f"[[deny]]\n{_toml(rule)}")
    policy = cli("hooks", "policy", "--cwd", str(tmp_path))
    assert not RAW.findall(policy.stdout), policy.stdout
    assert "⟨U+001B⟩[2J" in policy.stdout and ORDINARY in policy.stdout
    check = cli("hooks", "check", f"curl http://x.invalid/{HOSTILE}", "--cwd", str(tmp_path))
    assert check.returncode == 1 and check.stdout.startswith("deny"), check.stdout
    assert not RAW.findall(check.stdout) and "⟨U+001B⟩[2J" in check.stdout
    as_json = cli("hooks", "check", f"curl http://x.invalid/{HOSTILE}", "--cwd", str(tmp_path), "--json")
    assert not RAW.findall(as_json.stdout)
    assert f"no downloads{HOSTILE}" in json.loads(as_json.stdout)["reason"]  # read back as the project wrote it


def _toml(table: dict[str, str]) -> str:
    return "".join(
        f"{key} = {json.dumps(value, ensure_ascii=False)}\n" for key, value in table.items()
    )  # TOML reads it


def test_hooks_status_shows_a_hooked_sessions_control_sequences(
    cli: Callable[..., Ran], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from watcher.hooks._events import HookEvent
    from watcher.runtime.journal import Journal

    journal = tmp_path / "j.sqlite3"
    with Journal(journal) as j:
        j.append(HookEvent(session=f"s{HOSTILE}", event="PreToolUse", answer="none",
                           problems=(f"the model said {HOSTILE}\n{ORDINARY}",)))  # fmt: skip
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WATCHER_SOCKET", str(tmp_path / "no-daemon.sock"))
    done = cli("hooks", "status", "--journal", str(journal))
    assert done.returncode == 0, done.stderr
    assert_shown(done.stdout)
    assert any(
        line.startswith("session problem: the model said") and ORDINARY in line for line in done.stdout.splitlines()
    )


def test_a_spawn_report_shows_the_agents_control_sequences(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from watcher.testing.fake_cli import launcher

    repo = tmp_path / "repo"
    repo.mkdir()
    for argv in (["init", "-q", "-b", "main"], ["-c", "user.email=d@x.invalid", "-c", "user.name=D", "commit", "-q",
                 "--allow-empty", "-m", "init"]):  # fmt: skip
        subprocess.run(["git", *argv], cwd=repo, check=True, capture_output=True)
    session = "5b0c1c7e-0000-4000-8000-000000000001"
    content = [{"type": "tool_use", "id": "t1", "name": f"Bash{HOSTILE}", "input": {"command": "true"}}]
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(line) + "\n" for line in [
        {"type": "system", "subtype": "init", "cwd": "@CWD@", "session_id": session, "tools": ["Bash"]},
        {"type": "assistant", "message": {"role": "assistant", "content": content}, "session_id": session},
        {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
         "content": "ok"}]}, "session_id": session},
        {"type": "result", "subtype": "success", "is_error": False, "result": f"{HOSTILE}\n{ORDINARY}",
         "session_id": session, "total_cost_usd": 0.01, "permission_denials": []},
    ]))  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "watcher", "spawn", "look around", "--no-pr", "--cli-path", str(launcher(script, tmp_path)),
         "--journal", str(tmp_path / "j.sqlite3")],
        cwd=repo, capture_output=True, text=True, timeout=90,
        env={**os.environ, "ANTHROPIC_API_KEY": "sk-ant-test-0000"},
    )  # fmt: skip
    assert "### Summary" in done.stdout, done.stderr
    assert_shown(done.stdout)
    assert not RAW.findall(done.stderr)
