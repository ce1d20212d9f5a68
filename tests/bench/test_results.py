"""The figures: Wilson intervals, per-condition summaries, the table and the plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from watcher.bench.results import by_length, plot, render_table, summarize, wilson


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [(0, 10, 0.0, 0.2775), (5, 10, 0.2366, 0.7634), (10, 10, 0.7225, 1.0), (45, 50, 0.7864, 0.9565)],
)
def test_wilson_interval(k: int, n: int, low: float, high: float) -> None:
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(low, abs=1e-4) and hi == pytest.approx(high, abs=1e-4)


def _row(
    condition: str, task: int, success: bool, steps: int, watcher: int, corrections: int, length: int = 4
) -> dict[str, Any]:
    return {
        "condition": condition,
        "task": task,
        "chain_length": length,
        "success": success,
        "steps": steps,
        "watcher_steps": watcher,
        "correction_steps": corrections,
        "interventions": watcher,
        "cap_releases": 0,
        "watcher_failures": 0,
        "input_tokens": 100,
        "output_tokens": 10,
        "watcher_input_tokens": 50 * watcher,
        "watcher_output_tokens": 5 * watcher,
        "cost_usd": 0.0,
    }


def test_summaries_per_condition_in_order() -> None:
    rows = [_row("rules", 0, True, 10, 2, 2), _row("none", 0, False, 12, 0, 0), _row("none", 1, True, 8, 0, 0)]
    rules, none = summarize(rows)[1], summarize(rows)[0]
    assert none.condition == "none" and none.rate == 0.5 and none.mean_steps == 10 and none.overhead == 0
    assert rules.overhead == pytest.approx(0.4) and rules.interventions_per_task == 2 and rules.tokens == 220
    table = render_table(summarize(rows))
    assert table.splitlines()[0].split()[:3] == ["condition", "tasks", "success"]
    assert "50.0%" in table and "40.0%" in table


def test_plot_writes_a_png(tmp_path: Path) -> None:
    rows = [
        _row(c, i, i % 2 == 0, 10, 1 if c != "none" else 0, 1 if c != "none" else 0, length=4 + 4 * (i % 3))
        for c in ("none", "guided")
        for i in range(6)
    ]
    assert [n for n, _ in by_length(rows)["guided"]] == [4, 8, 12]
    out = plot(rows, tmp_path / "r.png", title="simulated models")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("n", [1, 7, 24, 200, 1000])
def test_the_interval_always_contains_the_rate(n: int) -> None:
    for k in (0, 1, n // 2, n - 1, n):
        low, high = wilson(k, n)
        assert 0.0 <= low <= k / n <= high <= 1.0
