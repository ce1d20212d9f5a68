"""The incremental loop tracker behind the ``stuck`` role: one observation in, findings out.

The tracker keeps only streak counters and a short window of recent *steps* (a tool call paired
with its result), so feeding it one observation costs the same whatever the history length.
Reasoning text and user messages are transparent to action streaks (a person's message makes a
loop already reported count afresh, see ``Levels``; the harness's own nudges are not a person,
see ``harness_nudge``); waiting steps (sleep, poll, status) go to ``Waits`` instead; each streak
reports each of its levels once, and again as it goes on.
"""

from __future__ import annotations

from typing import Literal

from watcher.core.interjection import Location
from watcher.core.observations import (
    AssistantMessage,
    CellExecuted,
    Condensation,
    HarnessError,
    Observation,
    ToolCall,
    ToolResult,
    UserMessage,
)
from watcher.roles._stuck_actions import (
    action_key,
    completing,
    scrolling,
    short_input,
    target_path,
    wait_key,
    wait_kind,
)
from watcher.roles._stuck_cells import CellErrors
from watcher.roles._stuck_config import StuckConfig
from watcher.roles._stuck_cycles import CycleDetector
from watcher.roles._stuck_findings import Action, Finding
from watcher.roles._stuck_levels import Levels
from watcher.roles._stuck_nudges import empty_reply_nudge, harness_nudge
from watcher.roles._stuck_pending import PendingCalls, unanswered
from watcher.roles._stuck_recurring import RecurringFailures, Redelegations, SameAnswers, delegating, due_action
from watcher.roles._stuck_replies import Replies
from watcher.roles._stuck_reruns import Reruns
from watcher.roles._stuck_results import ResultKey, error_line, result_key
from watcher.roles._stuck_tool_errors import ToolErrors
from watcher.roles._stuck_waits import Waits

__all__ = ["LoopTracker"]

_MAX_OPEN = 512  # calls kept to describe cycles, at most


