"""The incremental loop tracker behind the ``stuck`` role: one observation in, findings out.

The tracker keeps only streak counters and a short window of recent *steps* (a tool call paired
with its result), so feeding it one observation costs the same whatever the history length.
Reasoning text and user messages are transparent to action streaks; waiting steps (sleep, poll,
status) go to the wait budget instead; each streak reports each of its levels once.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
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
    error_line,
    result_key,
    short_input,
    target_path,
    wait_key,
    wait_kind,
)
from watcher.roles._stuck_config import StuckConfig

__all__ = ["Finding", "LoopTracker"]

_MAX_OPEN = 512  # tool calls without a result yet, and failing cells, kept at most


@dataclass(frozen=True, slots=True)
class Finding:
    """One loop at one escalation level: what repeats, how often, and what to do about it."""

    rule: Literal["repeat", "failing", "monologue", "alternation", "condensation", "cell", "harness", "waiting"]
    action: Literal["nudge", "pause", "abort"]
    count: int
    subject: str
    loop: int  # identity of the streak: its levels share it
    detail: str = ""
    other: str = ""  # the second action of an alternation
    location: Location | None = None


@dataclass(slots=True)
class _Cell:
    error: tuple[str, int | None]
    count: int
    loop: int
    keys: set[tuple[str, str | int]] = field(default_factory=set)


class LoopTracker:
    """Follows one parent session's observations and reports loops as they reach a threshold."""

    def __init__(self, config: StuckConfig) -> None:
        self.config = config
        self.progressed = False  # the agent did something new and successful since the role last looked
        self._serial = 0
        self._calls: dict[str, ToolCall] = {}
        self._last_call: ToolCall | None = None
        # same action + same result
        self._run: tuple[str, tuple[bool, int]] | None = None
        self._run_len = 0
        self._run_loop = 0
        self._run_reported = False
        # same action failing
        self._fail_action: str | None = None
        self._fail_len = 0
        self._fail_level = 0
        self._fail_loop = 0
        # alternation over the last 2 * cycles steps
        self._window: deque[tuple[str, tuple[bool, int]]] = deque(maxlen=2 * config.alternation_cycles)
        self._seen_calls: dict[str, ToolCall] = {}  # action key -> a call with it, to describe it when reported
        self._alt_loop = 0
        # waiting
        self._last_real: str | None = None
        self._slept = False
        self._waits: dict[str, int] = {}
        self._wait_level = 0
        self._wait_loop = 0
        # monologue, condensation, harness errors, cells
        self._said: str | None = None
        self._said_len = 0
        self._said_loop = 0
        self._condensed = 0
        self._cond_loop = 0
        self._harness = 0
        self._harness_loop = 0
        self._cells: dict[tuple[str, str | int], _Cell] = {}

    def _new_loop(self) -> int:
        self._serial += 1
        return self._serial

    def feed(self, obs: Observation) -> list[Finding]:
        """Take the next observation; return the loops that reached a new level with it."""
        if isinstance(obs, Condensation):
            self._condensed += 1
            if self._condensed == self.config.condensation_pause:
                return [Finding("condensation", "pause", self._condensed, "context condensation", self._new_loop())]
            return []
        self._condensed = 0
        if isinstance(obs, AssistantMessage):
            return self._assistant(obs)
        if isinstance(obs, HarnessError):
            return self._harness_error(obs)
        if isinstance(obs, UserMessage):
            self._said = None
        elif isinstance(obs, ToolCall):
            self._said = None
            if len(self._calls) >= _MAX_OPEN:
                self._calls.pop(next(iter(self._calls)))
            self._calls[obs.id] = obs
            self._last_call = obs
        elif isinstance(obs, ToolResult):
            self._said, self._harness = None, 0
            call = self._calls.pop(obs.tool_call_id, None) if obs.tool_call_id else None
            call = call or self._last_call or ToolCall(name="tool")
            self._last_call = None
            return self._step(call, obs)
        elif isinstance(obs, CellExecuted):
            self._said, self._harness = None, 0
            self._break_streaks()
            return self._cell(obs)
        return []

    # --- messages and harness errors ---------------------------------------------------------

    def _assistant(self, obs: AssistantMessage) -> list[Finding]:
        text = " ".join(obs.text.split())
        if not text:
            return []
        if text != self._said:
            self._said, self._said_len, self._said_loop = text, 0, self._new_loop()
        self._said_len += 1
        if self._said_len == self.config.monologue_pause:
            return [Finding("monologue", "pause", self._said_len, text, self._said_loop)]
        return []

    def _harness_error(self, obs: HarnessError) -> list[Finding]:
        if self._harness == 0:
            self._harness_loop = self._new_loop()
        self._harness += 1
        if self._harness == self.config.harness_abort:
            return [
                Finding(
                    "harness", "abort", self._harness, "harness error", self._harness_loop, detail=error_line(obs.text)
                )
            ]
        return []

    # --- tool steps ---------------------------------------------------------------------------

    def _step(self, call: ToolCall, result: ToolResult) -> list[Finding]:
        failed = result.is_error or result.exit_code not in (None, 0)
        akey = action_key(call.name, call.input)
        kind = wait_kind(call.name, call.input)
        if kind is not None or (self._slept and akey == self._last_real):
            return self._wait(call, kind)
        if self._waits:
            self._waits.clear()
            self._wait_level = 0
        self._last_real, self._slept = akey, False
        rkey = result_key(result.output, failed)
        if akey not in self._seen_calls:
            if len(self._seen_calls) >= _MAX_OPEN:
                self._seen_calls.clear()
            self._seen_calls[akey] = call
        hits: list[tuple[Literal["failing", "repeat"], Literal["nudge", "pause"], int, int]] = []

        if (akey, rkey) == self._run:
            self._run_len += 1
        else:
            self._run, self._run_len, self._run_loop, self._run_reported = (akey, rkey), 1, self._new_loop(), False
        if failed and akey == self._fail_action:
            self._fail_len += 1
        else:
            self._fail_action, self._fail_len, self._fail_level = (akey if failed else None), int(failed), 0
            self._fail_loop = self._new_loop() if failed else 0
        if self._fail_len >= self.config.failing_pause and self._fail_level < 2:
            self._fail_level, self._run_reported = 2, True
            hits.append(("failing", "pause", self._fail_len, self._fail_loop))
        elif self._fail_len >= self.config.failing_nudge and self._fail_level < 1:
            self._fail_level = 1
            hits.append(("failing", "nudge", self._fail_len, self._fail_loop))
        if self._fail_level == 2:
            self._run_reported = True  # a failing loop already paused is not reported again as a repeat
        if self._run_len >= self.config.repeat_pause and not self._run_reported:
            self._run_reported = True
            if failed:
                self._fail_level = 2
            hits.append(("repeat", "pause", self._run_len, self._run_loop))
        found: list[Finding] = []
        if hits:  # the texts are built only for what is reported: most steps report nothing
            path = target_path(call.input)
            where = Location(path=path) if path else None
            detail = error_line(result.output) if failed else ""
            found = [
                Finding(rule, action, count, short_input(call.name, call.input), loop, detail, location=where)
                for rule, action, count, loop in hits
            ]
        found += self._alternation(akey, rkey)
        if not failed and self._run_len == 1:
            self.progressed = True
        return found

    def _alternation(self, akey: str, rkey: tuple[bool, int]) -> list[Finding]:
        window = self._window
        window.append((akey, rkey))
        first, second = window[0], window[1] if len(window) > 1 else None
        alternating = (
            len(window) == window.maxlen
            and first != second
            and first[0] != (second[0] if second else None)
            and all(step == (first if i % 2 == 0 else second) for i, step in enumerate(window))
        )
        if not alternating:
            self._alt_loop = 0
            return []
        if self._alt_loop:
            return []  # this alternation was reported when it completed its cycles
        self._alt_loop = self._new_loop()
        assert second is not None
        a, b = (
            short_input(c.name, c.input) if (c := self._seen_calls.get(k)) else "a tool" for k in (first[0], second[0])
        )
        return [Finding("alternation", "pause", self.config.alternation_cycles, a, self._alt_loop, other=b)]

    def _wait(self, call: ToolCall, kind: str | None) -> list[Finding]:
        """A sleep or status call, or a call repeated right after a sleep (a poll)."""
        # a run of waits with a sleep in it makes the next repeat a poll; after a poll, only another sleep does
        self._slept = (self._slept or kind == "sleep") if kind is not None else False
        if not self._waits:
            self._wait_loop = self._new_loop()
        key = wait_key(call.name, call.input)
        count = self._waits[key] = self._waits.get(key, 0) + 1
        if len(self._waits) > _MAX_OPEN:
            self._waits = {key: count}
        if count <= self.config.wait_budget * (self._wait_level + 1):
            return []
        self._wait_level += 1
        return [Finding("waiting", "nudge", count, short_input(call.name, call.input), self._wait_loop)]

    def _break_streaks(self) -> None:
        """Something other than a tool step happened (a cell ran): tool streaks end."""
        self._run, self._run_len, self._fail_action, self._fail_len = None, 0, None, 0
        self._window.clear()
        self._waits.clear()
        self._wait_level, self._last_real, self._slept = 0, None, False

    # --- notebook cells -------------------------------------------------------------------------

    def _cell(self, obs: CellExecuted) -> list[Finding]:
        # a cell is the same cell by id, or by source (nbclient has no ids; a pasted copy has a new one)
        keys: list[tuple[str, str | int]] = [("source", hash(obs.source.strip()))]
        if obs.cell_id:
            keys.append(("id", obs.cell_id))
        if obs.error is None:  # fixed: forget the failure under every name it was known by
            for key in keys:
                gone = self._cells.pop(key, None)
                for other in gone.keys if gone else ():
                    self._cells.pop(other, None)
            self.progressed = True
            return []
        error = (obs.error.ename, obs.error.lineno)
        state = next((found for key in reversed(keys) if (found := self._cells.get(key)) is not None), None)
        if state is None or state.error != error:
            state = _Cell(error, 0, self._new_loop())
        while len(self._cells) >= _MAX_OPEN:
            self._cells.pop(next(iter(self._cells)))
        for key in keys:
            self._cells[key] = state
            state.keys.add(key)
        state.count += 1
        if state.count % self.config.cell_error_nudge:
            return []
        where = Location(cell_id=obs.cell_id, start_line=obs.error.lineno or 1) if obs.cell_id else None
        label = f"cell {obs.cell_id}" if obs.cell_id else "the same cell"
        detail = f"{obs.error.ename}: {obs.error.evalue}".strip().rstrip(":")
        line = f" at line {obs.error.lineno}" if obs.error.lineno else ""
        return [Finding("cell", "nudge", state.count, label, state.loop, detail=f"{detail}{line}", location=where)]
