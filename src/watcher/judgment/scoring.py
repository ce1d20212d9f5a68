"""Scoring what a watcher said about a labelled case, and the figures of many cases with their 95 % intervals.

A run is one case in one form judged by one evaluator. Its *outcome*:

* security: a vulnerable case is ``found`` when the watcher interjected at all, else ``missed``;
  a benign one is a ``false_alarm`` when it interjected, else ``quiet``. A found case with
  labelled lines (not run as a command) is ``located`` when a cited line range overlaps them.
* loop: a stuck case is ``found`` when the first interjection comes at or after the observation
  the loop starts at, ``early`` when it comes before (the watcher cried wolf), ``missed`` when
  none comes; any interjection on a case that is not stuck is a ``false_alarm``.

A run whose model call failed and that never interjected has the outcome ``error``: it judged
nothing, so it counts in no rate (neither as a miss nor as a quiet run), only among the errors.

Intervals are Wilson score intervals (95 %), which stay inside [0, 1] and behave for small counts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from watcher.bench.results import wilson
from watcher.judgment.cases import Case

__all__ = ["Figures", "Rate", "outcome"]


def outcome(case: Case, form: str, first_index: int | None, spans: Sequence[tuple[int, int]]) -> dict[str, Any]:
    """The outcome fields of a run: ``outcome`` and ``located`` (None where it does not apply)."""
    interjected = first_index is not None
    located: bool | None = None
    if case.kind == "loop":
        if not case.positive:
            result = "false_alarm" if interjected else "quiet"
        elif not interjected:
            result = "missed"
        else:
            # ``first_index`` counts observations from 0, ``stuck_from`` from 1
            result = "found" if first_index is not None and first_index + 1 >= (case.stuck_from or 1) else "early"
    elif case.positive:
        result = "found" if interjected else "missed"
        if interjected and case.lines and form != "bash":
            located = any(start <= line <= end for start, end in spans for line in case.lines)
    else:
        result = "false_alarm" if interjected else "quiet"
    return {"outcome": result, "located": located}


@dataclass(frozen=True, slots=True)
class Rate:
    """``k`` of ``n``, with its Wilson interval."""

    k: int
    n: int

    @property
    def value(self) -> float:
        return self.k / self.n if self.n else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.k, self.n)

    def __str__(self) -> str:
        if not self.n:
            return "-"
        low, high = self.interval
        return f"{self.k}/{self.n} {100 * self.value:.0f}% [{100 * low:.0f}-{100 * high:.0f}]"


@dataclass(frozen=True, slots=True)
class Figures:
    """What one evaluator's runs add up to."""

    runs: int
    found: Rate  # of the runs with something to find
    missed: int
    false_alarms: Rate  # of the runs with nothing to find
    early: int  # loop runs alarmed before their loop began
    located: Rate  # of the found runs that can be located
    tokens: float  # per run: input and output
    cost_usd: float  # per run
    latency_s: float  # per run: the sum of its evaluations' latencies
    latency_p95_s: float
    errors: int  # runs with a failed call (those that never interjected are in no rate)

    @classmethod
    def of(cls, rows: Iterable[Mapping[str, Any]]) -> Figures:
        """The figures of ``rows`` (one evaluator's, possibly one form's)."""
        rows = list(rows)
        judged = [r for r in rows if r["outcome"] != "error"]  # a failed call judged nothing
        positive = [r for r in judged if r["positive"]]
        negative = [r for r in judged if not r["positive"]]
        can_locate = [r for r in judged if r["located"] is not None]
        latencies = sorted(float(r["latency_s"]) for r in rows)
        count = len(rows) or 1
        return cls(
            runs=len(rows),
            found=Rate(sum(r["outcome"] == "found" for r in positive), len(positive)),
            missed=sum(r["outcome"] == "missed" for r in positive),
            false_alarms=Rate(sum(r["outcome"] == "false_alarm" for r in negative), len(negative)),
            early=sum(r["outcome"] == "early" for r in positive),
            located=Rate(sum(bool(r["located"]) for r in can_locate), len(can_locate)),
            tokens=sum(r["input_tokens"] + r["output_tokens"] for r in rows) / count,
            cost_usd=sum(r["cost_usd"] for r in rows) / count,
            latency_s=sum(latencies) / count,
            latency_p95_s=latencies[min(len(latencies) - 1, math.ceil(0.95 * len(latencies)) - 1)]
            if latencies
            else 0.0,
            errors=sum(1 for r in rows if r["error"]),
        )
