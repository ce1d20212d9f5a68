"""Recurring failures and re-delegation: a loop whose steps are spread out among other steps.

The failing and repeat rules see an action run again *in a row*. Two loops that real agents show
hide from them because something else happens between the runs:

- **The same failure, edits between.** A test is run, fails, the agent edits something, runs it
  again, and it fails exactly as before (volatile details such as durations blurred); then again.
  The edits do not touch the failure (a comment reworded, a line moved back and forth, a change in
  the wrong place). An edit that matters changes the output, and a run that passes ends the count,
  so ``recurring_nudge`` identical failures of one action with other steps between are nudged, and
  again at every further as many. It is only a nudge: a slow fix can take a few tries.
- **The same task handed to a sub-agent again.** A sub-agent (``Task``, ``Agent``, ``new_task``,
  ``spawn_agent``...) given the same brief ``respawn_nudge`` times since the person last spoke is
  nudged, whatever each one reported: another sub-agent with the same brief will not do better.

A person's message ends both counts: after they speak, the agent may well be asked to try again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from watcher.roles._stuck_results import ResultKey

__all__ = ["RecurringFailures", "Redelegations", "delegating"]

_MAX_KEPT = 256  # actions followed at most; an agent touching more is not repeating one of them
# Tools that hand a task to a sub-agent, across harnesses (Claude Code, Roo Code, Codex, OpenClaw).
_DELEGATE = re.compile(
    r"(?:task|agent|new_?task|dispatch_?agent|spawn_?agent|sessions_?spawn|delegate\w*|\w*sub_?agent\w*)",
    re.IGNORECASE,
)


def delegating(name: str) -> bool:
    """Whether a tool call hands a task to a sub-agent (``Task``, ``Agent``, ``new_task``...)."""
    return _DELEGATE.fullmatch(name.strip()) is not None


@dataclass(slots=True)
class _Failure:
    result: ResultKey
    count: int = 0


class RecurringFailures:
    """Per action: how many times in a row its runs failed the same way, other steps between or not."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._failures: dict[str, _Failure] = {}

    def feed(self, action: str, result: ResultKey, in_a_row: int, new_loop: Callable[[], int]) -> tuple[int, int]:
        """Take one run of ``action``: (count, loop id) when it is due a nudge, else (0, 0).

        ``in_a_row`` is how many of these failures came back to back: a streak with nothing between
        is the failing rule's to report, so only one broken by other steps is reported here.
        """
        failures = self._failures
        if not result.failed:
            failures.pop(action, None)  # it works now
            return 0, 0
        known = failures.get(action)
        if known is None or known.result != result:
            if len(failures) >= _MAX_KEPT:
                failures.clear()
            known = failures[action] = _Failure(result)
        known.count += 1
        if known.count % self.budget or in_a_row >= known.count:
            return 0, 0
        return known.count, new_loop()

    def clear(self) -> None:
        """A person spoke: every count starts afresh."""
        self._failures.clear()


class Redelegations:
    """How many times each brief was handed to a sub-agent since the person last spoke."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._briefs: dict[str, int] = {}

    def feed(self, action: str, new_loop: Callable[[], int]) -> tuple[int, int]:
        """Take one delegation: (count, loop id) when it is due a nudge, else (0, 0)."""
        briefs = self._briefs
        if action not in briefs and len(briefs) >= _MAX_KEPT:
            briefs.clear()
        count = briefs[action] = briefs.get(action, 0) + 1
        if count % self.budget:
            return 0, 0
        return count, new_loop()

    def clear(self) -> None:
        """A person spoke: every count starts afresh."""
        self._briefs.clear()
