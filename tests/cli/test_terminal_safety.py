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
from collections.abc import Callable
from pathlib import Path

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
