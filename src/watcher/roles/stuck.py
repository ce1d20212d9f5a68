"""The ``stuck`` role: loop detection with escalation, after seed 001's supervisor.

An agent that repeats itself burns tokens without getting anywhere. This role watches for the
loops that public agent frameworks detect (the same action and result over and over, the same
failing command, the same command re-run with nothing else done, a tool that is missing or fails
the same way whatever its arguments, a monologue or an empty reply repeated, one reply chanting
the same text, cycles of two to five steps, condensation storms, harness failures, a notebook cell
failing the same way, waiting that brings nothing new) and for loops real agents show that those
frameworks do not look for (the same failure coming back however the code is edited between, the
same brief handed to a sub-agent again, a query reworded that brings back the same answer; see
``_stuck_recurring``), and escalates as seed 001 does: a nudge while the agent can still recover
(hint, then warning, then critical on successive unanswered nudges), a pause when the loop is definite or after
five unanswered nudges, an abort when the harness itself keeps failing. A loop that is definite but
young is nudged first and paused a little later (the same result a 4th time, then a 5th), as
Cline and OpenClaw warn before they block.
Waiting is not looping: sleep, poll and status commands repeat freely while they bring news.
A loop that goes on after its pause is paused again at every occurrence, as the peers keep saying
"stuck" past their threshold; after a person speaks it counts afresh (the harness's own nudges are
not a person).

Evaluation is incremental: only the observations that arrived since the last evaluation are fed
to the tracker, so the cost per observation does not grow with the buffer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from watcher.core.interjection import Action, Continue, Decision, Interject, Interjection, Severity
from watcher.core.observations import Observation
from watcher.core.redact import redact
from watcher.core.rules import Role
from watcher.core.spec import Triggers
from watcher.roles._stuck_config import StuckConfig
from watcher.roles._stuck_findings import Finding
from watcher.roles._stuck_tracker import LoopTracker

__all__ = ["StuckConfig", "StuckRole"]

_RANK = {"nudge": 0, "pause": 1, "abort": 2}


class StuckRole(Role):
    """Detects loops in an agent's observations and nudges, pauses or aborts."""

    name = "stuck"
    description = "Stuck and loop detector"
    brief = (
        "Watch for an agent going round in circles: the same action with the same result, the same "
        "failing command, the same failure coming back however the code is edited between, the same task "
        "handed to a sub-agent again, a query reworded that brings back the same answer, "
        "a missing tool or one failing the same way whatever its arguments, the same "
        "(or an empty) message, one reply repeating itself, cycles of two to five steps, repeated context "
        "condensation, repeated harness errors, a notebook cell failing the same way. Waiting (sleep, poll, status) "
        "is not a loop while it brings news. Nudge while the agent can recover, saying what "
        "repeats and suggesting another approach; pause when the loop is definite; abort when the "
        "harness keeps failing. One finding per loop; where the repetition is in code, give its "
        "location as path:LINE or cell:ID:LINE with the line numbers shown."
    )
    # The natural breakpoints, plus every third observation: a run of observations that are no
    # breakpoint (a monologue, a condensation storm) is still evaluated, at most two late, while an
    # ordinary message/call/result rhythm adds no evaluation at all (a result resets the count).
    triggers = Triggers(every_n=3)

    def __init__(self, config: StuckConfig | None = None, **overrides: Any) -> None:
        base = config or StuckConfig()
        self.config = replace(base, **overrides) if overrides else base
        self._tracker = LoopTracker(self.config)
        self._unanswered = 0
        self._paused: set[int] = set()
        self._seen = 0

    def evaluate(self, observations: Sequence[Observation], new: int) -> Decision:
        tracker = self._tracker
        best: Interjection | None = None
        for obs in observations[max(len(observations) - new, 0) :]:
            self._seen += 1
            findings = [f for f in tracker.feed(obs) if f.loop not in self._paused]
            if findings:  # one observation, one word: the most severe of what it completed
                interjection = self._escalate(max(findings, key=lambda f: _RANK[f.action]))
                if best is None or _RANK[interjection.action] > _RANK[best.action]:
                    best = interjection
            if tracker.progressed:
                tracker.progressed = False
                self._unanswered = 0  # the agent changed approach and it worked: earlier nudges were heeded
        if best is not None:
            return Interject(best, note=f"{self._unanswered} unanswered nudge(s)")
        return Continue(note=f"{self._seen} observations followed; no loop")

    def _escalate(self, finding: Finding) -> Interjection:
        """Seed 001's ladder: hint, warning, warning, critical, critical, then pause."""
        action: Action = finding.action
        severity: Severity = "critical"
        if action == "nudge":
            if self._unanswered >= self.config.pause_after_nudges:
                action = "pause"
            else:
                severity = "hint" if self._unanswered == 0 else "warning" if self._unanswered < 3 else "critical"
                self._unanswered += 1
        if action != "nudge":
            self._paused.add(finding.loop)
        content = redact(_message(finding, action, self._unanswered, self.config))
        return Interjection(
            content=content,
            urgent=action != "nudge",
            severity=severity,
            action=action,
            locations=(finding.location,) if finding.location else (),
        )


