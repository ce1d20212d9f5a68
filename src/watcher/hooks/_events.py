"""The hooks' event: one per CLI hook call, journaled by the desk and read by ``watcher hooks status``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from watcher.runtime.events import Event

__all__ = ["HookEvent"]


@dataclass(frozen=True, slots=True, kw_only=True)
class HookEvent(Event):
    """Emitted once per CLI hook call (``watcher-hook``): the event, what it answered, how fast."""

    kind: ClassVar[str] = "hook"
    event: str
    answer: str  # "none" | "deny" | "context" | "block" | "late" (past the budget: nothing said)
    latency_ms: float = 0.0
    turn: str = ""
    detail: str = ""
    carried: tuple[str, ...] = ()  # ids of the interjections the answer took to the CLI
    pause: str = ""  # a pause the CLI ignored at this event: the next tool call is stopped with it
    problems: tuple[str, ...] = ()  # evaluators that could not be made or failed lately (``hooks status``)
