"""The watcher engine: buffer observations, evaluate at breakpoints, deliver interjections.

Each attached ``Watcher`` is a bus subscriber. It keeps a bounded buffer of its parent's
observations, evaluates when a breakpoint arrives (turn done, tool result, error, cell executed,
every N observations, or an idle timeout), applies its caps, and either delivers the interjection
(autonomous) or holds it as pending until a person accepts, edits or dismisses it (manual).

Evaluators fail closed: an exception, a timeout or an answer that is not a result becomes a
*continue* whose error is journaled. Nothing a watcher does can raise into the parent.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import replace

from watcher.core.errors import NotPendingError, SessionEndedError
from watcher.core.evaluation import EvaluationRequest, EvaluationResult, Evaluator, Usage
from watcher.core.interjection import Continue, Interject, Interjection, Origin
from watcher.core.logs import logger
from watcher.core.observations import CellExecuted, Done, HarnessError, Observation, ToolResult
from watcher.core.redact import redact
from watcher.core.spec import Breakpoint, WatcherSpec
from watcher.runtime.bus import EventBus, Subscription
from watcher.runtime.events import (
    DeliveryEvent,
    DeliveryOutcome,
    EvaluationEvent,
    Event,
    InterjectionEvent,
    ObservationEvent,
)
from watcher.runtime.fates import DISMISSED, FAILED, PENDING, QUEUED, UNDELIVERABLE, Fates
from watcher.runtime.session import Session

__all__ = ["SESSION_END", "Watcher", "breakpoints_of"]

SESSION_END = "session_end"  # the breakpoint name of the evaluation at the end of a session

log = logger("watcher.engine")


def breakpoints_of(obs: Observation) -> tuple[Breakpoint, ...]:
    """The natural breakpoints an observation is, most specific first (often none)."""
    if isinstance(obs, Done):
        return ("turn_done",)
    if isinstance(obs, HarnessError):
        return ("error",)
    if isinstance(obs, ToolResult):
        return ("error", "tool_result") if obs.is_error else ("tool_result",)
    if isinstance(obs, CellExecuted):
        return ("error", "cell_executed") if obs.error is not None else ("cell_executed",)
    return ()


def _malformed(result: object) -> str | None:
    """What is wrong with an evaluator's answer, or None when the engine can use it as it is."""
    if not isinstance(result, EvaluationResult):
        return f"evaluator returned {type(result).__name__}, not an EvaluationResult"
    decision = result.decision
    if not isinstance(decision, Continue | Interject):
        return f"evaluator returned an EvaluationResult whose decision is {decision!r}, not a Continue or Interject"
    if isinstance(decision, Interject) and not isinstance(decision.interjection, Interjection):
        return f"evaluator returned an Interject holding {type(decision.interjection).__name__}, not an Interjection"
    usage = result.usage
    if not isinstance(usage, Usage) or not all(
        isinstance(n, int)
        for n in (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens)
    ):
        return f"evaluator returned an EvaluationResult whose usage is {usage!r}, not a Usage of token counts"
    if not isinstance(result.cost_usd, int | float) or not isinstance(result.raw, str):
        return "evaluator returned an EvaluationResult whose raw answer is not text or whose cost is not a number"
    return None


