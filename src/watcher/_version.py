"""The installed version of watcher (read by the language server without the rest of the package)."""

from __future__ import annotations

__version__ = "0.1.0"