def _times(n: int) -> str:
    return "twice" if n == 2 else f"{n} times"


def _quote(text: str) -> str:
    return text if len(text) <= 100 else text[:99] + "…"


def _what(f: Finding) -> str:
    """What is being repeated, in one sentence."""
    last = f" (last error: {f.detail})" if f.detail else ""
    if f.rule == "failing":
        return f"{f.subject} has failed {_times(f.count)} in a row{last}."
    if f.rule == "repeat" and f.unanswered:
        return f"{f.subject} has been called {_times(f.count)} in a row (no results are reported for these calls)."
    if f.rule == "repeat":
        return f"{f.subject} has been run {_times(f.count)} in a row with the same result{last}."
    if f.rule == "rerun":
        return f"{f.subject} has been run {f.count} times in a row; its results change, but nothing else is being done."
    if f.rule == "recurring":
        return f"{f.subject} has failed the same way {f.count} times, with other steps between that did not change the failure{last}."
    if f.rule == "respawn":
        return f"The same task has been handed to a sub-agent {f.count} times ({f.subject})."
    if f.rule == "same_answer":
        return f"{f.subject.split(' ', 1)[0]} has been asked {f.count} times in a row, worded anew each time (last: {f.subject}), and has brought back the same answer each time."
    if f.rule == "cycle" and len(f.others) == 1:
        return f"The agent alternates between {f.subject} and {f.others[0]}, with the same results each time, for {f.count} full cycles."
    if f.rule == "cycle":
        steps = ", ".join((f.subject, *f.others))
        return f"The agent cycles through {len(f.others) + 1} steps ({steps}), with the same results each time, for {f.count} full cycles."
    if f.rule == "tool_error" and f.missing:
        return f"The agent has called {f.subject}, a tool that is not available, {_times(f.count)} with varying arguments{last}."
    if f.rule == "tool_error":
        return f"{f.subject} has failed {_times(f.count)} in a row with the same error under varying arguments{last}."
    if f.rule == "monologue" and f.different:
        return f"The agent has written {f.count} replies in a row with no tool activity and no one answering."
    if f.rule == "monologue" and not f.subject:
        return f"The agent has sent an empty reply {_times(f.count)} with no tool activity between."
    if f.rule == "monologue":
        return f"The agent has written the same message {_times(f.count)} with no tool activity between: “{_quote(f.subject)}”."
    if f.rule == "chant" and f.back_to_back:
        return f"One reply repeats the same text {f.count} times back to back: “{_quote(f.subject)}”."
    if f.rule == "chant":
        return f"One reply says the same line {f.count} times: “{_quote(f.subject)}”."
    if f.rule == "condensation":
        return f"The context has been condensed {_times(f.count)} in a row with nothing else happening."
    if f.rule == "harness":
        return f"The harness has failed {_times(f.count)} in a row (timeouts or format errors){last}."
    if f.rule == "cell":
        return f"{f.subject[0].upper()}{f.subject[1:]} has raised the same error {_times(f.count)}: {f.detail}."
    return f"{f.subject} has come back {_times(f.count)} in a row with nothing new while waiting."


_ADVICE = {
    "failing": "Running it again will not change the result: read the error, change the code or the command, or try a different approach.",
    "repeat": "Repeating it will not tell you anything new: use the result you already have, or try a different approach.",
    "rerun": "If it waits for something, wait longer between checks; otherwise use what it showed and take the next step.",
    "recurring": "What was changed between the runs does not reach the failure: read the error again, find the code it comes from and change that, or try a different approach.",
    "respawn": "Another sub-agent with the same brief will not do better: read what the last one reported, then change the brief, do the step yourself, or try a different approach.",
    "same_answer": "Rewording the query does not change what comes back: use what it already told you, look in another place, or try a different approach.",
    "cycle": "None of the steps changes anything: stop, reconsider the plan, and try a different approach.",
    "tool_error": "Changing the arguments has not helped: read the error, use a tool you have, or try a different approach.",
    "monologue": "Act on it with a tool, or ask the user for what you need.",
    "chant": "Stop repeating it and say it once. Act on it with a tool, or ask the user for what you need.",
    "condensation": "Summarising again will not make room: narrow the task, or start from a fresh context.",
    "harness": "The run cannot make progress; check the harness (timeouts, output format) before retrying.",
    "cell": "Re-running it will not change the result: inspect the values used on that line, or change the code.",
    "waiting": "Check that the process is still making progress, wait longer between checks, or do something useful meanwhile.",
}


def _message(f: Finding, action: str, unanswered: int, config: StuckConfig) -> str:
    what = _what(f)
    if action == "abort":
        return f"Aborting: {what} {_ADVICE[f.rule]}"
    if action == "pause":
        ignored = f" after {config.pause_after_nudges} unanswered nudges" if f.action == "nudge" else ""
        return f"Pausing{ignored}: {what} The agent is in a loop; someone should look before it continues. {_ADVICE[f.rule]}"
    return f"Stuck? {what} {_ADVICE[f.rule]}"
