"""The notebook as a parent session: how a person at a notebook receives an interjection.

A notebook has no conversation to inject into, so delivery means *showing*:

1. at once, in the watcher's panel (its delivered badge), from the runtime thread; and
2. as a short block printed under the output of the next cell that finishes (the cell hook
   drains ``take_unshown`` on the kernel's main thread), so the message lands in the notebook's
   own record even where widgets do not render (nbclient, nbval, a saved ``.ipynb``).

Urgent interjections are shown the same way: a notebook is never interrupted by its watcher
(``interrupt`` is the port's no-op). ``inject`` answers ``delivered``: the panel shows it at once.
"""

from __future__ import annotations

import threading

from watcher.core.interjection import Interjection, Origin
from watcher.core.redact import redact
from watcher.runtime.fates import DELIVERED
from watcher.runtime.session import InjectionOutcome, RecordingSession

__all__ = ["NotebookSession", "render_interjection"]

_ICONS = {"hint": "💡", "warning": "⚠️", "critical": "🛑"}


def render_interjection(interjection: Interjection) -> str:
    """The plain-text block printed under a cell: who speaks, how urgently, where, what."""
    where = ", ".join(loc.render() for loc in interjection.locations)
    speaker = interjection.speaker
    who = f"watcher {speaker.watcher}" if not speaker.by_person else f"a person, via {speaker.person}"
    head = f"{_ICONS.get(interjection.severity, '•')} [{who}] {interjection.severity}"
    if interjection.urgent:
        head += ", urgent"
    head += f" ({interjection.action}{' @ ' + where if where else ''})"
    body = "\n".join("    " + line for line in redact(interjection.content).splitlines())
    return f"{head}\n{body}"


class NotebookSession(RecordingSession):
    """The kernel's cells as one parent session; thread-safe between the runtime and main threads.

    ``end()`` (on unload) makes later interjections undeliverable.
    """

    kind = "notebook session"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._unshown: list[Interjection] = []
        self._lock = threading.Lock()

    async def hand_over(self, interjection: Interjection, origin: Origin) -> InjectionOutcome:
        """Show ``interjection``: in the panel at once (so ``delivered``), under the next cell later."""
        with self._lock:
            self.delivered.append(interjection)
            self.origins.append(origin)
            self._unshown.append(interjection)
        return DELIVERED

    def take_unshown(self) -> list[Interjection]:
        """Interjections delivered since the last call, oldest first (called after each cell)."""
        with self._lock:
            out, self._unshown = self._unshown, []
        return out
