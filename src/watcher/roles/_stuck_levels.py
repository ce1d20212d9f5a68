"""When a streak reports next: its nudge and its top level (pause or abort), again as it goes on.

A loop that was flagged and goes on is flagged again, rather than never: once it reached its top
level, every further occurrence is flagged at the top level again, as the peers' detectors say
"stuck" at every check past their threshold (a loop paused and let go on without a word is paused
again at once); ``again`` spaces those re-flags out (Roo Code counts afresh after a refusal). When a person
steps in (a user message), a loop already flagged also counts afresh from there, so the same loop
is not flagged again at once after the person spoke, only if it goes on for its full count; a loop
not yet flagged keeps its count (a person's "continue" does not hide a loop, as in OpenHands'
headless mode). When the harness (or a watcher) nudged the agent about it instead, a loop already
flagged that goes on is flagged again at its next occurrence: the nudge went unheeded (Gemini CLI's
second strike). Each re-arm gives the streak a new loop id, so the role does not mistake the new
report for the one it already escalated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Level", "Levels"]

Level = Literal[0, 1, 2]


@dataclass(slots=True)
class Levels:
    """Due counts of one streak: ``nudge_at`` (0: no nudge level) and ``top_at`` occurrences."""

    nudge_at: int
    top_at: int
    loop: int
    again: int = 1  # occurrences after its top level before a streak is flagged at it again
    nudge_due: int = 0
    top_due: int = 0
    reached: Level = 0  # the level last reported since the streak was last re-armed

    def __post_init__(self) -> None:
        self.nudge_due, self.top_due = self.nudge_at, self.top_at

    def level(self, count: int) -> Level:
        """The level ``count`` occurrences reach now (2 top, 1 nudge, 0 none), each reported once."""
        if count >= self.top_due:
            self.top_due, self.nudge_due, self.reached = count + self.again, 0, 2  # by default every further one
            return 2
        if self.nudge_due and count >= self.nudge_due:
            self.nudge_due, self.reached = 0, 1
            return 1
        return 0

    def postpone(self, count: int) -> None:
        """Count afresh from ``count`` (a person spoke, or a sibling rule reported the same loop)."""
        self.top_due = count + self.top_at
        self.nudge_due = count + self.nudge_at if self.nudge_at else 0

    def rearm(self, count: int, *, at_once: bool = False) -> bool:
        """Someone spoke after ``count`` occurrences: True if the loop was flagged, and so re-armed.

        A loop already flagged counts afresh from ``count`` (a person spoke), or, ``at_once``, is
        flagged again at its next occurrence at the level it last reached (a nudge went unheeded).
        """
        if not self.reached:
            return False
        if not at_once:
            self.postpone(count)
        elif self.reached == 2:
            self.top_due = count + 1
        else:
            self.nudge_due = count + 1
        self.reached = 0
        return True
