"""Tool calls waiting for their results, for the ``stuck`` role: pairing, and results that never come.

A step of a loop is a tool call with its result, so a call waits here until its result arrives
(matched by call id; parallel calls A, B, result A, result B pair correctly). Some harnesses and
logs never report results: they record the calls only (a detector that checks calls before they
run, a log whose results are lost). That shows when the agent makes a call identical to one still
waiting: nobody repeats a call whose answer is still coming, so the results are taken as lost.
From then on the waiting calls, and every new call, are steps at once with a *lost* result
(identical calls with lost results are the same step), until a result does arrive for a call
counted that way: the harness reports results after all, and pairing resumes. A harness error
(a timeout) is the answer the latest waiting call got: it waits no more.
"""

from __future__ import annotations

from collections import Counter

from watcher.core.observations import ToolCall, ToolResult
from watcher.roles._stuck_actions import action_key

__all__ = ["PendingCalls", "Step", "unanswered"]

Step = tuple[ToolCall, ToolResult, str]  # a call, its result and its action key
_LOST = "(no result reported)"
_MAX_OPEN = 512  # calls waiting for a result, and calls counted without one, at most


def unanswered(result: ToolResult) -> bool:
    """Whether ``result`` stands for one that was never reported."""
    return result.output is _LOST


class PendingCalls:
    """The calls still waiting for a result, and whether this harness reports results at all."""

    def __init__(self) -> None:
        self._open: dict[str, tuple[ToolCall, str]] = {}  # call id (or a serial) -> call, action key
        self._open_keys: Counter[str] = Counter()
        self._last: str | None = None  # the latest call still waiting: what a result without an id answers
        self._counted: dict[str, None] = {}  # calls counted with a lost result (ordered, bounded)
        self._last_counted = False
        self._lost = False
        self._serial = 0

    def call(self, call: ToolCall) -> list[Step]:
        """Take a call; the steps it completes (none while results are expected)."""
        key = action_key(call.name, call.input)
        if not self._lost and not self._open_keys[key]:
            self._serial += 1
            ref = call.id or f"\x00{self._serial}"
            if len(self._open) >= _MAX_OPEN:
                self._close(next(iter(self._open)))
            if ref in self._open:  # a reused id: the earlier call is superseded
                self._close(ref)
            self._open[ref] = (call, key)
            self._open_keys[key] += 1
            self._last, self._last_counted = ref, False
            return []
        self._lost = True  # the same call again while it still waits: results are not reported
        steps = [(c, ToolResult(tool_call_id=c.id, output=_LOST), k) for c, k in self._open.values()]
        steps.append((call, ToolResult(tool_call_id=call.id, output=_LOST), key))
        for waiting, _ in self._open.values():
            self._count(waiting.id)
        self._count(call.id)
        self._open.clear()
        self._open_keys.clear()
        self._last, self._last_counted = None, True
        return steps

    def result(self, result: ToolResult) -> tuple[ToolCall, str] | None:
        """The call a result answers and its action key; None when the call was already counted."""
        ref = result.tool_call_id
        if (ref and ref in self._counted) or (not ref and self._last_counted):
            self._counted.pop(ref, None)
            self._lost = self._last_counted = False  # results do arrive: pair them again
            return None
        found = self._close(ref) if ref else None
        if found is None and self._last is not None:  # no id, or one we never saw: the latest call
            found = self._close(self._last)
        self._last = None
        if found is None and not self._lost:
            return ToolCall(name="tool"), action_key("tool", {})
        return found

    def failed(self) -> None:
        """The harness failed (a timeout, a format error): the latest call waiting got that for its result."""
        if self._last is not None:
            self._close(self._last)
            self._last = None

    def _close(self, ref: str) -> tuple[ToolCall, str] | None:
        found = self._open.pop(ref, None)
        if found is not None:
            self._open_keys[found[1]] -= 1
            if not self._open_keys[found[1]]:
                del self._open_keys[found[1]]
        return found

    def _count(self, ref: str) -> None:
        if ref:
            if len(self._counted) >= _MAX_OPEN:
                self._counted.pop(next(iter(self._counted)))
            self._counted[ref] = None
