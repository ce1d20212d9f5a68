"""The pure domain of watcher: observations, interjections, decisions, the protocol, rules.

Nothing here does IO or imports asyncio, sqlite3, Jupyter, LSP or LLM libraries (an import-linter
contract checks it), so the runtime and every adapter share exactly one model of what a watcher is.
Modules import ``watcher.core.*`` paths only, never the root ``watcher`` package.
"""

from __future__ import annotations

__all__: list[str] = []  # the core is used by its module paths (``watcher.core.interjection``...), not re-exported
