"""The offline demo ``make demo`` runs: replays, one spawn, a short fleet, the example notebooks.

``python -m watcher.demo`` replays recorded sessions through the offline watchers;
``watcher.demo.spawn``, ``watcher.demo.fleet`` and ``watcher.demo.notebooks`` are the other
parts. It sits above every other layer (it drives the CLI's defaults too) and nothing imports it.
"""

from __future__ import annotations

__all__: list[str] = []
