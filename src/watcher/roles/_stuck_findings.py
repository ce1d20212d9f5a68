"""A loop the ``stuck`` role found: which rule, at which level, what repeats and how often."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from watcher.core.interjection import Location

__all__ = ["Action", "Finding", "Rule"]

Rule = Literal[
    "repeat",
    "rerun",
    "failing",
    "monologue",
    "chant",
    "cycle",
    "condensation",
    "cell",
    "harness",
    "waiting",
    "tool_error",
    "recurring",
    "respawn",
    "same_answer",
]
Action = Literal["nudge", "pause", "abort"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One loop at one escalation level: what repeats, how often, and what to do about it."""

    rule: Rule
    action: Action
    count: int
    subject: str
    loop: int  # identity of the streak: its levels share it, a re-armed streak gets a new one
    detail: str = ""
    others: tuple[str, ...] = ()  # the other steps of a cycle
    location: Location | None = None
    missing: bool = False  # a tool_error finding about a tool that does not exist
    back_to_back: bool = True  # a chant finding about text repeated back to back (else a line said again)
    different: bool = False  # a monologue finding about replies that differ (else the same one repeated)
    unanswered: bool = False  # a repeat finding about calls whose results are not reported
