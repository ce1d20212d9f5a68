"""Recurring failures, re-delegation, the same answer to varied calls: loops the in-a-row rules miss.

The failing and repeat rules see an action run again *in a row*. Three loops that real agents show
hide from them because something else happens between the runs:

- **The same failure, edits between.** A test is run, fails, the agent edits something, runs it
  again, and it fails exactly as before (volatile details such as durations blurred); then again.
  The edits do not touch the failure (a comment reworded, a line moved back and forth). An edit
  that matters changes the output, and a run that passes ends the count, so ``recurring_nudge``
  identical failures of one action with other steps between, on the same files, are nudged, and
  again at every further as many. It is nudged first: a slow fix can take a few tries. Work that
  spreads to new files meanwhile is not this loop (``RecurringFailures``).
- **The same task handed to a sub-agent again.** A sub-agent (``Task``, ``Agent``, ``new_task``,
  ``spawn_agent``...) given the same brief ``respawn_nudge`` times since the person last spoke is
  nudged, whatever each one reported: another sub-agent with the same brief will not do better.
- **The same answer to a query reworded.** One tool asked ``same_answer_nudge`` times in a row,
  worded anew each time, bringing back the same answer each time (see ``SameAnswers``).

Each is nudged at its budget and again at every further as many; at three times its budget the
loop has outlasted two nudges, and the edits or new wordings between, which count as progress
for the role's ladder, are not: it is paused then, and at every further budget. A person's message
ends every count: after they speak, the agent may well be asked to try again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from watcher.roles._stuck_results import ResultKey

__all__ = ["RecurringFailures", "Redelegations", "SameAnswers", "delegating", "due_action"]

_MAX_KEPT = 256  # actions followed at most; an agent touching more is not repeating one of them
# Arguments that say what is asked rather than what is changed: a search's words, a page's address.
# Not a grep's pattern: several symbols searched for in turn often live in the same few files.
_QUERY_KEYS = frozenset(
    {
        "query",
        "q",
        "queries",
        "search",
        "search_query",
        "search_term",
        "keywords",
        "question",
        "url",
        "urls",
    }
)
# Tools that hand a task to a sub-agent, across harnesses (Claude Code, Roo Code, Codex, OpenClaw).
_DELEGATE = re.compile(
    r"(?:task|agent|new_?task|dispatch_?agent|spawn_?agent|sessions_?spawn|delegate\w*|\w*sub_?agent\w*)",
    re.IGNORECASE,
)


def due_action(count: int, budget: int) -> Literal["nudge", "pause"]:
    """How a loop due at ``count`` occurrences is flagged: nudged, then paused from three budgets on."""
    return "pause" if count >= 3 * budget else "nudge"


def delegating(name: str) -> bool:
    """Whether a tool call hands a task to a sub-agent (``Task``, ``Agent``, ``new_task``...)."""
    return _DELEGATE.fullmatch(name.strip()) is not None


@dataclass(slots=True)
class _Failure:
    result: ResultKey
    count: int = 0
    files: set[str] = field(default_factory=set)  # the files worked on since the failure first came
    spread: bool = False  # a file not worked on before was, since the last report


class RecurringFailures:
    """Per action: how many times in a row its runs failed the same way, other steps between or not.

    A failure that stays while the agent's work spreads to files it had not touched since the
    failure first came is likely one it has set aside (a test that failed before it began) while it
    works on other things: it is not reported then, only when the work between stays on the same
    files (a comment reworded, a line moved back and forth).
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._failures: dict[str, _Failure] = {}

    def feed(
        self, action: str, result: ResultKey, in_a_row: int, new_loop: Callable[[], int]
    ) -> tuple[int, int, Literal["nudge", "pause"]]:
        """Take one run of ``action``: (count, loop id, action) when it is due, else (0, 0, "nudge").

        ``in_a_row`` is how many of these failures came back to back: a streak with nothing between
        is the failing rule's to report, so only one broken by other steps is reported here.
        """
        failures = self._failures
        if not result.failed:
            failures.pop(action, None)  # it works now
            return 0, 0, "nudge"
        known = failures.get(action)
        if known is None or known.result != result:
            if len(failures) >= _MAX_KEPT:
                failures.clear()
            known = failures[action] = _Failure(result)
        known.count += 1
        if known.count % self.budget or in_a_row >= known.count:
            return 0, 0, "nudge"
        spread, known.spread = known.spread, False
        if spread:
            return 0, 0, "nudge"
        return known.count, new_loop(), due_action(known.count, self.budget)

    def worked_on(self, path: str) -> None:
        """The agent worked on ``path`` (read, edited, wrote it): note it for every failure followed."""
        for failure in self._failures.values():
            if path not in failure.files:
                failure.spread = failure.spread or bool(failure.files)
                failure.files.add(path)

    def clear(self) -> None:
        """A person spoke: every count starts afresh."""
        self._failures.clear()


