"""Observed text made safe to print on a person's terminal: what a terminal would act on is shown, not obeyed.

An agent's output, a model's answer, a file name or a journal row may hold terminal control
sequences: ``ESC [2J`` clears the screen, ``ESC ]52;c;…`` writes the clipboard, ``ESC ]0;…`` the
window title, ``ESC ]8;;URL`` a hyperlink; a bare carriage return or backspaces overwrite what was
printed; U+009B is an eight-bit ``ESC [``; a bidirectional override (U+202E) reorders the rest of
the line ("Trojan Source"). Printed raw, they hide a finding or plant a command in the clipboard.
``for_terminal`` shows each such character as its code point (``⟨U+001B⟩[2J``), the form the
evaluation prompt uses for invisible characters, and leaves ordinary text (accents, CJK, emoji)
as it is. ``json_for_terminal`` does the same to JSON output with JSON's own ``\\uXXXX`` escapes,
so a parser reads back exactly the string that was observed.
"""

from __future__ import annotations

import re

__all__ = ["FORMAT_CHARACTERS", "code_point", "for_terminal", "json_for_terminal"]

#: Every Unicode format character (category Cf), as a regular expression's character-class body:
#: bidirectional controls, zero-width spaces and joiners, the tag characters of "ASCII smuggling".
FORMAT_CHARACTERS = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\u0890\u0891\u08e2\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001345f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e007f"
)
# What a terminal acts on or a reader cannot see: C0 controls but tab and newline (each caller's
# field decides about those), DEL, C1 controls, lone surrogates (which also fail to encode), the
# line and paragraph separators, and the format characters. The zero-width joiner and non-joiner
# stay: they join emoji (👨‍👩‍👧) and the letters of Indic and Arabic scripts, and move nothing.
_HIDDEN = f"\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029{FORMAT_CHARACTERS}"
_SHOWN = re.compile(f"(?![\u200c\u200d])[{_HIDDEN}]")
_BREAKS = re.compile("\r\n|[\t\n]")


def code_point(char: str) -> str:
    """``⟨U+001B⟩``: how a character that must not act, or cannot be seen, is shown instead."""
    return f"\u27e8U+{ord(char):04X}\u27e9"


def for_terminal(text: str, *, one_line: bool = False) -> str:
    """``text`` with every control, format and separator character shown as its code point.

    Newlines and tabs are kept (a ``CR LF`` pair reads as a newline; a bare ``CR``, which would
    overwrite the line, is shown); ``one_line`` folds them to spaces instead, for a table cell or a
    line that must stay one line. The result holds nothing a terminal would act on, and applying
    it again changes nothing.
    """
    text = _BREAKS.sub(" ", text) if one_line else text.replace("\r\n", "\n")
    return _SHOWN.sub(lambda m: code_point(m.group()), text)


def json_for_terminal(dumped: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with those characters as ``\\uXXXX`` escapes.

    ``json.dumps`` escapes C0 controls itself but writes DEL, C1 controls, bidirectional controls
    and lone surrogates as they are; escaped here, the text is still the same JSON (a parser reads
    the same strings back), and ordinary non-ASCII text stays readable. Outside its strings JSON
    holds no such character (its indentation is newlines and spaces), so only string contents change.
    """
    return _SHOWN.sub(lambda m: _json_escape(m.group()), dumped)


def _json_escape(char: str) -> str:
    value = ord(char)
    if value <= 0xFFFF:
        return f"\\u{value:04x}"
    value -= 0x10000  # beyond the first plane: a UTF-16 surrogate pair, as JSON spells it
    return f"\\u{0xD800 + (value >> 10):04x}\\u{0xDC00 + (value & 0x3FF):04x}"
