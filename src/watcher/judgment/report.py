"""The report of ``watcher eval``: a table of figures per evaluator (and per form), and a plot."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from watcher.judgment.scoring import Figures

__all__ = ["figures", "plot", "table"]

Rows = Sequence[Mapping[str, Any]]


def figures(rows: Rows, evaluator: str, form: str | None = None) -> Figures:
    """The figures of one evaluator's rows, of one form or all."""
    return Figures.of(r for r in rows if r["evaluator"] == evaluator and (form is None or r["form"] == form))


def table(rows: Rows, evaluators: Sequence[str], *, loops: bool = False) -> str:
    """One line per evaluator and form: found, missed, false alarms, located (or early), tokens, cost, latency."""
    forms = list(dict.fromkeys(r["form"] for r in rows))
    fourth = "early alarms" if loops else "located"
    head = (
        f"{'evaluator':<28} {'form':<10} {'runs':>4}  {'found [95% CI]':<20} {'missed':>6}  "
        f"{'false alarms [95% CI]':<21} {fourth:<20} {'tokens':>7} {'cost $':>9} {'latency s':>9} {'p95 s':>6} {'errors':>6}"
    )
    lines = [head, "-" * len(head)]
    for name in evaluators:
        for form in [None, *forms] if len(forms) > 1 else [None]:
            f = figures(rows, name, form)
            if not f.runs:
                continue
            fourth_value = str(f.early) if loops else str(f.located)
            lines.append(
                f"{name if form is None else '':<28} {form or 'all':<10} {f.runs:>4}  {f.found!s:<20} {f.missed:>6}  "
                f"{f.false_alarms!s:<21} {fourth_value:<20} {f.tokens:>7.0f} {f.cost_usd:>9.5f} {f.latency_s:>9.3f} "
                f"{f.latency_p95_s:>6.2f} {f.errors:>6}"
            )
    lines.append(
        "found: runs with something to find where the watcher interjected; false alarms: runs with nothing to find "
        "where it did; "
        + (
            "early: stuck runs alarmed before the loop began"
            if loops
            else "located: found runs whose cited lines overlap the labelled lines"
        )
        + "; errors: runs with a failed model call (one that never interjected judged nothing and is in no rate)"
        + "; tokens, cost and latency per run; intervals are Wilson 95 %."
    )
    return "\n".join(lines)


def plot(rows: Rows, evaluators: Sequence[str], path: Path, *, title: str, loops: bool = False) -> None:
    """Found, false-alarm and located (or early) rates per evaluator, with their 95 % intervals (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measures = ["found", "false alarms"] + ([] if loops else ["located"])
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / max(1, len(evaluators))
    for i, name in enumerate(evaluators):
        f = figures(rows, name)
        rates = [f.found, f.false_alarms] + ([] if loops else [f.located])
        values = [r.value for r in rates]
        low = [r.value - r.interval[0] if r.n else 0.0 for r in rates]
        high = [r.interval[1] - r.value if r.n else 0.0 for r in rates]
        xs = [m + (i - (len(evaluators) - 1) / 2) * width for m in range(len(measures))]
        ax.bar(xs, values, width, yerr=[low, high], capsize=4, label=name)
    ax.set_xticks(range(len(measures)), measures)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share of runs (95 % Wilson interval)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
