"""watcher: a second reasoning process that supervises an agent run or a notebook and steps in.

Layers, from the inside out (an import-linter contract in pyproject.toml enforces them):

- ``watcher.core``: the pure domain: observations, interjections, the evaluation protocol, roles' base.
- ``watcher.roles``: offline rule-based roles (errors, security, stuck).
- ``watcher.evaluators``: rules, callables, LLM evaluators.
- ``watcher.runtime``: the asyncio engine, event bus and SQLite journal.
- adapters: ``agents`` (agent runs, replay), ``kernel_ext`` + ``widgets`` (Jupyter),
  ``lsp_bridge`` (editors), ``cli``, ``testing`` (public fakes). Jupyter and LSP never import
  each other; they meet in the journal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from watcher.core.errors import WatcherError
from watcher.core.interjection import Interjection, Location
from watcher.core.protocol import format_evaluation_prompt, parse_interjection

if TYPE_CHECKING:
    import polars

__all__ = [
    "Interjection",
    "Location",
    "WatcherError",
    "agent",
    "format_evaluation_prompt",
    "history",
    "load_ipython_extension",
    "parse_interjection",
    "unload_ipython_extension",
]

__version__ = "0.1.0"


def history(journal: Any = None, *, session: str | None = None, watcher: str | None = None) -> polars.DataFrame:
    """Evaluations and interjections recorded in the journal, as a polars DataFrame."""
    from watcher.runtime.history import history as _history

    return _history(journal, session=session, watcher=watcher)


def agent(prompt: str, **options: Any) -> Any:
    """Start a supervised agent run (``watcher.agents.agent``); ``result = await run`` waits for it.

    In a notebook with ``%load_ext watcher`` the run also gets the notebook's watchers, runs on the
    extension's runtime thread, and streams its output into the cell.
    """
    import importlib
    import sys

    kernel_ext = sys.modules.get("watcher.kernel_ext")
    ext = kernel_ext.current() if kernel_ext is not None else None
    if ext is not None:
        return ext.agent(prompt, **options)
    return importlib.import_module("watcher.agents").agent(prompt, **options)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext watcher``: the kernel extension (imported only now, so ``import watcher`` stays light)."""
    _kernel_ext().load_ipython_extension(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext watcher``: remove the hooks and magics and stop the runtime thread."""
    _kernel_ext().unload_ipython_extension(ipython)


def _kernel_ext() -> Any:
    # Imported by name at call time: the root package is a facade that editors' language servers
    # import too, and they must never load IPython or widgets (import-linter follows static imports).
    import importlib

    return importlib.import_module("watcher.kernel_ext")
