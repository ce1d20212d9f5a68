"""The same action over and over whatever its results: run again and again, nothing else done.

A run of one action whose results are the same is the repeat rule's; one that fails is the failing
rule's. What is left is the same action whose results keep changing, run many times in a row with
nothing else between (a clock read thirty times, a flaky helper retried with a new message each
time). A result that changes is progress for a while, and a command re-run while a job moves on is
ordinary, so this is only nudged, at the ``budget``-th run in a row and again at every further as
many, as OpenClaw warns at ten calls with the same arguments whatever they return (Gemini CLI,
Cline and Roo Code compare calls only and stop sooner). Waits are not counted here (``Waits``).
"""

from __future__ import annotations

from collections.abc import Callable

from watcher.roles._stuck_levels import Levels

__all__ = ["Reruns"]


class Reruns:
    """The current run of one action, results aside: how long it is and when it is due a nudge."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._action: str | None = None
        self.count = 0
        self.levels = Levels(0, budget, 0)

    def feed(self, action: str, new_loop: Callable[[], int]) -> tuple[bool, int]:
        """Take one run of ``action``: whether the run is due a nudge now, and its loop id."""
        if action != self._action:
            self._action, self.count = action, 0
            self.levels = Levels(0, self.budget, new_loop())
        self.count += 1
        loop = self.levels.loop
        if self.levels.level(self.count) != 2:
            return False, loop
        self.levels.postpone(self.count)  # the next nudge after as many again, not at every run
        self.levels.loop = new_loop()
        return True, loop

    def rearm(self, new_loop: Callable[[], int], *, at_once: bool) -> None:
        """Someone spoke: a run already flagged counts afresh, or (``at_once``) is flagged at its next run."""
        if self._action is not None and self.levels.rearm(self.count, at_once=at_once):
            self.levels.loop = new_loop()

    def clear(self) -> None:
        """Something else happened (a wait, a cell): the run is over."""
        self._action, self.count = None, 0