class LoopTracker:
    """Follows one parent session's observations and reports loops as they reach a threshold."""

    def __init__(self, config: StuckConfig) -> None:
        self.config = config
        self.progressed = False  # the agent did something new and successful since the role last looked
        self._serial = 0
        self._pending = PendingCalls()
        # same action + same result; same action failing
        self._run: tuple[str, ResultKey] | None = None
        self._run_len = 0
        self._run_levels = Levels(config.repeat_nudge, config.repeat_pause, 0, config.repeat_again)
        self._fail_action: str | None = None
        self._fail_len = 0
        self._fail_levels = Levels(config.failing_nudge, config.failing_pause, 0, config.repeat_again)
        # the same action whatever its results
        self._reruns = Reruns(config.rerun_nudge)
        # the same failure with other steps between; the same brief handed to a sub-agent again
        self._recurring = RecurringFailures(config.recurring_nudge)
        self._delegations = Redelegations(config.respawn_nudge)
        self._answers = SameAnswers(config.same_answer_nudge)
        # one tool failing the same way under varying arguments, per tool name
        self._tool_errors = ToolErrors(config)
        # cycles of 2 to 5 steps
        self._cycles = CycleDetector(
            config.alternation_cycles, config.alternation_pause, long_cycles=config.long_cycle_nudge
        )
        self._seen_calls: dict[str, ToolCall] = {}  # action key -> a call with it, to describe it when reported
        # waiting
        self._last_real: str | None = None
        self._slept = False
        self._waits = Waits(config.wait_budget)
        # monologue and chanting, condensation, harness errors, cells
        self._replies = Replies(config)
        self._replied = False  # the agent said or did something since the last user message
        self._condensed = 0
        self._cond_levels = Levels(0, config.condensation_pause, 0)
        self._harness = 0
        self._harness_action: str | None = None  # the failing action the harness errors interleave with
        self._harness_levels = Levels(0, config.harness_abort, 0)
        self._cells = CellErrors(config.cell_error_nudge)

    def _new_loop(self) -> int:
        self._serial += 1
        return self._serial

    def _report(self, levels: Levels, count: int) -> tuple[int, int]:
        """The level ``count`` reaches and the loop id to report it under (a new id after a top level)."""
        level = levels.level(count)
        loop = levels.loop
        if level == 2:
            levels.loop = self._new_loop()
        return level, loop

    def feed(self, obs: Observation) -> list[Finding]:
        """Take the next observation; return the loops that reached a new level with it."""
        if isinstance(obs, Condensation):
            if self._condensed == 0:
                self._cond_levels = Levels(0, self.config.condensation_pause, self._new_loop())
            self._condensed += 1
            level, loop = self._report(self._cond_levels, self._condensed)
            if level:
                return [Finding("condensation", "pause", self._condensed, "context condensation", loop)]
            return []
        if not isinstance(obs, UserMessage):  # a person saying "continue" does not end a condensation storm
            self._condensed = 0
        replied, self._replied = self._replied, not isinstance(obs, UserMessage)
        if isinstance(obs, AssistantMessage):
            return self._replies.feed(obs, self._new_loop)
        self._replies.other()
        if isinstance(obs, HarnessError):
            self._pending.failed()
            return self._harness_error(obs)
        if isinstance(obs, UserMessage):
            nudge = harness_nudge(obs.text)
            if not nudge:
                self._replies.answered()
            self._rearm(at_once=nudge)
            if not replied and nudge and empty_reply_nudge(obs.text):  # it answers an empty reply the log does not show
                return self._replies.feed(AssistantMessage(text=""), self._new_loop)
        elif isinstance(obs, ToolCall):
            self._replies.acted()
            if delegating(obs.name):
                self._delegations.called(action_key(obs.name, obs.input))
            steps = self._pending.call(obs)  # none unless this harness does not report results
            return [found for call, result, akey in steps for found in self._step(call, result, akey)]
        elif isinstance(obs, ToolResult):
            self._replies.acted()
            paired = self._pending.result(obs)
            return self._step(paired[0], obs, paired[1]) if paired else []
        elif isinstance(obs, CellExecuted):
            self._replies.acted()
            self._harness = 0
            self._break_streaks()
            found = self._cells.feed(obs, self._new_loop)
            self.progressed = self.progressed or self._cells.fixed
            return found
        return []

    def _rearm(self, *, at_once: bool) -> None:
        """Someone spoke: every loop already reported counts afresh (a person) or goes on flagged (a nudge)."""
        streaks = (
            (self._run_levels, self._run_len),
            (self._fail_levels, self._fail_len),
            (self._cond_levels, self._condensed),
            (self._harness_levels, self._harness),
        )
        for levels, count in streaks:
            if levels.rearm(count, at_once=at_once):
                levels.loop = self._new_loop()
                if not at_once and (levels is self._run_levels or levels is self._fail_levels):
                    # one action failing the same way is one loop to its two rules: both count afresh
                    self._run_levels.postpone(self._run_len)
                    self._fail_levels.postpone(self._fail_len)
        self._replies.rearm(self._new_loop, at_once=at_once)
        self._tool_errors.rearm(self._new_loop, at_once=at_once)
        self._reruns.rearm(self._new_loop, at_once=at_once)
        self._cycles.rearm(self._new_loop, at_once=at_once)
        self._waits.rearm(self._new_loop, at_once=at_once)
        if not at_once:  # a person may well ask for another try
            self._recurring.clear()
            self._delegations.clear()
            self._answers.clear()

    # --- messages and harness errors ---------------------------------------------------------

    def _harness_error(self, obs: HarnessError) -> list[Finding]:
        if self._harness == 0:
            self._harness_levels = Levels(0, self.config.harness_abort, self._new_loop())
        self._harness += 1
        level, loop = self._report(self._harness_levels, self._harness)
        if level:
            return [Finding("harness", "abort", self._harness, "harness error", loop, detail=error_line(obs.text))]
        return []

    # --- tool steps ---------------------------------------------------------------------------

    def _step(self, call: ToolCall, result: ToolResult, akey: str) -> list[Finding]:
        if scrolling(call.name, call.input):
            return []  # moving the view is neither a step of a loop nor a break in one
        failed = result.is_error or result.exit_code not in (None, 0)
        if self._harness:  # a harness error streak survives only the same failing command between its errors
            if not failed or self._harness_action not in (None, akey):
                self._harness, self._harness_action = 0, None
            else:
                self._harness_action = akey
        rkey = result_key(result.output, failed)
        kind = wait_kind(call.name, call.input)
        if kind is not None or (self._slept and akey == self._last_real):
            return self._wait(call, kind, rkey)
        self._waits.clear()
        self._last_real, self._slept = akey, False
        if akey not in self._seen_calls:
            if len(self._seen_calls) >= _MAX_OPEN:
                self._seen_calls.clear()
            self._seen_calls[akey] = call
        hits: list[
            tuple[Literal["failing", "repeat", "rerun", "recurring", "respawn", "same_answer"], Action, int, int]
        ] = []
        config = self.config

        if (akey, rkey) == self._run:
            self._run_len += 1
        else:
            self._run, self._run_len = (akey, rkey), 1
            nudge = min(config.completion_nudge, config.repeat_nudge) if completing(call.name) else config.repeat_nudge
            self._run_levels = Levels(nudge, max(nudge, config.repeat_pause), self._new_loop(), config.repeat_again)
        if failed and akey == self._fail_action:
            self._fail_len += 1
        elif failed:
            self._fail_action, self._fail_len = akey, 1
            self._fail_levels = Levels(
                config.failing_nudge, config.failing_pause, self._new_loop(), config.repeat_again
            )
        else:
            self._fail_action, self._fail_len = None, 0
        if failed:
            level, loop = self._report(self._fail_levels, self._fail_len)
            if level == 2:
                self._run_levels.postpone(self._run_len)  # a failing loop paused is not reported again as a repeat
            if level:
                hits.append(("failing", "pause" if level == 2 else "nudge", self._fail_len, loop))
        level, loop = self._report(self._run_levels, self._run_len)
        if level:
            if failed and level == 2:
                self._fail_levels.postpone(self._fail_len)
            hits.append(("repeat", "pause" if level == 2 else "nudge", self._run_len, loop))
        due, loop = self._reruns.feed(akey, self._new_loop)
        if due and self._run_len < self.config.repeat_nudge and self._fail_len < self.config.failing_nudge:
            hits.append(("rerun", "nudge", self._reruns.count, loop))  # results that change: the rules above are silent
        path = target_path(call.input)
        if path:
            self._recurring.worked_on(path)
        count, loop, recurring = self._recurring.feed(akey, rkey, self._fail_len, self._new_loop)
        if count and not self._cycles.going_on:  # a cycle reported is the same loop, seen whole
            hits.append(("recurring", recurring, count, loop))
        if delegating(call.name):
            count, loop = self._delegations.feed(akey, self._new_loop)
            if count:
                hits.append(("respawn", due_action(count, config.respawn_nudge), count, loop))
        count, loop = self._answers.feed(call.name, call.input, rkey, result.output, self._new_loop)
        if count:
            hits.append(("same_answer", due_action(count, config.same_answer_nudge), count, loop))
        found: list[Finding] = []
        if hits:  # the texts are built only for what is reported: most steps report nothing
            where = Location(path=path) if path else None
            detail = error_line(result.output) if failed else ""
            lost = unanswered(result)
            found = [
                Finding(
                    rule,
                    action,
                    count,
                    short_input(call.name, call.input),
                    loop,
                    detail,
                    location=where,
                    unanswered=lost,
                )
                for rule, action, count, loop in hits
            ]
        found += self._tool_errors.feed(call.name, akey, result.output, failed, self._new_loop)
        found += self._cycle(akey, rkey)
        if not failed and self._run_len == 1:
            # something new worked: earlier failures were not a loop, and earlier nudges were heeded
            # unless it is the same action re-run (a new result is no change of approach) or no result
            # is reported (whether it worked is not known)
            self.progressed = self.progressed or (self._reruns.count == 1 and not unanswered(result))
            self._tool_errors.clear()
        return found

    def _cycle(self, akey: str, rkey: ResultKey) -> list[Finding]:
        cycles = self._cycles
        level, block = cycles.feed((akey, rkey), self._new_loop)
        if not level:
            return []
        loop = cycles.levels.loop
        if level == 2:
            cycles.levels.loop = self._new_loop()
        names = tuple(
            short_input(c.name, c.input) if (c := self._seen_calls.get(step[0])) else "a tool" for step in block
        )
        action: Action = "pause" if level == 2 else "nudge"
        return [Finding("cycle", action, cycles.count, names[0], loop, others=names[1:])]

    def _wait(self, call: ToolCall, kind: str | None, rkey: ResultKey) -> list[Finding]:
        """A sleep or status call, or a call repeated right after a sleep (a poll)."""
        self._reruns.clear()
        # a run of waits with a sleep in it makes the next repeat a poll; after a poll, only another sleep does
        self._slept = (self._slept or kind == "sleep") if kind is not None else False
        due, count, loop = self._waits.feed(wait_key(call.name, call.input), rkey, self._new_loop)
        if not due:
            return []
        return [Finding("waiting", "nudge", count, short_input(call.name, call.input), loop)]

    def _break_streaks(self) -> None:
        """Something other than a tool step happened (a cell ran): tool streaks end."""
        self._run, self._run_len, self._fail_action, self._fail_len = None, 0, None, 0
        self._cycles.clear()
        self._waits.clear()
        self._reruns.clear()
        self._last_real, self._slept = None, False
