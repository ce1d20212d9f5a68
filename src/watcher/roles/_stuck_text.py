"""Repetition inside one reply ("chanting"): the same stretch of text over and over, back to back.

A model that degenerates mid-reply writes one sentence, or a short cycle of sentences, again and
again. Gemini CLI stops such a stream; the watcher sees the finished reply and looks, as Gemini CLI
does, at every 50-character chunk of its prose: a chunk that comes back ``repeats`` times at one
steady period (at most ``window`` characters), with the text between occurrences repeating exactly,
is chanting. Code blocks, tables, list items, headings, quotes and divider lines are left out, and
each stretch of prose between them is looked at on its own (as Gemini CLI resets its count there):
repeated tokens in them are structure, not a loop (a test table, resources sharing a long prefix).
"""

from __future__ import annotations

import re

__all__ = ["chant"]

_FENCE = re.compile(r"\s*(?:```|~~~)")
_SKIPPED = re.compile(r"\s*(?:\||[-*+]\s|\d+[.)]\s|#|>)|\s*[-=*_~.#|+]{3,}\s*$")
_LETTER = re.compile(r"[^\W\d_]")
_WS = re.compile(r"\s+")
_SENTENCE_START = re.compile(r"(?<=[.!?…])\s+(?=\S)")
_LONGEST = 20_000  # characters of prose looked at, from the end: the cost stays bounded


def _prose(text: str) -> list[str]:
    """The reply's stretches of prose between code blocks, tables, lists, headings, quotes and dividers."""
    stretches: list[str] = []
    kept: list[str] = []
    in_code = False
    for line in text.splitlines():
        if in_code or _FENCE.match(line) or _SKIPPED.match(line):
            in_code = in_code != bool(_FENCE.match(line))
            if kept:
                stretches.append(_WS.sub(" ", " ".join(kept)))
                kept = []
        else:
            kept.append(line)
    if kept:
        stretches.append(_WS.sub(" ", " ".join(kept)))
    return stretches


def chant(text: str, repeats: int, chunk: int = 50, window: int = 300) -> tuple[str, int] | None:
    """The text repeated back to back at least ``repeats`` times in one reply, and the count; or None."""
    if len(text) < chunk + repeats:
        return None
    budget = _LONGEST
    for prose in reversed(_prose(text)):
        found = _repeated(prose[-budget:], repeats, chunk, window)
        budget -= len(prose)
        if found is not None or budget <= 0:
            return found
    return None


def _from_a_sentence(unit: str) -> str:
    """The repeated text turned to start where a sentence does: "the key. I will" -> "I will ... the key."."""
    start = _SENTENCE_START.search(unit)
    return (unit[start.end() :] + unit[: start.end()] if start else unit).strip()


def _repeated(prose: str, repeats: int, chunk: int, window: int) -> tuple[str, int] | None:
    """The first chunk of ``prose`` seen ``repeats`` times back to back at a steady period."""
    seen: dict[str, tuple[int, int, int]] = {}  # chunk -> (last position, period, occurrences in a row)
    for i in range(len(prose) - chunk + 1):
        key = prose[i : i + chunk]
        prev = seen.get(key)
        if prev is None:
            seen[key] = (i, 0, 1)
            continue
        last, period, run = prev
        gap = i - last
        steady = gap <= window and (run == 1 or gap == period)
        if steady and (gap <= chunk or prose[last:i] == prose[i : i + gap]):
            run += 1
            unit = prose[last:i]
            if run >= repeats and len(set(unit)) >= 3 and _LETTER.search(unit):
                while prose.startswith(unit, i + gap):  # count the repeats still to come
                    run, i = run + 1, i + gap
                return _from_a_sentence(unit), run
        else:
            run = 1
        seen[key] = (i, gap, run)
    return None
