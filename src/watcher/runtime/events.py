"""Every event the runtime publishes, journals and lets other processes follow.

Each event is a frozen, slotted dataclass with a ``kind`` (its ``events.kind`` in the journal)
and a JSON ``payload``. ``critical`` events (interjections, deliveries, commands) are never
dropped by the bus; the others may be, under overload, and are counted.
"""

from __future__ import annotations

import functools
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar, Literal, TypeAlias, TypedDict, get_args

from watcher.core.errors import MalformedEventError
from watcher.core.interjection import Interjection, InterjectionDict
from watcher.core.observations import Observation, observation_from_dict

__all__ = [
    "EVENT_KINDS",
    "FLEET_EVENT_KINDS",
    "SPAWN_EVENT_KINDS",
    "DeliveryEvent",
    "DeliveryOutcome",
    "DeliveryPayload",
    "EvaluationEvent",
    "EvaluationPayload",
    "Event",
    "FleetEvent",
    "FleetTask",
    "HookEvent",
    "InterjectionEvent",
    "InterjectionPayload",
    "LLMCompleted",
    "LLMStarted",
    "LearningExtracted",
    "ObservationEvent",
    "ObservationPayload",
    "PRCreated",
    "PermissionDenied",
    "ProgressUpdate",
    "RecoveryAttempt",
    "SandboxCreated",
    "SessionEvent",
    "SessionPayload",
    "SpawnEvent",
    "SupervisionReport",
    "SyncMessageSent",
    "TaskHealthCheck",
    "TaskHostBeat",
    "TaskLost",
    "TaskTurn",
    "WatcherAbort",
    "WatcherEvent",
    "WatcherNudge",
    "WatcherPause",
    "WatcherPayload",
    "event_from_payload",
]


DeliveryOutcome: TypeAlias = Literal["queued", "delivered", "undeliverable", "dismissed", "failed"]
DELIVERY_OUTCOMES: tuple[DeliveryOutcome, ...] = get_args(DeliveryOutcome)


class ObservationPayload(TypedDict):
    """The journaled payload of an ``ObservationEvent``."""

    index: int
    observation: dict[str, Any]  # ``Observation.to_dict()``: its fields vary with its kind


class EvaluationPayload(TypedDict):
    """The journaled payload of an ``EvaluationEvent``."""

    index: int
    breakpoint: str
    decision: Literal["continue", "interject"]
    note: str
    raw: str
    capped: str | None
    error: str | None
    latency_s: float
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float
    model: str
    evaluator: str
    interjection: InterjectionDict | None


class InterjectionPayload(TypedDict):
    """The journaled payload of an ``InterjectionEvent``."""

    interjection: InterjectionDict
    status: Literal["pending", "queued"]
    index: int


class DeliveryPayload(TypedDict):
    """The journaled payload of a ``DeliveryEvent``."""

    interjection_id: str
    outcome: DeliveryOutcome
    detail: str
    content: str | None
    origin: str


class SessionPayload(TypedDict):
    """The journaled payload of a ``SessionEvent``."""

    status: str
    detail: str


