"""The long-chain benchmark: does a watcher lift an agent's success, and at what corrective overhead?

An agent follows a chain of trace files through a seeded virtual file system full of distractors
(``world``), with three tools whose every call the harness judges OK, WRONG or OFF, with a drift
score and a wrong-read streak (``tools``). The agent is a model behind the official SDKs
(``agent``); when it deviates, a watcher is shown a snapshot and its guidance reaches the agent
as ``[SUPERVISOR]: ...`` (``supervisor``, ``run``), under a retry cap per step and a step limit
that counts watcher steps. Without a server both models are simulated (``policies``,
``simulated``) behind local servers speaking the same APIs. ``suite`` runs conditions
concurrently and resumably; ``results`` computes the figures, the table and the plot.

This package is an adapter: it uses the evaluators, the runtime's fakes and the core; only the
CLI imports it (and ``watcher eval``, for the figures' Wilson interval).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from watcher.bench.policies import SimParams
    from watcher.bench.results import Summary, plot, render_table, summarize, wilson
    from watcher.bench.run import TaskResult, run_task
    from watcher.bench.simulated import SIMULATED_NOTICE
    from watcher.bench.suite import CONDITIONS, SuiteConfig, read_rows, report, run_suite
    from watcher.bench.world import World, generate_world

# Exports load on first use, so the simulated server's child process (``watcher.bench._serve``)
# starts without importing the SDKs.
_EXPORTS = {
    "CONDITIONS": "suite",
    "SIMULATED_NOTICE": "simulated",
    "SimParams": "policies",
    "SuiteConfig": "suite",
    "Summary": "results",
    "TaskResult": "run",
    "World": "world",
    "generate_world": "world",
    "plot": "results",
    "read_rows": "suite",
    "render_table": "results",
    "report": "suite",
    "run_suite": "suite",
    "run_task": "run",
    "summarize": "results",
    "wilson": "results",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'watcher.bench' has no attribute {name!r}")
    return getattr(importlib.import_module(f"watcher.bench.{module}"), name)


__all__ = [
    "CONDITIONS",
    "SIMULATED_NOTICE",
    "SimParams",
    "SuiteConfig",
    "Summary",
    "TaskResult",
    "World",
    "generate_world",
    "plot",
    "read_rows",
    "render_table",
    "report",
    "run_suite",
    "run_task",
    "summarize",
    "wilson",
]
