"""Repetition inside one reply ("chanting"): the same stretch of text over and over, back to back.

A model that degenerates mid-reply writes one sentence, or a short cycle of sentences, again and
again. Gemini CLI stops such a stream; the watcher sees the finished reply and looks, as Gemini CLI
does, at 50-character chunks of its prose: a chunk that comes back ``repeats`` times at one steady
period (at most ``window`` characters), with the text between occurrences repeating exactly, is
chanting. Code blocks, tables, list items, headings, quotes and divider lines are left out, and
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
_STEP = 8  # positions between chunks looked up


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
        run = 1
        while prose.startswith(unit, at + run * len(unit)):
            run += 1
        if prose.startswith(key, at + run * len(unit)):
            run += 1  # a last occurrence of the chunk, as Gemini CLI counts them
        if run >= repeats and len(set(unit)) >= 3 and _LETTER.search(unit):
            starts_a_sentence = at == 0 or prose[at - 2 : at].rstrip()[-1:] in (".", "!", "?", "…")
            return (unit.strip() if starts_a_sentence else _from_a_sentence(unit)), run
    return None