class WatcherPayload(TypedDict):
    """The journaled payload of a ``WatcherEvent``."""

    status: str
    role: str
    mode: str
    authority: str
    evaluator: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Event(ABC):
    """Base of every runtime event: which session and watcher it concerns, and when."""

    kind: ClassVar[str] = ""
    critical: ClassVar[bool] = False
    session: str
    watcher: str = ""
    ts: float = field(default_factory=time.time)

    @abstractmethod
    def payload(self) -> Mapping[str, Any]:
        """The JSON object stored in the journal's ``payload`` column (a ``TypedDict`` per kind)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ObservationEvent(Event):
    """Emitted when a parent session publishes an observation (``index`` counts from 0)."""

    kind: ClassVar[str] = "observation"
    observation: Observation
    index: int

    def payload(self) -> ObservationPayload:
        return {"index": self.index, "observation": self.observation.to_dict()}


@dataclass(frozen=True, slots=True, kw_only=True)
class EvaluationEvent(Event):
    """Emitted when a watcher finished an evaluation, whatever it decided (errors included)."""

    kind: ClassVar[str] = "evaluation"
    index: int
    breakpoint: str
    decision: Literal["continue", "interject"]
    note: str = ""
    raw: str = ""
    interjection: Interjection | None = None
    capped: str | None = None
    error: str | None = None
    latency_s: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    model: str = ""
    evaluator: str = ""

    def payload(self) -> EvaluationPayload:
        return {
            "index": self.index,
            "breakpoint": self.breakpoint,
            "decision": self.decision,
            "note": self.note,
            "raw": self.raw,
            "capped": self.capped,
            "error": self.error,
            "latency_s": self.latency_s,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cost_usd": self.cost_usd,
            "model": self.model,
            "evaluator": self.evaluator,
            "interjection": self.interjection.to_dict() if self.interjection else None,
        }


_EVALUATION_FIELDS = [
    "index",
    "breakpoint",
    "decision",
    "note",
    "raw",
    "capped",
    "error",
    "latency_s",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cost_usd",
    "model",
    "evaluator",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class InterjectionEvent(Event):
    """Emitted when a watcher makes an interjection: ``pending`` (manual mode) or ``queued``."""

    kind: ClassVar[str] = "interjection"
    critical: ClassVar[bool] = True
    interjection: Interjection
    status: Literal["pending", "queued"]
    index: int = -1

    def payload(self) -> InterjectionPayload:
        return {"interjection": self.interjection.to_dict(), "status": self.status, "index": self.index}


@dataclass(frozen=True, slots=True, kw_only=True)
class DeliveryEvent(Event):
    """Emitted when an interjection is handed on or settled: queued, delivered, undeliverable, dismissed, failed."""

    kind: ClassVar[str] = "delivery"
    critical: ClassVar[bool] = True
    interjection_id: str
    outcome: DeliveryOutcome
    detail: str = ""
    content: str | None = None  # the text handed to the parent (a person may have edited it)
    origin: str = ""  # who spoke (``Origin.render()``): ``watcher:NAME`` or ``person:panel``…

    def payload(self) -> DeliveryPayload:
        return {
            "interjection_id": self.interjection_id,
            "outcome": self.outcome,
            "detail": self.detail,
            "content": self.content,
            "origin": self.origin,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionEvent(Event):
    """Emitted when a parent session starts or ends (``status``: started, ended, paused, aborted)."""

    kind: ClassVar[str] = "session"
    critical: ClassVar[bool] = True
    status: str
    detail: str = ""

    def payload(self) -> SessionPayload:
        return {"status": self.status, "detail": self.detail}


@dataclass(frozen=True, slots=True, kw_only=True)
class WatcherEvent(Event):
    """Emitted when a watcher is attached to or detached from a session, or changes status."""

    kind: ClassVar[str] = "watcher"
    critical: ClassVar[bool] = True
    status: str  # "attached" | "detached" | "idle" | "evaluating" | "error"
    role: str = ""
    mode: str = ""
    authority: str = ""
    evaluator: str = ""

    def payload(self) -> WatcherPayload:
        return {
            "status": self.status,
            "role": self.role,
            "mode": self.mode,
            "authority": self.authority,
            "evaluator": self.evaluator,
        }


EVENT_KINDS: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (ObservationEvent, EvaluationEvent, InterjectionEvent, DeliveryEvent, SessionEvent, WatcherEvent)
}


def event_from_payload(kind: str, payload: Mapping[str, Any], *, session: str, watcher: str, ts: float) -> Event:
    """Rebuild an event read back from the journal; raises ``MalformedEventError`` on a bad row."""
    try:
        return _event_from_payload(kind, payload, session=session, watcher=watcher, ts=ts)
    except MalformedEventError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise MalformedEventError(
            f"a {kind!r} journal row of session {session!r} cannot be read ({type(exc).__name__}: {exc}); "
            "it was written by another version or damaged, and is skipped by readers"
        ) from exc


def _announcement_status(value: object) -> Literal["pending", "queued"]:
    if value == "pending":
        return "pending"
    if value in ("queued", None):  # rows written before the status was recorded were queued
        return "queued"
    raise MalformedEventError(f"unknown interjection status {value!r}")


def _event_from_payload(kind: str, payload: Mapping[str, Any], *, session: str, watcher: str, ts: float) -> Event:
    common: dict[str, Any] = {"session": session, "watcher": watcher, "ts": ts}
    if kind == "observation":
        return ObservationEvent(
            **common, observation=observation_from_dict(payload["observation"]), index=int(payload["index"])
        )
    if kind == "evaluation":
        values = {name: payload[name] for name in _EVALUATION_FIELDS if name in payload}
        if values.get("decision") not in ("continue", "interject"):
            raise MalformedEventError(f"unknown decision {values.get('decision')!r} in session {session!r}")
        found = payload.get("interjection")
        return EvaluationEvent(**common, **values, interjection=Interjection.from_dict(found) if found else None)
    if kind == "interjection":
        return InterjectionEvent(
            **common,
            interjection=Interjection.from_dict(payload["interjection"]),
            status=_announcement_status(payload.get("status")),
            index=int(payload.get("index", -1)),
        )
    if kind == "delivery":
        outcome = payload["outcome"]
        if outcome not in DELIVERY_OUTCOMES:
            raise MalformedEventError(f"unknown delivery outcome {outcome!r} in session {session!r}")
        content = payload.get("content")
        return DeliveryEvent(
            **common,
            interjection_id=str(payload["interjection_id"]),
            outcome=outcome,
            detail=str(payload.get("detail") or ""),
            content=content if isinstance(content, str) else None,
            origin=str(payload.get("origin") or ""),
        )
    if kind == "session":
        return SessionEvent(**common, status=str(payload["status"]), detail=str(payload.get("detail") or ""))
    if kind == "watcher":
        text = {k: str(payload.get(k) or "") for k in ("status", "role", "mode", "authority", "evaluator")}
        return WatcherEvent(
            **common,
            status=text["status"],
            role=text["role"],
            mode=text["mode"],
            authority=text["authority"],
            evaluator=text["evaluator"],
        )
    if kind == "hook":
        return HookEvent(
            **common,
            event=str(payload["event"]),
            answer=str(payload["answer"]),
            latency_ms=float(payload.get("latency_ms") or 0.0),
            turn=str(payload.get("turn") or ""),
            detail=str(payload.get("detail") or ""),
            carried=tuple(str(i) for i in payload.get("carried") or ()),
            pause=str(payload.get("pause") or ""),
            problems=tuple(str(p) for p in payload.get("problems") or ()),
        )
    if kind in SPAWN_EVENT_KINDS:
        return SPAWN_EVENT_KINDS[kind].from_payload(payload, **common)
    if kind in FLEET_EVENT_KINDS:
        return FLEET_EVENT_KINDS[kind].from_payload(payload, **common)
    raise MalformedEventError(f"unknown event kind {kind!r} in session {session!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class HookEvent(Event):
    """Emitted once per CLI hook call (``watcher hook``): the event, what it answered, how fast."""

    kind: ClassVar[str] = "hook"
    event: str
    answer: str  # "none" | "deny" | "context" | "block" | "late" (past the budget: nothing said)
    latency_ms: float = 0.0
    turn: str = ""
    detail: str = ""
    carried: tuple[str, ...] = ()  # ids of the interjections the answer took to the CLI
    pause: str = ""  # a pause the CLI ignored at this event: the next tool call is stopped with it
    problems: tuple[str, ...] = ()  # evaluators that could not be made or failed lately (``hooks status``)

    def payload(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "answer": self.answer,
            "latency_ms": round(self.latency_ms, 2),
            "turn": self.turn,
            "detail": self.detail,
            "carried": list(self.carried),
            "pause": self.pause,
            "problems": list(self.problems),
        }


EVENT_KINDS[HookEvent.kind] = HookEvent


# --- spawn: a real agent CLI in a worktree (seed 002's events) -----------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SpawnEvent(Event):
    """Base of the spawn events: the payload is the event's own fields, so they round-trip as-is."""

    def payload(self) -> dict[str, Any]:
        return {name: _plain(getattr(self, name)) for name in _own_fields(type(self))}

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any], **common: Any) -> SpawnEvent:
        """Rebuild from a journal row; unknown keys are ignored, missing ones take their defaults."""
        names = set(_own_fields(cls))
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in payload.items() if k in names}
        return cls(**{**common, **values})


