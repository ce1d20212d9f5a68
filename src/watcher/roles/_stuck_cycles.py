"""Short cycles of tool steps: A B A B A B, or A B C A B C A B C, with the same results each time.

A *step* is a tool call's action key paired with its result key. The detector keeps, for every
period ``p`` up to ``max_period``, how many steps in a row equalled the step ``p`` before them: the
last ``p * cycles`` steps are ``cycles`` repetitions of one ``p``-step block exactly when that count
reaches ``p * (cycles - 1)``. So each step costs ``max_period`` comparisons whatever the history.
The shortest period is reported first; while that cycle goes on it is not reported again until
another ``cycles`` full cycles have passed, or at its next step once a person has stepped in, so a
loop someone let continue is flagged again rather than never.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable

__all__ = ["CycleDetector"]

Step = tuple[str, Hashable]


class CycleDetector:
    """Reports a cycle of 2 to ``max_period`` distinct steps once it has repeated ``cycles`` times."""

    def __init__(self, cycles: int, max_period: int = 5) -> None:
        self.cycles = cycles
        self.max_period = max_period
        self._steps: deque[Step] = deque(maxlen=max_period * cycles)
        self._match = [0] * (max_period + 1)  # _match[p]: steps in a row equal to the one p before
        self._period = 0  # the period of the cycle last reported, 0 when none is going on
        self._due = 0  # _match[_period] at which that cycle is reported again
        self.count = 0  # full cycles of the cycle last reported, when it was reported

    def feed(self, step: Step) -> list[Step]:
        """Take the next step; return the repeating block when a cycle reaches a report, else []."""
        steps, match = self._steps, self._match
        n = len(steps)
        for p in range(1, self.max_period + 1):
            match[p] = match[p] + 1 if n >= p and steps[n - p] == step else 0
        steps.append(step)
        if self._period:
            if match[self._period] == 0:
                self._period = 0  # the cycle broke
            elif match[self._period] >= self._due:
                self._due = match[self._period] + self._period * self.cycles
                self.count = match[self._period] // self._period + 1
                return list(steps)[-self._period :]
            else:
                return []
        for p in range(2, self.max_period + 1):
            if match[p] >= p * (self.cycles - 1):
                block = list(steps)[-p:]
                if len({action for action, _ in block}) < 2:
                    continue  # one action repeated: a plain repeat, not a cycle
                self._period, self._due = p, match[p] + p * self.cycles
                self.count = match[p] // p + 1
                return block
        return []

    def rearm(self) -> None:
        """A person stepped in: a cycle that goes on is reported again at its next step."""
        if self._period:
            self._due = self._match[self._period] + 1

    def clear(self) -> None:
        """Something other than a tool step happened (a cell ran): no cycle goes on."""
        self._steps.clear()
        self._match = [0] * (self.max_period + 1)
        self._period = 0
