"""watcher: a second reasoning process that supervises an agent run or a notebook and steps in.

Layers, from the inside out (an import-linter contract in pyproject.toml enforces them):

- ``watcher.core``: the pure domain: observations, interjections, the evaluation protocol, roles' base.
- ``watcher.roles``: offline rule-based roles (errors, security, stuck).
- ``watcher.evaluators``: rules, callables, LLM evaluators.
- ``watcher.runtime``: the asyncio engine, event bus and SQLite journal.
- adapters: ``agents`` (agent runs, replay), ``kernel_ext`` + ``widgets`` (Jupyter),
  ``lsp_bridge`` (editors), ``cli``, ``testing`` (public fakes). Jupyter and LSP never import
  each other; they meet in the journal.

``watcher.fleet(tasks, ...)`` starts a supervised fleet of agent tasks (in a notebook, with a live
dashboard); ``watcher.fleet`` is also the fleet's package, imported on first use.

This package exports what a user needs to attach watchers (``agent``, ``spec_for_role``,
``WatcherSpec``), to write an evaluator (``EvaluationRequest``, ``EvaluationResult``,
``CallableEvaluator``, ``Continue``, ``Interject``, ``Interjection``, ``Location``) and to replay
and read what happened (``replay``, ``read_transcript``, ``history``, ``Journal``).
"""

from __future__ import annotations

from watcher._version import __version__

TYPE_CHECKING = False  # not typing's: importing typing costs every hook call (a process each)
if TYPE_CHECKING:
    from typing import Any

    from watcher.agents import AgentRun, ReplayResult, agent, read_transcript, replay
    from watcher.core.answers import parse_interjection
    from watcher.core.errors import WatcherError
    from watcher.core.evaluation import EvaluationRequest, EvaluationResult, Evaluator
    from watcher.core.interjection import Continue, Interject, Interjection, Location, Origin
    from watcher.core.shortening import format_evaluation_prompt
    from watcher.core.spec import WatcherSpec
    from watcher.evaluators import CallableEvaluator, make_evaluator
    from watcher.roles import spec_for_role
    from watcher.runtime import Journal
    from watcher.runtime.history import history

__all__ = [
    "AgentRun",
    "CallableEvaluator",
    "Continue",
    "EvaluationRequest",
    "EvaluationResult",
    "Evaluator",
    "Interject",
    "Interjection",
    "Journal",
    "Location",
    "Origin",
    "ReplayResult",
    "WatcherError",
    "WatcherSpec",
    "__version__",
    "agent",
    "format_evaluation_prompt",
    "history",
    "load_ipython_extension",
    "make_evaluator",
    "parse_interjection",
    "read_transcript",
    "replay",
    "spec_for_role",
    "unload_ipython_extension",
]

# Loaded on first use, so ``import watcher`` stays light: a hook without its daemon imports
# ``watcher.guard`` and nothing else of watcher.
_LAZY = {
    "WatcherError": "watcher.core.errors",
    "EvaluationRequest": "watcher.core.evaluation",
    "EvaluationResult": "watcher.core.evaluation",
    "Evaluator": "watcher.core.evaluation",
    "Continue": "watcher.core.interjection",
    "Interject": "watcher.core.interjection",
    "Interjection": "watcher.core.interjection",
    "Location": "watcher.core.interjection",
    "Origin": "watcher.core.interjection",
    "format_evaluation_prompt": "watcher.core.shortening",
    "parse_interjection": "watcher.core.answers",
    "WatcherSpec": "watcher.core.spec",
    "AgentRun": "watcher.agents",
    "ReplayResult": "watcher.agents",
    "agent": "watcher.agents",
    "read_transcript": "watcher.agents",
    "replay": "watcher.agents",
    "CallableEvaluator": "watcher.evaluators",
    "make_evaluator": "watcher.evaluators",
    "spec_for_role": "watcher.roles",
    "Journal": "watcher.runtime",
    "history": "watcher.runtime.history",
}


def __getattr__(name: str) -> Any:
    import importlib  # here, not at the top: importlib loads warnings, which a hook call never needs

    if name == "fleet":  # the subpackage, callable: ``watcher.fleet(tasks, ...)`` starts a fleet
        return importlib.import_module("watcher.fleet")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'watcher' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext watcher``: the kernel extension (imported only now, so ``import watcher`` stays light)."""
    import importlib

    importlib.import_module("watcher.kernel_ext").load_ipython_extension(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext watcher``: remove the hooks and magics and stop the runtime thread."""
    import importlib

    importlib.import_module("watcher.kernel_ext").unload_ipython_extension(ipython)