@functools.cache
def _own_fields(cls: type[Event]) -> tuple[str, ...]:
    """An event class's own fields: not the common ones, not class variables such as ``kind`` (cached per class)."""
    return tuple(f.name for f in fields(cls) if f.name not in ("session", "watcher", "ts"))


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxCreated(SpawnEvent):
    """Emitted when a spawn's branch and worktree are ready (``provision_ms`` it took)."""

    kind: ClassVar[str] = "sandbox_created"
    critical: ClassVar[bool] = True
    spawn_id: str
    branch: str
    worktree: str
    base: str
    agent: str
    provision_ms: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMStarted(SpawnEvent):
    """Emitted when the agent CLI process starts (a first run, a resume or a recovery run)."""

    kind: ClassVar[str] = "llm_started"
    critical: ClassVar[bool] = True
    spawn_id: str
    agent: str
    pid: int
    attempt: int = 0
    resume: str = ""  # the CLI session resumed, if any
    argv: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ProgressUpdate(SpawnEvent):
    """Emitted while the agent CLI works: a snapshot of files, commands, output and cost."""

    kind: ClassVar[str] = "progress"
    spawn_id: str
    elapsed_s: float
    files_read: tuple[str, ...] = ()
    files_written: tuple[str, ...] = ()
    output_lines: int = 0
    last_tool: str = ""
    cost_usd: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionDenied(SpawnEvent):
    """Emitted when the agent CLI was refused a tool or command; ``fix`` is the widening computed, if any."""

    kind: ClassVar[str] = "permission_error"
    critical: ClassVar[bool] = True
    spawn_id: str
    tool: str
    detail: str = ""
    fix: str = ""
    objection: str = ""  # why the widening cannot be made automatically (the security role objects)


