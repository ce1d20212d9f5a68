"""One tool failing with one error whatever its arguments: a missing tool, or a usage that never works.

Per tool name, the tracker counts failures in a row that bring the same error (``error_key``: what
the error was about blurred). Only a streak whose arguments varied is reported here (one action
failing alone is the failing rule's). A tool that does not exist is paused at ``missing_tool_pause``
calls and not before (an agent may probe a few names, as OpenClaw allows nine); any other same
error is nudged, then paused. A success of the tool ends its streak; so does anything new that
worked, and so does a failure that says nothing but its exit status.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from watcher.roles._stuck_config import StuckConfig
from watcher.roles._stuck_findings import Action, Finding
from watcher.roles._stuck_levels import Levels
from watcher.roles._stuck_results import error_key, error_line, missing_tool

__all__ = ["ToolErrors"]

_MAX_TOOLS = 512  # tools with a failure streak, kept at most
# An error that says only that something failed: a grep finding nothing and a build failing both
# answer "Exit code 1", so such a line does not make two failures the same.
_WORDS = re.compile(r"[a-z][a-z\-]*")
_STATUS_WORDS = frozenset(
    {"error", "exit", "exited", "code", "status", "process", "command", "failed", "with", "returned", "non-zero"}
)


def _bare_status(line: str) -> bool:
    return set(_WORDS.findall(line.lower())) <= _STATUS_WORDS


@dataclass(slots=True)
class _Streak:
    error: int
    first_action: str
    levels: Levels
    missing: bool
    count: int = 0
    varied: bool = False


class ToolErrors:
    """Failure streaks per tool name."""

    def __init__(self, config: StuckConfig) -> None:
        self.config = config
        self._streaks: dict[str, _Streak] = {}

    def feed(self, name: str, action: str, output: str, failed: bool, new_loop: Callable[[], int]) -> list[Finding]:
        """Take one result of tool ``name``; return a finding when its streak reaches a level."""
        streaks = self._streaks
        if not failed:
            streaks.pop(name, None)  # the tool works after all
            return []
        line = error_line(output)
        if not line or _bare_status(line):
            streaks.pop(name, None)  # nothing to tell this failure from any other
            return []
        error = error_key(output)
        streak = streaks.get(name)
        if streak is None or streak.error != error:
            missing = missing_tool(output)
            config = self.config
            nudge, top = (
                (0, config.missing_tool_pause) if missing else (config.same_error_nudge, config.same_error_pause)
            )
            if len(streaks) >= _MAX_TOOLS:
                streaks.clear()
            streak = streaks[name] = _Streak(error, action, Levels(nudge, top, new_loop()), missing)
        streak.count += 1
        streak.varied = streak.varied or action != streak.first_action
        if not streak.varied:  # one action failing alone is the failing rule's to report
            return []
        levels = streak.levels
        level, loop = levels.level(streak.count), levels.loop
        if level == 2:
            levels.loop = new_loop()
        if not level:
            return []
        kind: Action = "pause" if level == 2 else "nudge"
        return [
            Finding("tool_error", kind, streak.count, name or "tool", loop, error_line(output), missing=streak.missing)
        ]

    def clear(self) -> None:
        """Something new worked: earlier failures were not a loop."""
        self._streaks.clear()

    def rearm(self, new_loop: Callable[[], int], *, at_once: bool) -> None:
        """Someone spoke: what was reported counts afresh, or (``at_once``) is reported at the next failure."""
        for streak in self._streaks.values():
            if streak.levels.rearm(streak.count, at_once=at_once):
                streak.levels.loop = new_loop()
