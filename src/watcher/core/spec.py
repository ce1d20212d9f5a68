"""The watcher spec: who a watcher is, what it watches for, when it evaluates, how it may speak."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, get_args

from watcher.core.errors import ConfigurationError

__all__ = ["AUTHORITIES", "BREAKPOINTS", "MODES", "Authority", "Breakpoint", "Caps", "Mode", "Triggers", "WatcherSpec"]

Authority: TypeAlias = Literal["supervisor", "peer"]
Mode: TypeAlias = Literal["autonomous", "manual"]
Breakpoint: TypeAlias = Literal["turn_done", "tool_result", "error", "cell_executed", "idle", "every_n"]
AUTHORITIES: tuple[Authority, ...] = get_args(Authority)
MODES: tuple[Mode, ...] = get_args(Mode)
BREAKPOINTS: tuple[Breakpoint, ...] = get_args(Breakpoint)


@dataclass(frozen=True, slots=True)
class Triggers:
    """The natural breakpoints at which a watcher evaluates its buffered observations.

    ``on`` names the observation-driven breakpoints; ``every_n`` also evaluates after that many
    observations whatever they are (0: never); ``idle_s`` evaluates when the parent has been quiet
    that long with unevaluated observations (None: never).
    """

    on: frozenset[Breakpoint] = frozenset({"turn_done", "tool_result", "error", "cell_executed"})
    every_n: int = 0
    idle_s: float | None = None


@dataclass(frozen=True, slots=True)
class Caps:
    """Limits on how often a watcher may speak.

    ``max_interjections_per_turn`` counts interjections between two ``done`` observations;
    ``cooldown_s`` is the least time between two interjections (urgent ones ignore it);
    ``buffer_size`` bounds the observations kept for evaluation; ``timeout_s`` bounds one evaluation.
    """

    max_interjections_per_turn: int = 3
    cooldown_s: float = 0.0
    buffer_size: int = 200
    timeout_s: float = 60.0

    def __post_init__(self) -> None:
        # a zero, negative or nan timeout fails every evaluation; an infinite one bounds none
        if not (isinstance(self.timeout_s, int | float) and math.isfinite(self.timeout_s) and self.timeout_s > 0):
            raise ConfigurationError(
                f"a watcher's timeout_s must be a finite number of seconds above 0, got {self.timeout_s!r}"
            )
        if not (isinstance(self.cooldown_s, int | float) and math.isfinite(self.cooldown_s) and self.cooldown_s >= 0):
            raise ConfigurationError(
                f"a watcher's cooldown_s must be a finite number of seconds, 0 or more, got {self.cooldown_s!r}"
            )
        for name in ("max_interjections_per_turn", "buffer_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(f"a watcher's {name} must be a whole number of at least 1, got {value!r}")


@dataclass(frozen=True, slots=True)
class WatcherSpec:
    """A named role with a brief, triggers, a mode and caps."""

    name: str
    role: str
    description: str = ""
    authority: Authority = "supervisor"
    brief: str = ""
    triggers: Triggers = field(default_factory=Triggers)
    mode: Mode = "autonomous"
    caps: Caps = field(default_factory=Caps)

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ConfigurationError("a watcher needs a non-empty name")
        if self.authority not in AUTHORITIES:
            raise ConfigurationError(
                f"watcher {self.name!r}: authority {self.authority!r} is not one of {', '.join(AUTHORITIES)}"
            )
        if self.mode not in MODES:
            raise ConfigurationError(f"watcher {self.name!r}: mode {self.mode!r} is not one of {', '.join(MODES)}")
        unknown = set(self.triggers.on) - set(BREAKPOINTS)
        if unknown:
            raise ConfigurationError(
                f"watcher {self.name!r}: unknown breakpoints {sorted(unknown)}; expected some of {', '.join(BREAKPOINTS)}"
            )
