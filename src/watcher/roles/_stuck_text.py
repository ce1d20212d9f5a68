"""Repetition inside one reply ("chanting"): the same stretch of text over and over.

A model that degenerates mid-reply writes one sentence, or a short cycle of sentences, again and
again. Gemini CLI stops such a stream; the watcher sees the finished reply and looks, as Gemini CLI
does, at 50-character chunks of its prose: a chunk that comes back ``repeats`` times at one steady
period (at most ``window`` characters), with the text between occurrences repeating exactly, is
chanting. Code blocks (fenced or indented), tables, list items, headings, quotes and divider lines
are left out, and each stretch of prose between them is looked at on its own (as Gemini CLI resets
its count there); a fence counts wherever it is on its line, so prose that follows a closing fence
on the same line (a streamed reply seldom breaks the line there) is prose:
repeated tokens in them are structure, not a loop (a test table, resources sharing a long prefix).
As Roo Code does for reasoning, one line of prose (20 characters or more, compared without case or
spacing) said ``line_repeats`` times anywhere in the reply is chanting too, and so is one said twice
as often with only a counter changing ("Let me verify step 3 ...", as Cline flags a reply full of
"Let me ..." lines); pasted log lines
(``[INFO] ...``, ``WARNING: ...``, a leading timestamp) are not counted.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import NamedTuple

__all__ = ["Chant", "chant"]

_FENCE = re.compile(r"```|~~~")
# table rows, list items, headings, quotes, indented code and divider lines
_SKIPPED = re.compile(r"(?: {4}|\t)|\s*(?:\||[-*+]\s|\d+[.)]\s|#|>)|\s*[-=*_~.#|+]{3,}\s*$")
# log lines pasted into a reply repeat by nature: `[INFO] ...`, `2026-11-23 13:00 ...`, `WARNING: ...`
_LOG_LINE = re.compile(r"\s*(?:\[|\d{2,4}[-/:.]\d|(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL)\b)")
_LETTER = re.compile(r"[^\W\d_]")
_WS = re.compile(r"\s+")
_DIGITS = re.compile(r"\d+")
_SENTENCE_START = re.compile(r"(?<=[.!?…])\s+(?=\S)")
_LONGEST = 20_000  # characters of prose looked at, from the end: the cost stays bounded
_STEP = 8  # positions between chunks looked up
_SHORTEST_LINE = 20  # characters a line needs to count as said again ("Yes." is not chanting)


class Chant(NamedTuple):
    """What a reply repeats, how often, and whether back to back (else as one line said again and again)."""

    text: str
    times: int
    back_to_back: bool


def _prose(text: str) -> tuple[list[str], list[str]]:
    """The reply's stretches of prose between code, tables, lists, headings, quotes and dividers, and its prose lines."""
    stretches: list[str] = []
    lines: list[str] = []
    kept: list[str] = []

    def close() -> None:
        if kept:
            stretches.append(_WS.sub(" ", " ".join(kept)))
            lines.extend(kept)
            kept.clear()

    in_code = False
    for line in text.splitlines():
        parts = _FENCE.split(line) if "```" in line or "~~~" in line else ()  # between fences: in and out of code
        if len(parts) > 1:
            for k, part in enumerate(parts):
                if k:
                    in_code = not in_code
                    close()
                if not in_code and part.strip() and not _SKIPPED.match(part):
                    kept.append(part)
        elif in_code or _SKIPPED.match(line):
            close()
        else:
            kept.append(line)
    close()
    return stretches, lines


def chant(text: str, repeats: int, line_repeats: int, chunk: int = 50, window: int = 300) -> Chant | None:
    """What one reply repeats: text back to back ``repeats`` times, or a line ``line_repeats`` times; or None."""
    if len(text) < min(chunk + repeats, _SHORTEST_LINE * line_repeats):
        return None
    stretches, lines = _prose(text[-_LONGEST:])
    for prose in reversed(stretches):
        found = _repeated(prose, repeats, chunk, window)
        if found is not None:
            return Chant(*found, back_to_back=True)
    keys = [
        key
        for line in lines
        if len(key := " ".join(line.lower().split())) >= _SHORTEST_LINE and not _LOG_LINE.match(line)
    ]
    # the same line, or (twice as often) the same line but for a counter: "Let me verify step 3 ..."
    for said, least in ((Counter(keys), line_repeats), (Counter(_DIGITS.sub("N", k) for k in keys), 2 * line_repeats)):
        if said:
            key, count = said.most_common(1)[0]
            if count >= least and _LETTER.search(key):
                line = next(
                    line for line in lines if _DIGITS.sub("N", " ".join(line.lower().split())) == _DIGITS.sub("N", key)
                )
                return Chant(" ".join(line.split()), count, back_to_back=False)
    return None


def _from_a_sentence(unit: str) -> str:
    """The repeated text turned to start where a sentence does: "the key. I will" -> "I will ... the key."."""
    start = _SENTENCE_START.search(unit)
    return (unit[start.end() :] + unit[: start.end()] if start else unit).strip()


def _repeated(prose: str, repeats: int, chunk: int, window: int) -> tuple[str, int] | None:
    """A stretch of ``prose`` repeated back to back ``repeats`` times or more, and how often; or None.

    A chunk is looked up at every ``_STEP``-th position only, with ``str.find`` for its next
    occurrence: a repeat long enough to matter covers many sampled positions, so the scan stays
    fast on long replies.
    """
    for at in range(0, len(prose) - chunk + 1, _STEP):
        key = prose[at : at + chunk]
        following = prose.find(key, at + 1, at + window + chunk)
        if following < 0:
            continue
        unit = prose[at:following]  # the period: exactly what comes back
        period = len(unit)
        while at and prose[at - 1] == prose[at - 1 + period]:
            at -= 1  # the run started before this sampled position: count it from its start
        unit = prose[at : at + period]
        run = 1
        while prose.startswith(unit, at + run * len(unit)):
            run += 1
        if prose.startswith(key, at + run * len(unit)):
            run += 1  # a last occurrence of the chunk, as Gemini CLI counts them
        if run >= repeats and len(set(unit)) >= 3 and _LETTER.search(unit):
            starts_a_sentence = at == 0 or prose[at - 2 : at].rstrip()[-1:] in (".", "!", "?", "…")
            return (unit.strip() if starts_a_sentence else _from_a_sentence(unit)), run
    return None
