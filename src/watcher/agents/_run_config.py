"""What an agent run is asked to do (``RunConfig``) and what it did (``RunResult``): two frozen values.

The configuration is fixed when the run is built and read by the loop; the result is the value
the loop returns when the run ends (``watcher.agents._run_loop``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from watcher.agents._tools import Tool
from watcher.runtime.session import EndState
from watcher.settings import DEFAULT_AGENT_MODEL

__all__ = ["DEFAULT_MODEL", "Boundary", "RunConfig", "RunResult"]

DEFAULT_MODEL = DEFAULT_AGENT_MODEL


@dataclass(frozen=True, slots=True)
class Boundary:
    """Where a run stands at an iteration boundary: requests sent so far and the tokens they spent."""

    step: int
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True, slots=True)
class RunConfig:
    """One run's fixed settings: its prompt, model, tools and limits.

    ``max_corrections_per_step`` caps consecutive turns that answer watcher interjections;
    ``checkpoint_s`` bounds how long each boundary waits for the watchers' verdicts (0: never).
    ``at_boundary`` is awaited at each iteration boundary, before the run takes what its inbox
    holds for the next request: a fleet's task host writes the task's summary there, hands over
    what the journal holds for the task, and holds a paused task.
    """

    name: str
    prompt: str
    model: str = DEFAULT_MODEL
    system: str = ""
    tools: Mapping[str, Tool] = field(default_factory=dict)
    max_steps: int = 25
    max_tokens: int = 4096
    max_corrections_per_step: int = 3
    checkpoint_s: float = 30.0
    cache: bool = True
    at_boundary: Callable[[Boundary], Awaitable[None]] | None = None


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a run ended and what it cost.

    ``status``: completed, max_steps, paused, aborted, failed or cancelled. ``steps`` counts every
    model request, corrective ones included; ``corrective_steps``/``corrective_tokens`` are the
    turns that answered an interjection (the overhead of being corrected).
    """

    status: EndState
    text: str
    messages: tuple[dict[str, Any], ...]
    steps: int
    corrective_steps: int
    corrective_tokens: int
    input_tokens: int
    output_tokens: int
    interrupts: int
    interrupt_ms: tuple[float, ...]
    detail: str = ""