@dataclass(frozen=True, slots=True, kw_only=True)
class RecoveryAttempt(SpawnEvent):
    """Emitted when a fix was applied to the manifest (or refused) and the run is resumed (or not)."""

    kind: ClassVar[str] = "recovery"
    critical: ClassVar[bool] = True
    spawn_id: str
    strategy: str
    attempt: int
    fix: str
    outcome: str  # "resumed" | "refused" | "declined"
    detail: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMCompleted(SpawnEvent):
    """Emitted when the agent CLI process ended: its status, exit code and the agent's summary."""

    kind: ClassVar[str] = "llm_completed"
    critical: ClassVar[bool] = True
    spawn_id: str
    status: str  # "success" | "failed" | "timeout" | "interrupted" | "crashed"
    exit_code: int | None = None
    cli_session: str = ""
    summary: str = ""
    cost_usd: float = 0.0
    detail: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class PRCreated(SpawnEvent):
    """Emitted when the spawn's branch was pushed and its pull request opened."""

    kind: ClassVar[str] = "pr_created"
    critical: ClassVar[bool] = True
    spawn_id: str
    number: int
    url: str
    head: str
    base: str


SPAWN_EVENT_KINDS: dict[str, type[SpawnEvent]] = {
    cls.kind: cls
    for cls in (SandboxCreated, LLMStarted, ProgressUpdate, PermissionDenied, RecoveryAttempt, LLMCompleted, PRCreated)
}
EVENT_KINDS.update(SPAWN_EVENT_KINDS)


# --- fleet: many agent tasks, a watcher loop and a syncer loop (``watcher fleet``) ----------------


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetEvent(SpawnEvent):
    """Base of the fleet events: ``session`` is the task, ``fleet`` the fleet's name; the payload is the event's own fields."""

    fleet: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetTask(FleetEvent):
    """Emitted when a fleet starts a task: what the supervision loops need to know of it, from any process.

    ``run`` tells one run of a fleet from another run of the same name in the same journal (a tasks
    file run again): readers show the latest run, and a task announced again starts afresh.
    """

    kind: ClassVar[str] = "fleet_task"
    critical: ClassVar[bool] = True
    agent: str = "anthropic"
    model: str = ""
    tags: tuple[str, ...] = ()
    parent: str = ""
    directory: str = ""
    run: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskTurn(FleetEvent):
    """Emitted by a fleet task at each iteration boundary: its summary for the watcher loop.

    Written on the task's side (where its observations are), so the watcher loop reads one row per
    task instead of every observation. Counters are cumulative (a reader that skips rows misses
    nothing); ``findings`` are the stuck detectors' latest findings, each with its ``seq``;
    ``answered`` is the last interjection a response came after.
    """

    kind: ClassVar[str] = "task_turn"
    step: int
    input_tokens: int = 0
    output_tokens: int = 0
    progress: int = 0  # file changes plus new successes the stuck tracker saw
    files_changed: int = 0
    finding_count: int = 0
    findings: tuple[dict[str, Any], ...] = ()  # the latest few: seq, rule, subject, count, action, detail
    tools: tuple[tuple[str, bool, float, str], ...] = ()  # the latest calls: name, success, seconds, result head
    conversation: tuple[str, ...] = ()  # the latest messages, clipped
    answered: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskHealthCheck(FleetEvent):
    """Emitted per task and watcher cycle: health, freshness, counters, diagnosis (droppable)."""

    kind: ClassVar[str] = "task_health"
    cycle: int
    health: str  # healthy | stuck | stale | very_stale | paused | degraded
    status: str  # running | paused
    freshness: str
    iteration: int = 0
    tokens: int = 0
    nudges: int = 0
    idle_s: float = 0.0
    recommendation: str = "continue"
    diagnosis: str = ""
    degraded: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class WatcherNudge(FleetEvent):
    """Emitted when a nudge is persisted, before it is handed to the task (``by``: fleet or a person)."""

    kind: ClassVar[str] = "watcher_nudge"
    critical: ClassVar[bool] = True
    interjection_id: str
    severity: str
    message: str
    count: int = 0
    by: str = "fleet"


