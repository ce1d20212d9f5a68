"""When a streak reports next: its nudge and its top level (pause or abort), re-armed as it goes on.

A loop that was flagged and goes on is flagged again, rather than never: after its top level it
re-arms by itself (a nudge and the top level again, counted from there), and when a person steps
in (a user message) the levels it already reported re-arm at once, so the loop continuing after
the person spoke is flagged on its next occurrence. Each re-arm gives the streak a new loop id,
so the role does not mistake the new report for the one it already escalated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Levels"]

Level = Literal[0, 1, 2]


@dataclass(slots=True)
class Levels:
    """Due counts of one streak: ``nudge_at`` (0: no nudge level) and ``top_at`` occurrences."""

    nudge_at: int
    top_at: int
    loop: int
    nudge_due: int = 0
    top_due: int = 0
    nudged: bool = False
    topped: bool = False

    def __post_init__(self) -> None:
        self.nudge_due, self.top_due = self.nudge_at, self.top_at

    def level(self, count: int) -> Level:
        """The level ``count`` occurrences reach now (2 top, 1 nudge, 0 none), each reported once."""
        if count >= self.top_due:
            self.postpone(count)
            self.topped = True
            return 2
        if self.nudge_due and count >= self.nudge_due:
            self.nudge_due, self.nudged = 0, True
            return 1
        return 0

    def postpone(self, count: int) -> None:
        """Reported at the top level (here or by a sibling rule): next reports count from ``count``."""
        self.top_due = count + self.top_at
        self.nudge_due = count + self.nudge_at if self.nudge_at else 0

    def rearm(self, count: int) -> bool:
        """A person stepped in: what was reported is reported again at the next occurrence."""
        if self.topped:
            self.top_due = count + 1
        elif self.nudged:
            self.nudge_due = count + 1
        else:
            return False
        self.topped = self.nudged = False
        return True