class Redelegations:
    """How many times each brief was handed to a sub-agent since the person last spoke.

    Sub-agents sent out together with one brief (several reviewers, best of three) are a plan, not
    a retry: a brief handed out again while an earlier one with it is still running is not counted.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._briefs: dict[str, int] = {}
        self._running: dict[str, int] = {}  # brief -> sub-agents with it not yet returned
        self._together: set[str] = set()  # briefs handed out to several sub-agents at once

    def called(self, action: str) -> None:
        """A sub-agent was given ``action``'s brief (its result not yet in)."""
        running = self._running
        if running.get(action):
            self._together.add(action)
        elif len(running) >= _MAX_KEPT:
            running.clear()
        running[action] = running.get(action, 0) + 1

    def feed(self, action: str, new_loop: Callable[[], int]) -> tuple[int, int]:
        """Take one delegation's result: (count, loop id) when it is due a nudge, else (0, 0)."""
        left = self._running.pop(action, 0) - 1
        if left > 0:
            self._running[action] = left
        if action in self._together:
            if left <= 0:
                self._together.discard(action)  # the batch is back: a later one alike is a retry again
            return 0, 0
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


class SameAnswers:
    """Per tool: how many queries in a row, each worded anew, brought back the same answer.

    A web search reworded again and again that finds the same pages, a docs lookup asked one way
    and another: the query varies, so no rule about the same action sees it, yet the agent learns
    nothing new. Only calls that differ from the one before in what they ask (``query``,
    ``question``, ``url``...) count, not in what they change: a file written anew answers
    ``File written`` whatever it holds, which says nothing about a loop. Only answers of some
    substance count (two lines or more): ``No matches`` is the same for any query too.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._last: dict[str, tuple[Mapping[str, Any], ResultKey, int]] = {}

    def feed(
        self, name: str, asked: Mapping[str, Any], result: ResultKey, output: str, new_loop: Callable[[], int]
    ) -> tuple[int, int]:
        """Take one result of tool ``name`` called with ``asked``: (count, loop id) when due a nudge, else (0, 0)."""
        last = self._last.get(name)
        if result.failed:
            self._last.pop(name, None)
            return 0, 0
        changed = {k for k in asked.keys() | last[0].keys() if last[0].get(k) != asked.get(k)} if last else set()
        if last is not None and not changed:
            return 0, 0  # the same call again is the repeat rule's; it neither adds nor breaks a run
        # the cheap tests first: most calls change more than a query, or bring back something new
        same = last is not None and changed <= _QUERY_KEYS and last[1] == result and _substantial(output)
        count = last[2] + 1 if same and last is not None else 1
        if name not in self._last and len(self._last) >= _MAX_KEPT:
            self._last.clear()
        self._last[name] = (asked, result, count)
        if count % self.budget:
            return 0, 0
        return count, new_loop()

    def clear(self) -> None:
        """A person spoke: every count starts afresh."""
        self._last.clear()


def _substantial(output: str) -> bool:
    lines = [line for line in output.splitlines() if line.strip()]
    return len(lines) >= 2 and sum(map(len, lines)) >= 80
