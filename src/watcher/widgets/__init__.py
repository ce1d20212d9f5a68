"""Live ipywidgets panels for watchers, built from core widgets only (no front-end from a CDN).

``PanelState`` (framework-free) holds what a panel shows; ``WatcherPanel`` is the thin widget
shell over it. The kernel extension creates one panel per attached watcher.
"""

from __future__ import annotations

from watcher.widgets.panel import MAX_FLUSHES_PER_S, PanelActions, WatcherPanel
from watcher.widgets.state import PanelState, PanelView, Pending
from watcher.widgets.timeline import Mark, timeline_svg

__all__ = [
    "MAX_FLUSHES_PER_S",
    "Mark",
    "PanelActions",
    "PanelState",
    "PanelView",
    "Pending",
    "WatcherPanel",
    "timeline_svg",
]
