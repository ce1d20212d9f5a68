"""Results: per-condition figures with a Wilson 95 % interval, the summary table and the plot.

- **success rate**: tasks that submitted the right token, with the Wilson score interval (sound
  at small counts and at 0 % or 100 %, where the normal approximation is not);
- **mean steps**: agent and watcher steps per task;
- **corrective overhead**: watcher steps plus the agent's correction turns, as a share of all steps;
- interventions per task, retry-cap releases, watcher failures, tokens and cost (both models).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watcher.core.errors import ConfigurationError

__all__ = ["Summary", "by_length", "plot", "render_table", "summarize", "wilson"]

_ORDER = ("none", "guided", "blind", "rules")


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval for ``successes`` out of ``n`` (95 % for the default ``z``)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # rounding can put a bound a hair inside p at 0 % or 100 %; the interval always contains p
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


@dataclass(frozen=True, slots=True)
class Summary:
    """One condition's figures."""

    condition: str
    tasks: int
    successes: int
    low: float
    high: float
    mean_steps: float
    overhead: float
    interventions_per_task: float
    cap_releases: int
    watcher_failures: int
    tokens: int
    cost_usd: float

    @property
    def rate(self) -> float:
        return self.successes / self.tasks if self.tasks else 0.0


def _summary(condition: str, rows: Sequence[Mapping[str, Any]]) -> Summary:
    n = len(rows)
    wins = sum(bool(r["success"]) for r in rows)
    steps = sum(r["steps"] for r in rows)
    corrective = sum(r["watcher_steps"] + r["correction_steps"] for r in rows)
    tokens = sum(
        r["input_tokens"] + r["output_tokens"] + r["watcher_input_tokens"] + r["watcher_output_tokens"] for r in rows
    )
    low, high = wilson(wins, n)
    return Summary(
        condition=condition,
        tasks=n,
        successes=wins,
        low=low,
        high=high,
        mean_steps=steps / n if n else 0.0,
        overhead=corrective / steps if steps else 0.0,
        interventions_per_task=sum(r["interventions"] for r in rows) / n if n else 0.0,
        cap_releases=sum(r["cap_releases"] for r in rows),
        watcher_failures=sum(r["watcher_failures"] for r in rows),
        tokens=tokens,
        cost_usd=sum(r["cost_usd"] for r in rows),
    )


def _grouped(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["condition"]].append(row)
    order = {c: i for i, c in enumerate(_ORDER)}
    return dict(sorted(groups.items(), key=lambda kv: order.get(kv[0], len(order))))


def summarize(rows: Iterable[Mapping[str, Any]]) -> list[Summary]:
    """One summary per condition, in the order none, guided, blind, rules."""
    return [_summary(c, rs) for c, rs in _grouped(rows).items()]


def by_length(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[tuple[int, Summary]]]:
    """Per condition, a summary per chain length (ascending)."""
    out: dict[str, list[tuple[int, Summary]]] = {}
    for condition, rs in _grouped(rows).items():
        lengths: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
        for r in rs:
            lengths[r["chain_length"]].append(r)
        out[condition] = [(n, _summary(condition, lengths[n])) for n in sorted(lengths)]
    return out


def render_table(summaries: Sequence[Summary]) -> str:
    """The summary table as aligned text."""
    head = (
        "condition",
        "tasks",
        "success",
        "95% CI",
        "steps",
        "overhead",
        "interv/task",
        "cap rel",
        "w fail",
        "tokens",
        "cost $",
    )
    lines = [
        (
            s.condition,
            str(s.tasks),
            f"{s.rate:6.1%}",
            f"{s.low:.1%}–{s.high:.1%}",
            f"{s.mean_steps:.1f}",
            f"{s.overhead:.1%}",
            f"{s.interventions_per_task:.2f}",
            str(s.cap_releases),
            str(s.watcher_failures),
            str(s.tokens),
            f"{s.cost_usd:.4f}",
        )
        for s in summaries
    ]
    widths = [max(len(r[i]) for r in [head, *lines]) for i in range(len(head))]

    def fmt(row: Sequence[str]) -> str:
        cells = (cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True)))
        return "  ".join(cells)

    return "\n".join([fmt(head), "  ".join("-" * w for w in widths), *map(fmt, lines)])


def plot(rows: Iterable[Mapping[str, Any]], path: Path, *, title: str = "") -> Path:
    """Success rate (with its interval) and corrective overhead against chain length, per condition."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ConfigurationError("--plot needs matplotlib: pip install 'watcher-agents[jupyter]'") from exc
    figure = Figure(figsize=(10, 4), layout="constrained")
    success, overhead = figure.subplots(1, 2)
    markers = {"none": "o", "guided": "s", "blind": "^", "rules": "D"}
    for k, (condition, points) in enumerate(by_length(rows).items()):
        # conditions side by side at each length, so equal figures do not hide each other
        xs = [n + (k - 1.5) * 0.12 for n, _ in points]
        rates = [s.rate for _, s in points]
        errors = [[max(0.0, s.rate - s.low) for _, s in points], [max(0.0, s.high - s.rate) for _, s in points]]
        marker = markers.get(condition, "o")
        success.errorbar(xs, rates, yerr=errors, marker=marker, capsize=3, label=condition)
        overhead.plot(xs, [s.overhead for _, s in points], marker=marker, label=condition)
    lengths = sorted({n for points in by_length(rows).values() for n, _ in points})
    success.set_xticks(lengths)
    overhead.set_xticks(lengths)
    success.set(xlabel="chain length", ylabel="success rate (95% Wilson CI)", ylim=(0, 1.05), title="success")
    overhead.set(xlabel="chain length", ylabel="watcher + correction steps / all steps", title="corrective overhead")
    success.legend()
    if title:
        figure.suptitle(title, fontsize=9)
    figure.savefig(path, dpi=100)
    return path
