"""Repetition inside one reply ("chanting"): the same stretch of text over and over, back to back.

A model that degenerates mid-reply writes one sentence, or a short cycle of sentences, again and
again. Gemini CLI stops such a stream; the watcher sees the finished reply and looks, as Gemini CLI
does, at every 50-character chunk of its prose: a chunk that comes back ``repeats`` times at one
steady period (at most ``window`` characters), with the text between occurrences repeating exactly,
is chanting. Code blocks, tables, list items, headings, quotes and divider lines are left out first:
repeated tokens there are structure, not a loop (a test table, resources sharing a long prefix).
"""

from __future__ import annotations

import re

__all__ = ["chant"]

_FENCE = re.compile(r"\s*(?:```|~~~)")
_SKIPPED = re.compile(r"\s*(?:\||[-*+]\s|\d+[.)]\s|#|>)|\s*[-=*_~.#|+]{3,}\s*$")
_LETTER = re.compile(r"[^\W\d_]")
_WS = re.compile(r"\s+")
_LONGEST = 20_000  # characters of prose looked at, from the end: the cost stays bounded


def _prose(text: str) -> str:
    """The reply without code blocks, tables, lists, headings, quotes and dividers, whitespace collapsed."""
    kept: list[str] = []
    in_code = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
        elif not in_code and not _SKIPPED.match(line):
            kept.append(line)
    return _WS.sub(" ", " ".join(kept))


def chant(text: str, repeats: int, chunk: int = 50, window: int = 300) -> tuple[str, int] | None:
    """The text repeated back to back at least ``repeats`` times in one reply, and the count; or None."""
    if len(text) < chunk + repeats:
        return None
    prose = _prose(text)[-_LONGEST:]
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
                return unit.strip(), run
        else:
            run = 1
        seen[key] = (i, gap, run)
    return None
