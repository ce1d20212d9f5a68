"""Short cycles of tool steps: A B A B A B, or A B C A B C A B C, with the same results each time.

A *step* is a tool call's action key paired with its result key. The detector keeps, for every
period ``p`` up to ``max_period``, how many steps in a row equalled the step ``p`` before them: the
last ``p * n`` steps are ``n`` repetitions of one ``p``-step block exactly when that count reaches
``p * (n - 1)``. So each step costs ``max_period`` comparisons whatever the history.
The shortest period is reported first: a nudge when it has come round ``cycles`` times (a cycle of
two steps, OpenHands' ping-pong) or ``long_cycles`` times (three to five steps, whose rounds each
cover more ground: Gemini CLI lets three rounds of three calls pass and stops at the fifth), a
pause at ``pause_cycles``, and a pause at every further full cycle while it goes on (``Levels``).
A cycle whose results change (a read that shows new content each time) is no cycle at all.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable

from watcher.roles._stuck_levels import Level, Levels

__all__ = ["CycleDetector"]

Step = tuple[str, Hashable]


class CycleDetector:
    """Reports a cycle of 2 to ``max_period`` steps at ``cycles`` (``long_cycles``) and ``pause_cycles`` cycles."""

    def __init__(self, cycles: int, pause_cycles: int, max_period: int = 5, long_cycles: int | None = None) -> None:
        self.cycles = cycles
        self.long_cycles = cycles if long_cycles is None else long_cycles
        self.pause_cycles = pause_cycles
        self.max_period = max_period
        self._steps: deque[Step] = deque(maxlen=max_period)
        self._match = [0] * (max_period + 1)  # _match[p]: steps in a row equal to the one p before
        self._period = 0  # the period of the cycle going on, 0 when none is
        self.levels = Levels(cycles, pause_cycles, 0)
        self.count = 0  # full cycles of the cycle going on

    def feed(self, step: Step, new_loop: Callable[[], int]) -> tuple[Level, list[Step]]:
        """Take the next step; the level a cycle reaches with it (0: none) and its repeating block."""
        steps, match = self._steps, self._match
        n = len(steps)
        for p in range(1, self.max_period + 1):
            match[p] = match[p] + 1 if n >= p and steps[n - p] == step else 0
        steps.append(step)
        if self._period and match[self._period] == 0:
            self._period = 0  # the cycle broke
        if not self._period:
            for p in range(2, self.max_period + 1):
                due = self.cycles if p == 2 else self.long_cycles
                if match[p] >= p * (due - 1) and len({action for action, _ in list(steps)[-p:]}) >= 2:
                    self._period = p  # one action repeated is a plain repeat, not a cycle
                    self.levels = Levels(due, self.pause_cycles, new_loop())
                    break
            else:
                return 0, []
        period = self._period
        if match[period] % period:
            return 0, []  # mid-cycle: counts move at whole cycles
        self.count = match[period] // period + 1
        level = self.levels.level(self.count)
        return level, (list(steps)[-period:] if level else [])

    @property
    def going_on(self) -> bool:
        """Whether a cycle long enough to be reported is going on."""
        return self._period != 0

    def rearm(self, new_loop: Callable[[], int], *, at_once: bool) -> None:
        """Someone spoke: a cycle already flagged counts afresh, or (``at_once``) is flagged at its next full cycle."""
        if self._period and self.levels.rearm(self.count, at_once=at_once):
            self.levels.loop = new_loop()

    def clear(self) -> None:
        """Something other than a tool step happened (a cell ran): no cycle goes on."""
        self._steps.clear()
        self._match = [0] * (self.max_period + 1)
        self._period = 0
