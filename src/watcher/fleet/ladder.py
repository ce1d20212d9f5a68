"""What the fleet's watcher loop does with a health judgment: a ``Recommendation``, and the nudge ladder.

The ``health`` role (``watcher.roles.health``) judges a task through any evaluator and answers
with a decision; ``recommendation`` reads it as continue, nudge, escalate (an urgent
interjection), pause or abort, with its diagnosis. ``escalate`` applies the ladder the seed
specifies to a nudge: a hint first, a warning on the 2nd and 3rd, critical after, and a pause
instead of a sixth nudge when five went unanswered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from watcher.core.interjection import Continue, Decision, Severity
from watcher.core.redact import redact

__all__ = ["Recommendation", "escalate", "recommendation"]

Act = Literal["continue", "nudge", "escalate", "pause", "abort"]
_MESSAGE_CHARS = 1000
_DIAGNOSIS_CHARS = 200


@dataclass(frozen=True, slots=True)
class Recommendation:
    """What to do with a task, why, and (for a nudge) what to tell it."""

    action: Act
    diagnosis: str
    message: str = ""
    severity: Severity = "hint"


def recommendation(decision: Decision, *, quoted: str = "") -> Recommendation:
    """What ``decision`` asks for; its note is the diagnosis.

    ``quoted`` names a judge whose own words are quoted instead (an LLM evaluator's answer: its
    note or content, on one line, redacted and clipped, after the judge's name).
    """
    if quoted:
        said = decision.note if isinstance(decision, Continue) else decision.interjection.content
        diagnosis = f"{quoted}: {_one_line(said, _DIAGNOSIS_CHARS) or 'healthy'}"
    else:
        diagnosis = decision.note
    if isinstance(decision, Continue):
        return Recommendation("continue", diagnosis)
    interjection = decision.interjection
    if interjection.action in ("pause", "abort"):
        return Recommendation(interjection.action, diagnosis)
    message = redact(interjection.content.strip())[:_MESSAGE_CHARS] if quoted else interjection.content
    if interjection.urgent:
        return Recommendation("escalate", diagnosis, message, "critical")
    return Recommendation("nudge", diagnosis, message, interjection.severity)


def escalate(recommendation: Recommendation, nudges: int, pause_after: int) -> Recommendation:
    """The ladder for a nudge given ``nudges`` unanswered ones so far; other actions pass unchanged."""
    if recommendation.action == "escalate":
        return Recommendation(
            "nudge", recommendation.diagnosis, recommendation.message or "Escalate: ask for help.", "critical"
        )
    if recommendation.action != "nudge":
        return recommendation
    if nudges >= pause_after:
        return Recommendation("pause", f"unresponsive after {nudges} nudges: {recommendation.diagnosis}")
    severity: Severity = "hint" if nudges == 0 else "warning" if nudges < 3 else "critical"
    return Recommendation("nudge", recommendation.diagnosis, recommendation.message, severity)


def _one_line(text: str, limit: int) -> str:
    text = " ".join(redact(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
