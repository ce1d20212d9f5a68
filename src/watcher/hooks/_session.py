"""A CLI session seen through its hooks, and how one is configured.

A hooked session cannot be spoken to whenever a watcher likes: the only channel back into the
CLI is the answer to its next hook call. ``inject`` therefore answers ``queued``: the
interjection waits in an outbox, and the desk journals it ``delivered`` when an answer carries it
to the CLI (or ``undeliverable`` when the session ends first).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from watcher.core.errors import ConfigurationError
from watcher.core.interjection import Interjection, Origin
from watcher.runtime.fates import QUEUED
from watcher.runtime.session import InjectionOutcome, Parcel, Session

__all__ = ["DEFAULT_ROLES", "HookConfig", "HookedSession", "call_signature"]

DEFAULT_ROLES = ("security", "stuck", "errors")


@dataclass(frozen=True, slots=True)
class HookConfig:
    """How the hooks of one install judge a session (the options on the hook's command line).

    ``max_stop_blocks`` caps how often one turn is kept going at ``Stop`` (the CLI caps consecutive
    blocks itself, at 8); ``budget_s`` is a hook call's time budget, after which it answers nothing.
    """

    agent: str = "claude"
    roles: tuple[str, ...] = DEFAULT_ROLES
    mode: str = "autonomous"
    evaluator: str = "rules"
    max_stop_blocks: int = 2
    budget_s: float = 2.0
    journal: str | None = None

    def __post_init__(self) -> None:
        if self.mode not in ("autonomous", "manual"):
            raise ConfigurationError(f"hook mode {self.mode!r} is not autonomous or manual")
        if self.max_stop_blocks < 0:
            raise ConfigurationError(f"--max-stop-blocks must be 0 or more, not {self.max_stop_blocks}")

    def to_dict(self) -> dict[str, Any]:
        """The JSON form the thin client sends to the daemon."""
        return {
            "agent": self.agent,
            "roles": list(self.roles),
            "mode": self.mode,
            "evaluator": self.evaluator,
            "max_stop_blocks": self.max_stop_blocks,
            "budget_s": self.budget_s,
            "journal": self.journal,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HookConfig:
        """Inverse of ``to_dict``; missing keys take the defaults."""
        return cls(
            agent=str(data.get("agent") or "claude"),
            roles=tuple(str(r) for r in data.get("roles") or DEFAULT_ROLES),
            mode=str(data.get("mode") or "autonomous"),
            evaluator=str(data.get("evaluator") or "rules"),
            max_stop_blocks=int(data.get("max_stop_blocks", 2)),
            budget_s=float(data.get("budget_s") or 2.0),
            journal=data.get("journal") or None,
        )


def call_signature(name: str, tool_input: Mapping[str, Any]) -> str:
    """A tool call's identity for remembering a denial: the tool and its input, whitespace-insensitive."""
    return name + ":" + " ".join(json.dumps(tool_input, sort_keys=True, ensure_ascii=False, default=str).split())


class HookedSession(Session):
    """A parent session that is a CLI calling hooks: what it is given waits for the next answer."""

    kind = "hooked session"

    def __init__(self, name: str, *, outbox: Sequence[Interjection] = (), stop_blocks: dict[str, int] | None = None,
                 paused: str = "") -> None:  # fmt: skip
        super().__init__(name)
        self.inbox = [Parcel.of(i) for i in outbox]  # read back from the journal: queued, not yet carried
        self.stop_blocks: dict[str, int] = dict(stop_blocks or {})  # turn -> Stop answers that blocked
        self.denied: dict[str, str] = {}  # call signature -> the denial reason
        self.paused = paused  # a pause the CLI has not honoured yet: the next tool call is stopped with it

    async def hand_over(self, interjection: Interjection, origin: Origin) -> InjectionOutcome:
        """Queue ``interjection`` for the next hook answer that can carry it (the desk settles it)."""
        said = interjection if interjection.origin is not None else replace(interjection, origin=origin)
        self.inbox.append(Parcel.of(said))
        return QUEUED

    async def interrupt(self) -> None:
        """Nothing to cut off: a hook speaks only when the CLI calls it (an urgent finding denies the call)."""