class Watcher:
    """One watcher attached to one parent session."""

    def __init__(
        self, spec: WatcherSpec, evaluator: Evaluator, session: Session, bus: EventBus, *, live: bool = True
    ) -> None:
        self.spec = spec
        self.evaluator = evaluator
        self.session = session
        self.status = "idle"
        self.evaluations = 0
        self.fates = Fates()  # what became of this watcher's interjections, folded from what it publishes
        self.tokens = 0
        self.cost_usd = 0.0
        self.pending: dict[str, Interjection] = {}
        self._bus = bus
        self._live = live  # live: coalesce backlogged breakpoints and run idle timers; replay: neither
        self._buffer: deque[Observation] = deque(maxlen=spec.caps.buffer_size)
        self._new = 0
        self._index = -1
        self._since_every_n = 0
        self._due: str | None = None  # a breakpoint deferred while more observations were queued
        self._turn_interjections = 0
        self._last_interjection = float("-inf")
        self._lock = asyncio.Lock()
        self._idle: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[EvaluationEvent]] = set()
        self.subscription: Subscription[Event] | None = None

    @property
    def name(self) -> str:
        """The watcher's name (unique within its session)."""
        return self.spec.name

    @property
    def interjections(self) -> int:
        """Interjections this watcher made (capped ones not counted): the same count every display shows."""
        return self.fates.count()

    def _publish(self, event: Event) -> None:
        self.fates.apply(event)
        self._bus.publish(event)

    @property
    def unevaluated(self) -> int:
        """Observations buffered since the last evaluation."""
        return self._new

    @property
    def tasks(self) -> tuple[asyncio.Task[EvaluationEvent], ...]:
        """Evaluations running in the background (idle-timer breakpoints)."""
        return tuple(self._tasks)

    @property
    def busy(self) -> bool:
        """True while an evaluation or delivery is in flight."""
        return self._lock.locked() or bool(self._tasks)

    @property
    def quiet(self) -> bool:
        """True when this watcher has judged everything published to it and nothing is in flight."""
        sub = self.subscription
        return (sub is None or sub.idle) and not self.busy

    async def settle(self) -> None:
        """Wait, on events and never by polling, until this watcher is ``quiet``."""
        while not self.quiet:
            sub = self.subscription
            if sub is not None and not sub.idle:
                await sub.settled.wait()
            elif self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            else:
                async with self._lock:  # an evaluation started outside the bus (a direct call) ends
                    pass

    # --- observing ------------------------------------------------------------------------------

    def prime(self, observations: Sequence[Observation], *, index: int | None = None, unjudged: int = 0) -> None:
        """Buffer earlier observations without evaluating them: a session resumed from the journal.

        A hooked CLI session outlives the process that judges it, so its history is read back
        from the journal; the next evaluation sees it as context, not as new observations, except
        the last ``unjudged`` of them, which no evaluation has seen yet. ``index`` is the session
        index of the last one (default: the history is the whole session).
        """
        self._buffer.extend(observations)
        if observations:
            self._index = max(self._index, len(observations) - 1 if index is None else index)
            self._new = min(max(unjudged, 0), len(observations))
            self._since_every_n = self._new  # every_n counts from the last evaluation, as if never stopped

    async def handle(self, event: Event) -> None:
        """Bus handler: take this session's observations, evaluate at breakpoints."""
        if not isinstance(event, ObservationEvent) or event.session != self.session.name:
            return
        obs = event.observation
        self._buffer.append(obs)
        self._new += 1
        self._index = event.index
        self._since_every_n += 1
        if isinstance(obs, Done):
            self._turn_interjections = 0
        triggers = self.spec.triggers
        due: str | None = next((p for p in breakpoints_of(obs) if p in triggers.on), None)
        if due is None and triggers.every_n and self._since_every_n >= triggers.every_n:
            due = "every_n"
        self._arm_idle()
        due = due or self._due
        if due is None:
            return
        if self._live and self._more_observations_queued():
            self._due = due  # a backlog of this session: judge once, when the last of it is in
            return
        self._due = None
        await self.evaluate(due)

    def _more_observations_queued(self) -> bool:
        sub = self.subscription
        if sub is None or not sub.backlog:
            return False
        return any(isinstance(e, ObservationEvent) and e.session == self.session.name for e in sub.queue)

    def _arm_idle(self) -> None:
        idle_s = self.spec.triggers.idle_s
        if idle_s is None or not self._live:
            return
        if self._idle is not None:
            self._idle.cancel()
        loop = asyncio.get_running_loop()
        self._idle = loop.call_later(idle_s, self._spawn, "idle")

    def _spawn(self, why: str) -> None:
        if self._new == 0:
            return
        task = asyncio.get_running_loop().create_task(self.evaluate(why))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- evaluating ----------------------------------------------------------------------------

    async def evaluate_session_end(self) -> EvaluationEvent | None:
        """The parent session ended (a transcript's last record, a live run's exit): a breakpoint.

        Evaluates whatever is still buffered and unjudged, so a loop or a finding in the last
        observations is judged too; ``None`` when everything was already evaluated.
        """
        self._due = None
        if self._new == 0:
            return None
        return await self.evaluate(SESSION_END)

    async def evaluate(self, breakpoint: str) -> EvaluationEvent:
        """Evaluate the buffered observations now; returns the journaled evaluation event."""
        async with self._lock:
            self._since_every_n = 0
            request = EvaluationRequest(
                spec=self.spec,
                parent=self.session.name,
                observations=tuple(self._buffer),
                new=self._new,
                index=self._index,
                breakpoint=breakpoint,
            )
            self._new = 0
            self.status = "evaluating"
            started = time.perf_counter()
            result, error = await self._run_evaluator(request)
            latency = time.perf_counter() - started
            self.status = "error" if error else "idle"
            self.evaluations += 1
            usage = result.usage
            self.tokens += usage.input_tokens + usage.output_tokens
            self.cost_usd += result.cost_usd
            decision = result.decision
            interjection: Interjection | None = None
            capped: str | None = None
            if isinstance(decision, Interject):
                capped = self._cap(decision.interjection)
                interjection = decision.interjection.with_source(self.spec.name, uuid.uuid4().hex[:12])
            event = EvaluationEvent(
                session=self.session.name,
                watcher=self.spec.name,
                index=self._index,
                breakpoint=breakpoint,
                decision="interject" if interjection else "continue",
                note=decision.note,
                raw=result.raw,
                interjection=interjection,
                capped=capped,
                error=error or decision.error,
                latency_s=latency,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_tokens=usage.cache_read_tokens,
                cache_write_tokens=usage.cache_write_tokens,
                cost_usd=result.cost_usd,
                model=result.model,
                evaluator=getattr(self.evaluator, "name", type(self.evaluator).__name__),
            )
            self._publish(event)
            if interjection is not None and capped is None:
                await self._interject(interjection)
            return event

    async def _run_evaluator(self, request: EvaluationRequest) -> tuple[EvaluationResult, str | None]:
        timeout = self.spec.caps.timeout_s
        try:
            async with asyncio.timeout(timeout):  # no extra task per evaluation, unlike wait_for
                result = await self.evaluator.evaluate(request)
        except TimeoutError:
            return EvaluationResult("", Continue()), f"evaluator timed out after {timeout:g}s"
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - fail closed: the parent is never blocked by its watcher
            error = redact(f"{type(exc).__name__}: {exc}")  # an SDK's message may quote a key
            log.warning("watcher %r: evaluator failed: %s", self.spec.name, error)
            return EvaluationResult("", Continue()), error
        problem = _malformed(result)
        if problem is not None:  # fail closed, like an exception: a continue whose error is journaled
            problem = redact(problem)
            log.warning("watcher %r: %s", self.spec.name, problem)
            return EvaluationResult("", Continue()), problem
        return result, None

    def _cap(self, interjection: Interjection) -> str | None:
        caps = self.spec.caps
        if interjection.action in ("pause", "abort"):
            return None  # stopping a runaway parent is never capped
        if self._turn_interjections >= caps.max_interjections_per_turn:
            return f"max_interjections_per_turn ({caps.max_interjections_per_turn}) reached"
        if not interjection.urgent and time.monotonic() - self._last_interjection < caps.cooldown_s:
            return f"cooldown ({caps.cooldown_s:g}s) not over"
        return None

    # --- interjecting ---------------------------------------------------------------------------

    async def _interject(self, interjection: Interjection) -> None:
        self._turn_interjections += 1
        self._last_interjection = time.monotonic()
        manual = self.spec.mode == "manual"
        self._publish(
            InterjectionEvent(
                session=self.session.name,
                watcher=self.spec.name,
                interjection=interjection,
                status=PENDING if manual else QUEUED,
                index=self._index,
            )
        )
        if manual:
            self.pending[interjection.id] = interjection
        else:
            await self.deliver(interjection)

    async def speak(self, interjection: Interjection) -> DeliveryOutcome:
        """Say ``interjection``, decided elsewhere, as this watcher: journaled ``queued``, then delivered.

        For a watcher whose judgment runs in another loop or on another machine (a fleet's
        supervisor writes its decision to the journal; the task's host speaks it here): the
        interjection keeps its id (the decision names it), is announced like one this watcher
        made, and its fate is journaled by ``deliver``. No cap applies: it was decided already.
        """
        said = interjection.with_source(self.spec.name, interjection.id or uuid.uuid4().hex[:12])
        self._publish(
            InterjectionEvent(
                session=self.session.name, watcher=self.spec.name, interjection=said, status=QUEUED, index=self._index
            )
        )
        return await self.deliver(said)

    async def deliver(self, interjection: Interjection, *, origin: Origin | None = None) -> DeliveryOutcome:
        """Hand ``interjection`` to the parent and journal its fate; never raises into the watcher.

        ``origin`` defaults to this watcher; a person's words (an editor's inject command, a
        magic) pass theirs and are journaled as such. An urgent interjection the parent only
        queued interrupts it. Returns ``delivered``, ``queued`` (the parent journals delivery
        when it reaches it), ``undeliverable`` (the parent has ended) or ``failed``.
        """
        speaker = origin or interjection.origin or Origin.of_watcher(self.spec.name)
        interjection = replace(interjection, origin=speaker)
        outcome: DeliveryOutcome
        detail = ""
        try:
            if self.session.ended:
                raise SessionEndedError(
                    f"session {self.session.name!r} has ended; interjection {interjection.id!r} was not delivered"
                )
            outcome = await self.session.inject(interjection, origin=speaker)
            if outcome == QUEUED and interjection.urgent:
                await self.session.interrupt()
        except SessionEndedError as exc:
            outcome, detail = UNDELIVERABLE, str(exc)
            log.warning("watcher %r: interjection %s undeliverable: %s", self.spec.name, interjection.id, exc)
        except Exception as exc:  # noqa: BLE001 - the parent failed to take it: record, never raise into the watcher
            outcome, detail = FAILED, f"{type(exc).__name__}: {exc}"
            log.warning("watcher %r: delivering %s failed: %s", self.spec.name, interjection.id, detail)
        self._publish(
            DeliveryEvent(
                session=self.session.name,
                watcher=self.spec.name,
                interjection_id=interjection.id,
                outcome=outcome,
                detail=detail,
                content=interjection.content,
                origin=speaker.render(),
            )
        )
        return outcome

    async def accept(self, interjection_id: str, content: str | None = None) -> DeliveryOutcome:
        """Deliver a pending interjection, optionally with edited ``content``."""
        interjection = self.pending.pop(interjection_id, None)
        if interjection is None:
            raise NotPendingError(
                f"watcher {self.spec.name!r} has no pending interjection {interjection_id!r}; "
                "it was delivered or dismissed already, or never made"
            )
        if content is not None and content.strip():
            interjection = replace(interjection, content=content.strip())
        return await self.deliver(interjection)

    def dismiss(self, interjection_id: str, reason: str = "dismissed") -> None:
        """Drop a pending interjection (or record the dismissal of a delivered one)."""
        self.pending.pop(interjection_id, None)
        self._publish(
            DeliveryEvent(
                session=self.session.name,
                watcher=self.spec.name,
                interjection_id=interjection_id,
                outcome=DISMISSED,
                detail=reason,
            )
        )

    def state(self) -> Mapping[str, object]:
        """A snapshot for displays: status, counters, pending interjections."""
        return {
            "name": self.spec.name,
            "role": self.spec.role,
            "authority": self.spec.authority,
            "mode": self.spec.mode,
            "status": self.status,
            "evaluations": self.evaluations,
            "interjections": self.interjections,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
            PENDING: [i.to_dict() for i in self.pending.values()],
        }
