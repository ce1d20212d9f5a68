"""Waiting: sleeps, polls and status checks, repeated freely while they bring news.

Waiting is not looping: a poll whose output changes (a log that grows, a job that moves on) is
progress, and any wait that brings something new starts the count afresh for every wait of the
run. A wait that keeps coming back with nothing new is another matter: the ``wait_budget``-th time
in a row one wait (``sleep 30`` and ``sleep 60`` are one wait) brings nothing new is nudged, and
again at every further budget (OpenClaw warns at 10 polls without progress and blocks at 20). It is
never paused by itself: the job waited for may simply be slow, so the nudges climb the role's
ladder (hint, warning, critical) and a pause comes only when five went unanswered. Real work
between waits ends the run (the tracker calls ``clear``).
"""

from __future__ import annotations

from collections.abc import Callable

from watcher.roles._stuck_levels import Levels
from watcher.roles._stuck_results import ResultKey

__all__ = ["Waits"]

_MAX_WAITS = 512  # distinct waits in one run, kept at most


class Waits:
    """The current run of waiting calls: for each wait, how often in a row it brought nothing new."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._last: dict[str, ResultKey] = {}
        self._counts: dict[str, int] = {}
        self.levels = Levels(0, budget, 0)

    def feed(self, key: str, result: ResultKey, new_loop: Callable[[], int]) -> tuple[bool, int, int]:
        """Take one wait's result: whether the run is due a nudge, the wait's count and the loop id."""
        last = self._last.get(key)
        if not self._counts or (last is not None and last != result):
            self._last.clear()  # news (or a new run): every wait counts afresh
            self._counts.clear()
            self.levels = Levels(0, self.budget, new_loop())
        elif len(self._counts) >= _MAX_WAITS and key not in self._counts:
            self._last.clear()
            self._counts.clear()
        self._last[key] = result
        count = self._counts[key] = self._counts.get(key, 0) + 1
        loop = self.levels.loop
        due = self.levels.level(count) == 2
        if due:
            self.levels.postpone(count)  # the next nudge after as many again, not at every wait
            self.levels.loop = new_loop()
        return due, count, loop

    def rearm(self, new_loop: Callable[[], int], *, at_once: bool) -> None:
        """Someone spoke: waiting already flagged counts afresh, or (``at_once``) is flagged at the next wait."""
        if self._counts and self.levels.rearm(max(self._counts.values()), at_once=at_once):
            self.levels.loop = new_loop()

    def clear(self) -> None:
        """Real work happened: the run of waits is over."""
        self._last.clear()
        self._counts.clear()

    def __bool__(self) -> bool:
        return bool(self._counts)