@dataclass(frozen=True, slots=True, kw_only=True)
class WatcherPause(FleetEvent):
    """Emitted when a task is paused at its next boundary, or resumed (``resumed``)."""

    kind: ClassVar[str] = "watcher_pause"
    critical: ClassVar[bool] = True
    reason: str
    by: str = "fleet"
    resumed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class WatcherAbort(FleetEvent):
    """Emitted when a task is aborted by the fleet's watcher loop or a person."""

    kind: ClassVar[str] = "watcher_abort"
    critical: ClassVar[bool] = True
    reason: str
    by: str = "fleet"


@dataclass(frozen=True, slots=True, kw_only=True)
class LearningExtracted(FleetEvent):
    """Emitted when the syncer extracts a learning from a task's observation (the knowledge store)."""

    kind: ClassVar[str] = "learning_extracted"
    critical: ClassVar[bool] = True
    learning_id: str
    text: str
    source: str  # tool_result | assistant_text | llm
    urgency: str  # blocking | helpful | fyi
    observation: int = -1  # index of the observation it came from
    tags: tuple[str, ...] = ()
    directories: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncMessageSent(FleetEvent):
    """Emitted when a learning is persisted for a recipient (``session``), before delivery or queued while paused."""

    kind: ClassVar[str] = "sync_message"
    critical: ClassVar[bool] = True
    interjection_id: str
    learning_id: str
    source_task: str
    urgency: str
    text: str
    status: str = "sent"  # sent | queued (the recipient is paused) | delivered_on_resume | undeliverable
    observation: int = -1
    recipients: tuple[str, ...] = ()  # one row for the same sync to several tasks (``session`` is the first)

    def each(self) -> tuple[SyncMessageSent, ...]:
        """One event per recipient (a batched row expanded; interjection ids are ``sync-<learning>-<task>``)."""
        if not self.recipients:
            return (self,)
        return tuple(
            replace(self, session=r, interjection_id=f"sync-{self.learning_id}-{r}", recipients=())
            for r in self.recipients
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class SupervisionReport(FleetEvent):
    """Emitted after each supervision cycle (``session`` is ``fleet:<name>``): the loops' health and counters."""

    kind: ClassVar[str] = "fleet_supervision"
    watcher_alive: bool = False
    syncer_alive: bool = False
    last_watcher_cycle: float | None = None
    last_syncer_cycle: float | None = None
    degraded: bool = False
    watcher_restarts: int = 0
    syncer_restarts: int = 0
    watcher_cycles: int = 0
    syncer_cycles: int = 0
    evaluator_failures: int = 0
    syncs_dropped: int = 0  # over a recipient's rate limit
    syncs_duplicate: int = 0  # the same learning again within the TTL


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskHostBeat(FleetEvent):
    """Emitted every few seconds by a fleet's task host while it runs (``session`` is ``host:<run>``).

    The supervision loops tell a live host from a dead one by it: a host that stopped beating
    took its tasks with it (they are ``lost``, not stuck).
    """

    kind: ClassVar[str] = "task_host_beat"
    critical: ClassVar[bool] = True
    run: str
    tasks: int = 0  # how many of its tasks are still running


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskLost(FleetEvent):
    """Emitted by the supervisor when a task's host stopped beating: nothing runs the task any more."""

    kind: ClassVar[str] = "task_lost"
    critical: ClassVar[bool] = True
    run: str
    reason: str


FLEET_EVENT_KINDS: dict[str, type[SpawnEvent]] = {
    cls.kind: cls
    for cls in (
        FleetTask,
        TaskTurn,
        TaskHealthCheck,
        WatcherNudge,
        WatcherPause,
        WatcherAbort,
        LearningExtracted,
        SyncMessageSent,
        SupervisionReport,
        TaskHostBeat,
        TaskLost,
    )
}
EVENT_KINDS.update(FLEET_EVENT_KINDS)
