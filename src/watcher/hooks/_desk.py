"""Answering hook calls: observe the hooked session, evaluate at the event's breakpoint, answer.

A ``Desk`` holds the hooked sessions of one journal on one runtime. The daemon keeps one per
journal for as long as it runs, so a session's watchers keep their state (a loop detector needs
the history); a process without a daemon builds a desk for one call, and the session's history
and pending interjections are read back from the journal first.

What an answer carries, by event (the CLI's wire shapes are in ``_wire``):

- ``PreToolUse``: an urgent interjection made about this call denies it, with the interjection as
  the reason; it denies even in manual mode and past a watcher's caps (a tool call cannot wait for
  a click, and a denial costs the agent one retry). The same call again is denied again. Anything
  else waiting is added as context.
- ``PostToolUse`` / ``PostToolUseFailure`` / ``UserPromptSubmit`` / ``SessionStart``: context.
- ``Stop`` / ``SubagentStop``: interjections waiting keep the turn going (``block``), at most
  ``max_stop_blocks`` times a turn, so a watcher never traps a session.
- Other events carry nothing; what waits goes with the next answer that can carry it.
- ``SessionEnd`` is a breakpoint: the watchers judge whatever is still buffered (a loop or a
  finding in the last observations is journaled), then the session ends; what nothing can carry
  any more is journaled ``undeliverable``.
- A pause or an abort (the stuck role's answer to a definite loop) also stops Claude Code
  (``continue: false``) where it honours that, else at the next tool call.

Every call is journaled as a ``HookEvent``; interjections are journaled ``queued`` when a watcher
hands them to the session and ``delivered`` when an answer carries them. A call whose caller
stopped waiting (``gone``) answers nothing and leaves what it found for the next answer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from watcher.core.errors import ConfigurationError
from watcher.core.interjection import Interjection
from watcher.core.observations import ToolCall
from watcher.evaluators.registry import make_evaluator
from watcher.evaluators.rules import RulesEvaluator
from watcher.guard import Verdict, judge
from watcher.hooks._events import HookEvent
from watcher.hooks._resume import prime, read_back
from watcher.hooks._session import HookConfig, HookedSession, call_signature
from watcher.hooks._wire import (
    CONTEXT_EVENTS,
    STOP_EVENTS,
    TURN_END_EVENTS,
    Answer,
    HookCall,
    render_interjections,
)
from watcher.roles import spec_for_role
from watcher.runtime.engine import Watcher
from watcher.runtime.events import EvaluationEvent, Event
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Journal
from watcher.runtime.session import Parcel
from watcher.settings import Settings

__all__ = ["Desk", "guard_verdict"]

# A session that has not called for this long is let go (a CLI that crashed never says SessionEnd);
# if it calls again, its history comes back from the journal.
_IDLE_SESSION_S = 3600.0


@dataclass
class _Hooked:
    session: HookedSession
    watchers: list[Watcher]
    config: HookConfig
    lock: asyncio.Lock
    last_call: float = 0.0
    notices: list[str] = field(default_factory=list)  # what the session must know about watcher itself
    told: set[str] = field(default_factory=set)  # notices already said once


class Desk:
    """The hooked sessions of one journal, their watchers, and the answers to their hook calls."""

    def __init__(self, journal: Journal, *, settings: Settings | None = None) -> None:
        self.journal = journal
        self.settings = settings  # for the LLM evaluators (None: each reads the environment as it is made)
        self.runtime = Runtime(journal=journal)
        self._hooked: dict[str, _Hooked] = {}
        self._urgent: dict[str, list[Interjection]] = {}  # session -> urgent interjections of the call in flight
        self.problems: list[str] = []  # evaluators that could not be made or failed, newest last (for status)
        self._opening = asyncio.Lock()  # two first calls of one session open it once
        self._closing: set[asyncio.Task[None]] = set()  # evaluators' connections being closed
        self.runtime.bus.subscribe("hooks", self._collect, maxsize=100_000)

    def _collect(self, event: Event) -> None:
        if isinstance(event, EvaluationEvent) and event.session in self._urgent:
            found = event.interjection
            if found is not None and found.urgent:
                self._urgent[event.session].append(found)
        if isinstance(event, EvaluationEvent) and event.error and event.session in self._hooked:
            kind = event.error.split(":", 1)[0]
            self._notice(
                self._hooked[event.session],
                f"the {event.watcher} watcher's {event.evaluator or 'LLM'} evaluation failed ({kind}); "
                "its offline rules judge in its place until it works again, and the guard's rules judge every "
                "tool call as always",
                key=f"{event.watcher}:{kind}",
            )

    def _notice(self, hooked: _Hooked, text: str, *, key: str = "") -> None:
        """Tell the session (once per ``key``) and ``hooks status`` something about watcher itself."""
        key = key or text
        if key in hooked.told:
            return
        hooked.told.add(key)
        hooked.notices.append(f"[watcher] {text}")
        self.problems = [*self.problems[-19:], text]

    # --- sessions ------------------------------------------------------------------------------

    async def _open(self, call: HookCall, config: HookConfig) -> _Hooked:
        hooked = self._hooked.get(call.session)
        if hooked is not None:
            return hooked
        async with self._opening:
            return self._hooked.get(call.session) or await self._start(call, config)

    async def _start(self, call: HookCall, config: HookConfig) -> _Hooked:
        name = call.session
        past = await asyncio.to_thread(read_back, self.journal, name)
        session = HookedSession(name, outbox=past.outbox, stop_blocks=past.stop_blocks, paused=past.paused)
        child = name != call.parent_session
        detail = f"subagent of {call.parent_session}" if child else f"hooked {call.agent} session in {call.cwd}"
        self.runtime.add_session(session, detail=detail, first_index=past.observed, announce=not past.started)
        watchers, problem = [], ""
        for role in config.roles:
            spec = spec_for_role(role, mode=config.mode)  # type: ignore[arg-type]
            try:
                reads = {"worktree": Path(call.cwd)} if config.evaluator != "rules" and call.cwd else {}
                # an LLM numbers edits as files read
                evaluator = make_evaluator(config.evaluator, role, settings=self.settings, **reads)
            except ConfigurationError as exc:  # a missing key never switches a watcher off: the rules judge
                evaluator, problem = make_evaluator("rules", role), str(exc)
            if isinstance(evaluator, RulesEvaluator):  # one session's large file must not hold the others'
                evaluator = RulesEvaluator(evaluator.role, off_loop=True)
            watcher = self.runtime.attach(spec, evaluator, session)
            prime(watcher, past)
            watchers.append(watcher)
        hooked = _Hooked(session, watchers, config, asyncio.Lock())
        self._hooked[name] = hooked
        if problem:
            self._notice(
                hooked, f"{problem}. The watchers use the offline rules instead; the guard still denies dangerous calls"
            )
        return hooked

    # --- calls ---------------------------------------------------------------------------------

    async def handle(
        self,
        call: HookCall,
        config: HookConfig,
        *,
        gone: asyncio.Event | None = None,
        answered: bool = False,
        verdict: Verdict | None = None,
    ) -> Answer:
        """Observe ``call``, evaluate at its breakpoint, and answer it (journaled).

        ``gone`` is set by a caller that stopped waiting (the hook's budget ran out): the
        evaluation still finishes, but what it found waits for the session's next answer
        instead of going into one nobody reads, and the session is told its watchers are slow.
        ``answered``: the hook already answered with the guard alone (no daemon); the same, untold.
        ``verdict``: the guard's, when the caller has it already (a ``PreToolUse`` is judged once).
        """
        if answered:
            gone = asyncio.Event()
            gone.set()
        started = time.perf_counter()
        self._let_go_idle(time.monotonic())
        hooked = await self._open(call, config)
        hooked.last_call = time.monotonic()
        async with hooked.lock:
            if verdict is None and call.event == "PreToolUse":
                verdict = guard_verdict(call)
            answer, detail, carried = await self._answer(call, hooked, gone, answered, verdict)
            if gone is None or not gone.is_set():  # nobody reads this answer: the notices wait
                answer = self._with_notices(call, hooked, answer)
        self.runtime.publish(
            HookEvent(
                session=call.session,
                event=call.event,
                answer=answer.kind,
                latency_ms=round((time.perf_counter() - started) * 1000, 2),
                turn=call.turn,
                detail=detail,
                carried=tuple(i.id for i in carried),
                pause=hooked.session.paused,
                problems=tuple(self.problems[-3:]),
            )
        )
        self._delivered(call.session, carried)
        if call.event == "SessionEnd" and call.session in self._hooked:
            self._end(call.session)
        return answer

    def _delivered(self, name: str, carried: list[Interjection]) -> None:
        """Journal the interjections this answer took to the CLI as delivered."""
        hooked = self._hooked.get(name)
        if hooked is not None and carried:
            hooked.session.reached([Parcel.of(i) for i in carried], "carried by a hook answer")

    async def _answer(
        self, call: HookCall, hooked: _Hooked, gone: asyncio.Event | None, answered: bool, verdict: Verdict | None
    ) -> tuple[Answer, str, list[Interjection]]:
        session = hooked.session
        observations = call.observations()
        signature = ""
        if call.event == "PreToolUse" and observations and isinstance(observations[0], ToolCall):
            signature = call_signature(observations[0].name, observations[0].input)
        if verdict is not None and verdict.problems:
            for problem in verdict.problems:
                self._notice(hooked, problem + "; the guard's pack still applies")
        self._urgent[session.name] = []
        # a person's Inject or Dismiss, from an editor or a notebook: read from the journal (a thread's
        # query) while the watchers judge, and applied before the answer takes what waits
        commands = asyncio.get_running_loop().create_task(self.runtime.apply_commands())
        try:
            for obs in observations:
                self.runtime.observe(session.name, obs)
            # natural breakpoints (tool result, turn done) evaluate here; other sessions' judgments are not waited for
            await self.runtime.settle(session.name)
            if call.event == "PreToolUse":
                for watcher in hooked.watchers:
                    await watcher.evaluate("tool_call")
                await self.runtime.settle(session.name)
            elif call.event == "SessionEnd":  # the end is a breakpoint: the last observations are judged too
                await self.runtime.evaluate_session_end(session)
            urgent = self._urgent[session.name]
        finally:
            self._urgent.pop(session.name, None)
            await commands
        if verdict is not None and verdict.denied:  # the offline guard decides, whatever the evaluator said
            ids = {i.id for i in urgent}
            session.put_back([i for i in session.take() if i.id not in ids])  # the denial says it all
            session.denied[signature] = verdict.render()
            return Answer("deny", verdict.render()), f"guard: {verdict.category} ({verdict.rule})", urgent
        if gone is not None and gone.is_set():
            if not answered:
                self._notice(
                    hooked,
                    f"the watchers' evaluation ran past the hook's {hooked.config.budget_s:g}s budget, so that call "
                    "went on unjudged by them (the guard's rules still judged it); their findings follow",
                    key="late",
                )
            return Answer("late"), "past the budget: the hook answered nothing; findings wait for the next answer", []
        waiting = [parcel.interjection for parcel in session.take()]
        if call.event == "PreToolUse":
            remembered = session.denied.get(signature)
            if session.paused and call.agent == "claude":  # a pause the CLI ignored earlier: stop here
                reason, session.paused = session.paused, ""
                session.put_back(Parcel.of(i) for i in waiting)
                return Answer("deny", reason, stop=reason), "paused", []
            if urgent or remembered:
                ids = {i.id for i in urgent}
                reason = render_interjections(urgent) if urgent else remembered or ""
                session.put_back(Parcel.of(i) for i in waiting if i.id not in ids)
                session.denied[signature] = reason
                detail = f"{len(urgent)} urgent" if urgent else "denied again"
                return self._pausing(call, session, Answer("deny", reason), urgent), detail, urgent
        if not waiting:
            return Answer(), "", []
        answer, detail = self._carry(call, hooked, waiting)
        if answer.wire(call.event, call.agent) is None:  # this event (or this CLI) cannot carry them
            session.put_back(Parcel.of(i) for i in waiting)
            return Answer(), detail or f"{len(waiting)} waiting for an answer that can carry them", []
        if answer.kind == "block":
            session.stop_blocks[call.turn] = session.stop_blocks.get(call.turn, 0) + 1
        return self._pausing(call, session, answer, waiting), detail, waiting

    def _with_notices(self, call: HookCall, hooked: _Hooked, answer: Answer) -> Answer:
        """``answer`` with watcher's own notices added (a denial's reason, or context where it can go)."""
        if not hooked.notices or answer.kind == "late":
            return answer
        text = "\n\n".join(hooked.notices)
        if answer.kind == "deny":
            hooked.notices = []
            return replace(answer, text=f"{answer.text}\n\n{text}")
        if answer.kind in ("none", "context") and call.event in CONTEXT_EVENTS:
            if Answer("context", text).wire(call.event, call.agent) is None:
                return answer
            hooked.notices = []
            return Answer("context", f"{answer.text}\n\n{text}" if answer.text else text, stop=answer.stop)
        return answer

    @staticmethod
    def _pausing(call: HookCall, session: HookedSession, answer: Answer, carried: list[Interjection]) -> Answer:
        """``answer``, stopping the CLI when a carried interjection pauses or aborts the session.

        Where the CLI ignores a stop (``PostToolUseFailure``), the pause waits for the next tool call.
        """
        stops = [i for i in carried if i.action in ("pause", "abort")]
        if not stops or call.agent != "claude":
            return answer
        reason = render_interjections(stops)
        if call.event in STOP_EVENTS:
            return replace(answer, stop=reason)
        session.paused = reason
        return answer

    @staticmethod
    def _carry(call: HookCall, hooked: _Hooked, waiting: list[Interjection]) -> tuple[Answer, str]:
        """The answer that would carry ``waiting`` at this event (``none`` when it cannot)."""
        if call.event in CONTEXT_EVENTS:
            return Answer("context", render_interjections(waiting)), f"{len(waiting)} interjection(s)"
        if call.event in TURN_END_EVENTS:
            blocks, cap = hooked.session.stop_blocks.get(call.turn, 0), hooked.config.max_stop_blocks
            if blocks < cap:
                return Answer("block", render_interjections(waiting)), f"block {blocks + 1}/{cap}"
            return Answer(), f"Stop cap ({cap} a turn) reached; {len(waiting)} waiting"
        return Answer(), ""

    def _let_go_idle(self, now: float) -> None:
        for name, hooked in list(self._hooked.items()):
            if now - hooked.last_call > _IDLE_SESSION_S and not hooked.lock.locked():
                self._hooked.pop(name)
                self.runtime.remove_session(name)
                self._release(hooked)

    def _end(self, name: str) -> None:
        hooked = self._hooked.pop(name)
        hooked.session.end(leftover="the CLI session ended before a hook answer could carry it")
        self.runtime.remove_session(name)  # a resumed CLI session (same id) is opened afresh
        self.runtime.end_session(hooked.session, detail="the CLI ended the session")
        self._release(hooked)

    def _release(self, hooked: _Hooked) -> None:
        """Close the HTTP connections of a session's LLM evaluators, in the background (it has let go of them)."""
        closers = [getattr(w.evaluator, "aclose", None) for w in hooked.watchers]
        closing = [close() for close in closers if callable(close)]
        if closing:
            task = asyncio.get_running_loop().create_task(_close_all(closing))
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    @property
    def sessions(self) -> tuple[str, ...]:
        """The hooked sessions this desk holds."""
        return tuple(self._hooked)

    async def close(self) -> None:
        """Settle and flush the journal (the journal itself stays open: its owner closes it), and close
        the LLM evaluators' connections."""
        await self.runtime.close()
        for hooked in list(self._hooked.values()):
            self._release(hooked)
        await asyncio.gather(*self._closing, return_exceptions=True)


async def _close_all(closing: list[Coroutine[Any, Any, None]]) -> None:
    """Await every ``aclose()``; a connection that fails to close is the evaluator's to log, not the session's."""
    await asyncio.gather(*closing, return_exceptions=True)


def guard_verdict(call: HookCall) -> Verdict:
    """The offline guard's verdict on a ``PreToolUse`` call (the same in the daemon and without it)."""
    p = call.payload
    tool_input = p.get("tool_input")
    return judge(str(p.get("tool_name") or ""), tool_input if isinstance(tool_input, dict) else {}, cwd=call.cwd or ".")
