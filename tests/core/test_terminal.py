"""``for_terminal`` and ``json_for_terminal``: observed text shown, not obeyed, and JSON that reads back the same."""

from __future__ import annotations

import json
import re
import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from watcher.core.terminal import FORMAT_CHARACTERS, code_point, for_terminal, json_for_terminal

ACTS = frozenset(
    chr(c)
    for c in range(sys.maxunicode + 1)
    if unicodedata.category(chr(c)) in ("Cc", "Cf", "Cs", "Zl", "Zp") and chr(c) not in "\t\n\u200c\u200d"
)


@pytest.mark.parametrize(
    ("observed", "shown", "one_line"),
    [
        ("\x1b[2Jclear", "⟨U+001B⟩[2Jclear", "⟨U+001B⟩[2Jclear"),
        ("\x1b]52;c;cm0=\x07", "⟨U+001B⟩]52;c;cm0=⟨U+0007⟩", "⟨U+001B⟩]52;c;cm0=⟨U+0007⟩"),
        ("over\rwrite", "over⟨U+000D⟩write", "over⟨U+000D⟩write"),
        ("a\r\nb\nc", "a\nb\nc", "a b c"),
        ("a\tb", "a\tb", "a b"),
        ("x\b\b\x7f", "x⟨U+0008⟩⟨U+0008⟩⟨U+007F⟩", "x⟨U+0008⟩⟨U+0008⟩⟨U+007F⟩"),
        ("\x9b31m", "⟨U+009B⟩31m", "⟨U+009B⟩31m"),
        ("if \u202e})\u2066", "if ⟨U+202E⟩})⟨U+2066⟩", "if ⟨U+202E⟩})⟨U+2066⟩"),
        ("line\u2028sep", "line⟨U+2028⟩sep", "line⟨U+2028⟩sep"),
        ("tag\U000e0041", "tag⟨U+E0041⟩", "tag⟨U+E0041⟩"),
        ("lone \ud800", "lone ⟨U+D800⟩", "lone ⟨U+D800⟩"),
        (
            "café 東京 👍 👨\u200d👩\u200d👧 नमस्ते क्‍ष",
            "café 東京 👍 👨\u200d👩\u200d👧 नमस्ते क्‍ष",
            "café 東京 👍 👨\u200d👩\u200d👧 नमस्ते क्‍ष",
        ),
    ],
    ids=[
        "csi",
        "osc 52",
        "bare cr",
        "crlf",
        "tab",
        "backspace and del",
        "c1 csi",
        "bidi",
        "line separator",
        "tag",
        "surrogate",
        "ordinary",
    ],
)
def test_what_a_terminal_acts_on_is_shown_and_the_rest_is_kept(observed: str, shown: str, one_line: str) -> None:
    assert for_terminal(observed) == shown
    assert for_terminal(observed, one_line=True) == one_line


def test_every_format_character_is_shown_but_the_joiners() -> None:
    every = {chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"}
    assert all(re.fullmatch(f"[{FORMAT_CHARACTERS}]", c) for c in every)  # this Python's Unicode has no other
    assert {c for c in every if for_terminal(c) == c} == {"\u200c", "\u200d"}  # they join emoji and letters
    assert all(for_terminal(c) == code_point(c) for c in every - {"\u200c", "\u200d"})


@given(st.text())
def test_nothing_that_acts_is_left_and_a_second_pass_changes_nothing(text: str) -> None:
    for one_line in (False, True):
        shown = for_terminal(text, one_line=one_line)
        assert not ACTS & set(shown)
        assert for_terminal(shown, one_line=one_line) == shown
        assert "\n" not in shown if one_line else True


@given(
    st.recursive(st.text() | st.integers() | st.none(), lambda kids: st.lists(kids) | st.dictionaries(st.text(), kids))
)
def test_json_reads_back_exactly_and_holds_nothing_that_acts(value: object) -> None:
    for indent in (None, 2):
        dumped = json_for_terminal(json.dumps(value, ensure_ascii=False, indent=indent))
        assert json.loads(dumped) == value
        assert not ACTS & set(dumped)
