"""The runtime's events, the base every layer's events share, one codec and one registry.

Each event is a frozen, slotted dataclass with a ``kind`` (its ``events.kind`` in the journal).
Its journaled payload is its own fields (``session``, ``watcher`` and ``ts`` are columns), and
it is read back field by field from the field's type: an ``Interjection`` or an ``Observation``
from its dict, a tuple from a list, a ``Literal`` checked against its words; a missing or null
value takes the field's default. Declaring a subclass with a ``kind`` registers it, so spawn,
fleet and hooks declare their events in their own modules (``watcher.spawn.events``,
``watcher.fleet.events``, ``watcher.hooks._events``) and a reader that imported them reads them.
``critical`` events (interjections, deliveries, commands) are never dropped by the bus; the
others may be, under overload, and are counted.
"""

from __future__ import annotations

import functools
import logging
import time
import types
import typing
from abc import ABC
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, Literal, Protocol, TypeAlias, get_args, get_origin

from watcher.core.errors import DuplicateNameError, MalformedEventError
from watcher.core.interjection import Interjection
from watcher.core.observations import Observation, observation_from_dict

__all__ = [
    "DELIVERY_OUTCOMES",
    "EVENT_KINDS",
    "DeliveryEvent",
    "DeliveryOutcome",
    "EvaluationEvent",
    "Event",
    "InjectionOutcome",
    "InterjectionEvent",
    "ObservationEvent",
    "SessionEvent",
    "WatcherEvent",
    "event_from_payload",
    "readable",
]

InjectionOutcome: TypeAlias = Literal["queued", "delivered"]  # what a session answers when handed one
DeliveryOutcome: TypeAlias = Literal["queued", "delivered", "undeliverable", "dismissed", "failed"]
DELIVERY_OUTCOMES: tuple[DeliveryOutcome, ...] = get_args(DeliveryOutcome)

#: every event class by its ``kind``: filled as event classes are declared
EVENT_KINDS: dict[str, type[Event]] = {}

_COMMON = ("session", "watcher", "ts")


@dataclass(frozen=True, slots=True, kw_only=True)
class Event(ABC):
    """Base of every event: which session and watcher it concerns, and when."""

    kind: ClassVar[str] = ""
    critical: ClassVar[bool] = False
    session: str
    watcher: str = ""
    ts: float = field(default_factory=time.time)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super(Event, cls).__init_subclass__(**kwargs)  # (no zero-argument super in a slotted dataclass)
        known = EVENT_KINDS.get(cls.kind)
        if cls.kind and "kind" in cls.__dict__:
            if known is not None and known.__qualname__ != cls.__qualname__:  # (a slotted dataclass is made twice)
                raise DuplicateNameError(
                    f"event kind {cls.kind!r} of {cls.__qualname__} is taken by {known.__qualname__}; give it another kind"
                )
            EVENT_KINDS[cls.kind] = cls

    def payload(self) -> dict[str, Any]:
        """The JSON object stored in the journal's ``payload`` column: the event's own fields."""
        return {name: _to_json(getattr(self, name)) for name in _own_fields(type(self))}

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any], **common: Any) -> Event:
        """Rebuild from a journal row; unknown keys are ignored, missing or null ones take their defaults."""
        hints, defaults = _hints(cls), _defaulted(cls)
        values = {}
        for name in _own_fields(cls):
            value = payload.get(name)
            if value is None and (name in defaults or name not in payload):
                continue  # the default (a required field missing fails in the constructor)
            values[name] = _from_json(hints[name], value, name)
        return cls(**common, **values)


def _to_json(value: Any) -> Any:
    if isinstance(value, Interjection | Observation):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_to_json(v) for v in value]
    return value


def _from_json(hint: Any, value: Any, name: str) -> Any:
    origin, args = get_origin(hint), get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        return _from_json(next(a for a in args if a is not type(None)), value, name)
    if origin is Literal:
        if value not in args:
            raise MalformedEventError(f"unknown {name} {value!r}; expected one of {', '.join(map(str, args))}")
        return value
    if origin is tuple:
        item = args[0] if args and (len(args) == 1 or args[-1] is Ellipsis) else Any
        return tuple(_from_json(item, v, name) for v in value)
    if hint is Interjection:
        return Interjection.from_dict(value)
    if hint is Observation:
        return observation_from_dict(value)
    if hint in (int, float, str, bool):
        return hint(value)
    return value


@functools.cache
def _own_fields(cls: type[Event]) -> tuple[str, ...]:
    """An event class's own fields: not the common ones, not class variables such as ``kind``."""
    return tuple(f.name for f in fields(cls) if f.name not in _COMMON)


@functools.cache
def _defaulted(cls: type[Event]) -> frozenset[str]:
    return frozenset(f.name for f in fields(cls) if f.default is not MISSING or f.default_factory is not MISSING)


@functools.cache
def _hints(cls: type[Event]) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def event_from_payload(kind: str, payload: Mapping[str, Any], *, session: str, watcher: str, ts: float) -> Event:
    """Rebuild an event read back from the journal; raises ``MalformedEventError`` on a bad row."""
    cls = EVENT_KINDS.get(kind)
    if cls is None:
        raise MalformedEventError(f"unknown event kind {kind!r} in session {session!r}")
    try:
        return cls.from_payload(payload, session=session, watcher=watcher, ts=ts)
    except MalformedEventError as exc:
        raise MalformedEventError(f"a {kind!r} journal row of session {session!r}: {exc}") from exc
    except (KeyError, TypeError, ValueError, AttributeError, StopIteration) as exc:
        raise MalformedEventError(
            f"a {kind!r} journal row of session {session!r} cannot be read ({type(exc).__name__}: {exc}); "
            "it was written by another version or damaged, and is skipped by readers"
        ) from exc


class _Row(Protocol):
    @property
    def id(self) -> int: ...

    def event(self) -> Event: ...


def readable(rows: Iterable[_Row], log: logging.Logger, reader: str) -> Iterator[Event]:
    """The typed events of journal ``rows``; a row that cannot be read is logged (naming ``reader``) and skipped."""
    for row in rows:
        try:
            yield row.event()
        except MalformedEventError as exc:
            log.warning("%s: skipping journal row %d: %s", reader, row.id, exc)


@dataclass(frozen=True, slots=True, kw_only=True)
class ObservationEvent(Event):
    """Emitted when a parent session publishes an observation (``index`` counts from 0)."""

    kind: ClassVar[str] = "observation"
    observation: Observation
    index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class EvaluationEvent(Event):
    """Emitted when a watcher finished an evaluation, whatever it decided (errors included)."""

    kind: ClassVar[str] = "evaluation"
    index: int
    breakpoint: str
    decision: Literal["continue", "interject"]
    note: str = ""
    raw: str = ""
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
    interjection: Interjection | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class InterjectionEvent(Event):
    """Emitted when a watcher makes an interjection: ``pending`` (manual mode) or ``queued``."""

    kind: ClassVar[str] = "interjection"
    critical: ClassVar[bool] = True
    interjection: Interjection
    status: Literal["pending", "queued"] = "queued"  # rows written before the status was recorded were queued
    index: int = -1


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


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionEvent(Event):
    """Emitted when a parent session starts (``status`` started) or ends (its ``EndState``)."""

    kind: ClassVar[str] = "session"
    critical: ClassVar[bool] = True
    status: str
    detail: str = ""


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
