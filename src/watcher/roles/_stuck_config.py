"""The thresholds of the ``stuck`` role, one frozen dataclass so each watcher can tune its own."""

from __future__ import annotations

from dataclasses import dataclass, fields

from watcher.core.errors import ConfigurationError

__all__ = ["StuckConfig"]


@dataclass(frozen=True, slots=True)
class StuckConfig:
    """When the ``stuck`` role nudges, pauses or aborts. Counts are occurrences, not repeats.

    ``repeat_nudge`` / ``repeat_pause``: the same action with the same result this many times in a
    row nudges, then pauses (a nudge level equal to its pause level means no nudge: the loop is
    paused at once). ``completion_nudge``: the same completion attempt (``attempt_completion``,
    ``finish``, ``submit``) with the same answer this many times in a row nudges, sooner than other
    repeats (a task declared done and refused three times is no re-check; Cline warns at the 3rd).
    ``repeat_again``: a repeated or failing action that goes on after its pause is
    paused again after this many more (1, the default: at every one, as Gemini CLI, Cline, OpenHands
    and OpenClaw say "stuck" at every check past their threshold; Roo Code counts afresh after it
    refuses a call: ``repeat_nudge=4, repeat_pause=4, repeat_again=4``). ``failing_nudge`` / ``failing_pause``: the same action failing (with
    any error text) this many times in a row. ``same_error_nudge`` / ``same_error_pause``: one tool
    failing with the same error under varying arguments. ``missing_tool_pause``: calls to a tool
    that does not exist, whatever their arguments (fewer are not yet a loop).
    ``monologue_pause``: the same assistant message (an empty one too; numbers aside) this many times
    with no tool activity between; ``reply_run_pause``: this many agent replies in a row whatever they say, with
    no tool activity and no person between (0, the default: off; the OpenHands V1 SDK uses 3, but a
    reply streamed or split into parts is several replies). ``chant_repeats``: one stretch of text repeated back to back this many times
    inside one reply; ``chant_lines``: one line of prose said this many times in one reply.
    ``rerun_nudge``: the same action this many times in a row whatever its results (they change,
    but nothing else is done), nudged, and again at every further as many.
    ``recurring_nudge``: one action failing the same way this many times with other steps between
    (edits that do not touch the failure), nudged, and again at every further as many; paused from
    three times as many (as are ``respawn_nudge`` and ``same_answer_nudge``).
    ``respawn_nudge``: the same brief handed to a sub-agent this many times since the person last
    spoke, nudged, and again at every further as many. ``same_answer_nudge``: one tool asked this
    many times in a row, its query (``query``, ``question``, ``url``...) worded anew each time, bringing
    back the same answer (of two lines or more) each time (a search reworded that finds the same pages), nudged, and again at every
    further as many.
    ``alternation_cycles`` / ``alternation_pause``: full cycles of two distinct action/result steps
    (A B A B A B) that nudge, then pause; ``long_cycle_nudge``: full cycles of 3 to 5 steps
    (A B C A B C ...) that nudge (each round covers more ground, so it takes one more round to be
    as sure), paused at ``alternation_pause`` too. ``condensation_pause``: context
    condensations in a row with nothing else between. ``cell_error_nudge``: a notebook cell raising
    the same error at the same line this many times (and every further multiple).
    ``harness_abort``: harness errors (timeouts, format errors) with no tool result between but the
    same failing command. ``wait_budget``: one sleep, poll or status command that brings nothing
    new this many times in a row is nudged, and again at every further budget (never paused by
    itself; a wait that brings news starts afresh).
    ``pause_after_nudges``: unanswered nudges after which the next one becomes a pause. A loop that
    goes on after its top level is flagged at every further occurrence; after a person's message, a
    loop already flagged counts afresh.
    """

    repeat_nudge: int = 4
    repeat_pause: int = 5
    repeat_again: int = 1
    completion_nudge: int = 3
    failing_nudge: int = 3
    failing_pause: int = 4
    same_error_nudge: int = 5
    same_error_pause: int = 8
    missing_tool_pause: int = 10
    rerun_nudge: int = 10
    recurring_nudge: int = 5
    respawn_nudge: int = 3
    same_answer_nudge: int = 4
    monologue_pause: int = 3
    reply_run_pause: int = 0
    chant_repeats: int = 10
    chant_lines: int = 5
    alternation_cycles: int = 3
    alternation_pause: int = 5
    long_cycle_nudge: int = 4
    condensation_pause: int = 10
    cell_error_nudge: int = 3
    harness_abort: int = 3
    wait_budget: int = 10
    pause_after_nudges: int = 5

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            off = f.name == "reply_run_pause" and value == 0  # the one detector that is off unless asked for
            if not isinstance(value, int) or isinstance(value, bool) or (value < 1 and not off):
                raise ConfigurationError(f"stuck role: {f.name} must be a positive integer, got {value!r}")
        if self.reply_run_pause == 1:
            raise ConfigurationError("stuck role: reply_run_pause must be 0 (off) or at least 2")
        for name in (
            "repeat_nudge",
            "completion_nudge",
            "failing_nudge",
            "missing_tool_pause",
            "same_error_nudge",
            "monologue_pause",
            "chant_repeats",
            "chant_lines",
            "alternation_cycles",
            "long_cycle_nudge",
            "rerun_nudge",
            "condensation_pause",
            "harness_abort",
        ):
            if getattr(self, name) < 2:
                raise ConfigurationError(f"stuck role: {name} must be at least 2 (one occurrence is not a repeat)")
        for nudge, pause in (
            ("repeat_nudge", "repeat_pause"),
            ("failing_nudge", "failing_pause"),
            ("same_error_nudge", "same_error_pause"),
            ("alternation_cycles", "alternation_pause"),
            ("long_cycle_nudge", "alternation_pause"),
        ):
            if getattr(self, pause) < getattr(self, nudge):
                raise ConfigurationError(
                    f"stuck role: {pause} ({getattr(self, pause)}) must be at least {nudge} ({getattr(self, nudge)})"
                )
