"""A fleet task's measured health (``Snapshot``) and the prompt a model judges it from.

A snapshot is the subject of the ``health`` role (``EvaluationRequest.subject``). Its prompt is
in two parts: the task's measured health, stated by the fleet itself (age, iteration, tokens,
freshness, nudges), and what the task did (tool calls, conversation, the stuck detectors'
findings), which is observed content: redacted, neutralised and fenced between per-prompt random
delimiters, so a line the agent wrote or a tool printed cannot forge a decision.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from watcher.core.protocol import END_OBSERVATIONS, EvaluationPrompt, neutralise
from watcher.core.redact import redact
from watcher.core.shortening import format_evaluation_prompt
from watcher.core.spec import WatcherSpec
from watcher.roles._stuck_findings import Finding

__all__ = ["PARENT", "Freshness", "Snapshot", "ToolCallSummary", "fenced", "observed"]

Freshness = Literal["fresh", "stale", "very_stale", "unknown"]
PARENT = "a task of the fleet"  # the same for every task, so the static prefix stays cacheable


@dataclass(frozen=True, slots=True)
class ToolCallSummary:
    """One tool call as the snapshot shows it: name, success, real duration, the start of its result."""

    name: str
    success: bool
    duration_s: float
    result: str


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A task at one cycle of the fleet's watcher loop: what the ``health`` role judges.

    ``flagged``: a loop was found earlier and the task has not progressed since; ``answered``:
    the task completed an iteration since its last nudge (so a repeat nudge is not sent before the
    previous one was even read).
    """

    task: str
    age_s: float
    iteration: int
    tokens: int
    recent_tools: tuple[ToolCallSummary, ...]
    idle_s: float
    freshness: Freshness
    recent_conversation: tuple[str, ...]
    findings: tuple[Finding, ...]
    file_changed: bool
    progressed: bool
    nudges: int
    in_tool_call: bool = False  # a tool call has no result yet (filled with the recent activity)
    flagged: bool = False
    answered: bool = True

    def prompt(self, spec: WatcherSpec, *, nonce: str | None = None) -> EvaluationPrompt:
        """The evaluation prompt of ``spec`` judging this snapshot (``nonce`` fixes the fence, for tests)."""
        nonce = nonce or secrets.token_hex(6)
        static = format_evaluation_prompt(spec, PARENT, (), nonce=nonce).static
        health = [
            "TASK HEALTH (measured by the fleet):",
            f"- task: {observed(self.task)}",
            f"- age: {self.age_s:.0f}s; iteration: {self.iteration}; tokens: {self.tokens}",
            f"- freshness: {self.freshness.replace('_', ' ')} (no progress for {self.idle_s:.0f}s); "
            f"progress since the last check: {_yes(self.progressed)}; file changed: {_yes(self.file_changed)}",
            f"- nudges sent so far without progress: {self.nudges}",
            f"- in the middle of a tool call: {_yes(self.in_tool_call)}",
            f"- stuck detectors: {len(self.findings)} finding{'s' if len(self.findings) != 1 else ''} (listed below)",
        ]
        lines = [
            f"[Tool] {t.name}: {'ok' if t.success else 'FAILED'} after {t.duration_s:.1f}s: {_flat(t.result)}"
            for t in self.recent_tools
        ]
        lines += [f"[Conversation] {_flat(line)}" for line in self.recent_conversation]
        for f in self.findings:
            detail = f"; last error: {f.detail}" if f.detail else ""
            lines.append(f"[Stuck finding] {f.rule} loop on {f.subject}: {f.count} times ({f.action}){detail}")
        activity = (
            "\n".join(health) + "\n\nRECENT ACTIVITY IN THE TASK:\n" + fenced([observed(o) for o in lines], nonce)
        )
        return EvaluationPrompt(static=static, activity=activity, nonce=nonce)


def observed(text: str) -> str:
    """Observed ``text`` made safe for a prompt: secrets masked, protocol markers and fences defused."""
    return neutralise(redact(text))


def fenced(lines: Sequence[str], nonce: str) -> str:
    """Observed ``lines`` between the delimiters of ``nonce``, then the end-of-observations marker.

    Every entry is one line that starts with its label ([Tool], #12 ...), so no observed line can
    pass for an answer line if the model echoes it.
    """
    fence = f"OBSERVED-{nonce}"
    body = "\n".join(lines) or "(no activity)"
    return f"<<<{fence}\n{body}\n{fence}>>>\n{END_OBSERVATIONS}"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _flat(text: str) -> str:
    return " ".join(text.split())
