"""``watcher eval``: does an LLM watcher judge better than the rules? Figures on labelled cases.

``cases`` reads a labelled set (security cases, loop cases, the shared security corpus) and turns
a case into the observations it is run as; ``runner`` replays each through the evaluators,
concurrently within a rate limit, resuming from earlier rows; ``scoring`` turns what the watcher
said into outcomes and figures with Wilson intervals; ``report`` prints the table and draws the plot.
"""

from __future__ import annotations

from watcher.judgment.cases import Case, read_cases, run_as
from watcher.judgment.report import figures, plot, table
from watcher.judgment.runner import RateLimit, Runner, Throttled, read_rows
from watcher.judgment.scoring import Figures, Rate, outcome

__all__ = [
    "Case",
    "Figures",
    "Rate",
    "RateLimit",
    "Runner",
    "Throttled",
    "figures",
    "outcome",
    "plot",
    "read_cases",
    "read_rows",
    "run_as",
    "table",
]
