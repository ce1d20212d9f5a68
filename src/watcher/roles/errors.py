"""The ``errors`` role: the same exception repeating across cells or tool results.

Re-running code that fails the same way rarely fixes it. When one exception type (with the same
message shape) turns up ``threshold`` times in the buffered observations, the watcher nudges the
parent to read the error and change approach, pointing at the last place it was raised.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from watcher.core.interjection import Continue, Decision, Interject, Interjection, Location
from watcher.core.observations import CellExecuted, Observation, ToolResult
from watcher.core.rules import Role
from watcher.core.spec import Triggers

__all__ = ["ErrorsRole"]

_EXC = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning))\b(?::\s*(.*))?")
_NUMBERS = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class _Failure:
    signature: str
    ename: str
    evalue: str
    where: Location | None


def _failure(obs: Observation) -> _Failure | None:
    if isinstance(obs, CellExecuted) and obs.error is not None:
        err = obs.error
        where = Location(cell_id=obs.cell_id, start_line=err.lineno or 1) if obs.cell_id else None
        return _Failure(_signature(err.ename, err.evalue), err.ename, err.evalue, where)
    if isinstance(obs, ToolResult) and obs.is_error:
        matches = _EXC.findall(obs.output)
        if not matches:
            return None
        ename, evalue = matches[-1]  # the last exception in a traceback is the one that escaped
        return _Failure(_signature(ename, evalue), ename, evalue, None)
    return None


def _signature(ename: str, evalue: str) -> str:
    """Exception type plus its message with numbers and quoted names blurred."""
    shape = _NUMBERS.sub(
        "N", re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", evalue.strip().splitlines()[0] if evalue.strip() else "")
    )
    return f"{ename}: {shape}"


class ErrorsRole(Role):
    """Nudges when the same exception keeps coming back."""

    name = "errors"
    description = "Error-loop watcher"
    brief = (
        "Watch for the same exception repeating across cells or tool results. Re-running code that "
        "fails the same way will not fix it: say which error repeats and suggest reading it and "
        "changing approach."
    )
    triggers = Triggers(on=frozenset({"error", "cell_executed", "tool_result"}))
    threshold = 3

    def __init__(self) -> None:
        self._reported: dict[str, int] = {}

    def evaluate(self, observations: Sequence[Observation], new: int) -> Decision:
        counts: dict[str, list[_Failure]] = {}
        for obs in observations:
            failure = _failure(obs)
            if failure is not None:
                counts.setdefault(failure.signature, []).append(failure)
        for obs in reversed(observations[len(observations) - new :]):  # point at the latest repeat
            failure = _failure(obs)
            if failure is None:
                continue
            seen = counts[failure.signature]
            level = len(seen) // self.threshold  # report at 3, 6, 9, ... repeats
            if level == 0 or self._reported.get(failure.signature, 0) >= level:
                continue
            self._reported[failure.signature] = level
            urgent = len(seen) >= 2 * self.threshold
            message = (
                f"{failure.ename} has now been raised {len(seen)} times"
                f" ({failure.ename}: {failure.evalue.strip()[:160] or 'no message'}). "
                "Running the same code again will not change the result: read the traceback, check the "
                "inputs at that line, and try a different approach."
            )
            return Interject(
                Interjection(
                    content=message,
                    urgent=urgent,
                    severity="critical" if urgent else "warning",
                    action="nudge",
                    locations=(failure.where,) if failure.where else (),
                )
            )
        return Continue(note=f"{sum(map(len, counts.values()))} failures seen, none repeating {self.threshold} times")
