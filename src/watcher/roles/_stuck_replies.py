"""The agent's replies: the same one said again and again, one chanting inside itself, any in a row.

A *monologue* is the same reply (an empty or blank one too) said ``monologue_pause`` times with no
tool activity between; numbers are set aside when replies are compared, since a counter that moves
on while nothing is done ("attempt 2" after "attempt 1") is no news. A person's answer ends the run,
an empty reply answers nobody, so a run of empty replies goes on past a person's message (and past
the harness's nudges, which are not a person). *Chanting* is one reply repeating itself
(``_stuck_text``); replies that follow each other with nothing between are looked at as one text,
since a log may record one streamed reply as several messages (each part alone may not repeat
enough), and chanting is reported once for such a run. When ``reply_run_pause`` asks for it, any replies in a row, whatever they say,
are a monologue too (the OpenHands V1 SDK's rule; thinking is not a reply, anything else ends the run).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from watcher.core.observations import AssistantMessage
from watcher.roles._stuck_config import StuckConfig
from watcher.roles._stuck_findings import Finding
from watcher.roles._stuck_levels import Levels
from watcher.roles._stuck_text import chant

__all__ = ["Replies"]

_COUNTER = re.compile(r"\d+")
_STREAM = 8_000  # characters of a run of replies looked at together, from the end: the cost stays bounded


class Replies:
    """Runs of replies: the same one (``said``) and, when asked for, any (``in_a_row``)."""

    def __init__(self, config: StuckConfig) -> None:
        self.config = config
        self._said: str | None = None  # the reply being repeated, numbers set aside
        self._said_len = 0
        self._said_levels = Levels(0, config.monologue_pause, 0)
        self._in_a_row = 0
        self._in_a_row_levels = Levels(0, config.reply_run_pause, 0)
        self._stream = ""  # the replies since anything else came, joined: one reply streamed in parts
        self._chanted = False  # chanting was reported in this run of replies

    def feed(self, obs: AssistantMessage, new_loop: Callable[[], int]) -> list[Finding]:
        """Take one reply; return chanting in it and the runs it brings to a level."""
        config = self.config
        text = " ".join(obs.text.split())  # an empty or blank reply counts too: repeated, it is a monologue
        found: list[Finding] = []
        whole = (self._stream + obs.text)[-_STREAM:] if self._stream else obs.text
        self._stream = whole or " "
        if not self._chanted and len(whole) > 60 and (said := chant(whole, config.chant_repeats, config.chant_lines)):
            self._chanted = True
            found.append(Finding("chant", "nudge", said.times, said.text, new_loop(), back_to_back=said.back_to_back))
        key = _COUNTER.sub("N", text)
        if key != self._said:
            self._said, self._said_len = key, 0
            self._said_levels = Levels(0, config.monologue_pause, new_loop())
        self._said_len += 1
        if (level_loop := _report(self._said_levels, self._said_len, new_loop)) is not None:
            found.append(Finding("monologue", "pause", self._said_len, text, level_loop))
        if config.reply_run_pause and not obs.extra.get("thinking"):
            if self._in_a_row == 0:
                self._in_a_row_levels = Levels(0, config.reply_run_pause, new_loop())
            self._in_a_row += 1
            if (level_loop := _report(self._in_a_row_levels, self._in_a_row, new_loop)) is not None:
                found.append(Finding("monologue", "pause", self._in_a_row, "", level_loop, different=True))
        return found

    def other(self) -> None:
        """Something other than a reply came: the run of replies in a row is over."""
        self._in_a_row = 0
        self._stream, self._chanted = "", False

    def acted(self) -> None:
        """A tool step or a cell: the agent did something, so no reply is being repeated."""
        self._said = None

    def answered(self) -> None:
        """A person answered: a repeated reply is over, except an empty one (it answered nobody)."""
        if self._said:
            self._said = None

    def rearm(self, new_loop: Callable[[], int], *, at_once: bool) -> None:
        """Someone spoke: a monologue already flagged counts afresh, or (``at_once``) is flagged at its next reply."""
        if self._said_levels.rearm(self._said_len, at_once=at_once):
            self._said_levels.loop = new_loop()


def _report(levels: Levels, count: int, new_loop: Callable[[], int]) -> int | None:
    """The loop id to report ``count`` under when it reaches its (top) level, else None; a new id after it."""
    if not levels.level(count):
        return None
    loop = levels.loop
    levels.loop = new_loop()
    return loop
