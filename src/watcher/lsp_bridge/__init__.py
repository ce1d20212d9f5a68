"""``watcher-lsp``: a running watcher's diagnoses and nudges in any LSP editor.

The server follows the journal (``watcher.runtime.journal``) that kernels, agent runs and replays
write, and never imports them: findings with a location become push diagnostics on files and
notebook cells, with code actions to inject, apply a suggested fix or dismiss; the rest become
messages. Commands travel back through the journal's ``commands`` table to the process that owns
the session. Start it with ``watcher-lsp`` (stdio) or ``watcher-lsp --tcp --port N``.
"""

from __future__ import annotations

from watcher.lsp_bridge.server import WatcherLanguageServer, create_server

__all__ = ["WatcherLanguageServer", "create_server"]
