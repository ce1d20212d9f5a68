"""Observations: the things that happen in a parent session, one per transcript line.

Each kind is a frozen, slotted dataclass. ``observation_from_dict`` and ``Observation.to_dict``
round-trip the JSONL transcript format of design.md; fields a kind does not know are kept in
``extra`` and written back unchanged, so a transcript from a newer tool survives a replay.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from watcher.core.errors import TranscriptError

__all__ = [
    "AssistantMessage",
    "CellError",
    "CellExecuted",
    "Condensation",
    "Done",
    "HarnessError",
    "Observation",
    "ToolCall",
    "ToolResult",
    "UserMessage",
    "observation_from_dict",
]

_COMMON = ("kind", "ts", "session", "parent_session")
_OPTIONAL_COMMON = frozenset(("ts", "session", "parent_session"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Observation:
    """Base of every observation: when it happened, in which session, and unknown fields.

    ``parent_session`` names the session that started this one (a subagent's main agent); it is
    ``None`` for a top-level session.
    """

    kind: ClassVar[str] = ""
    ts: float | None = None
    session: str | None = None
    parent_session: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The transcript record: ``kind``, the kind's fields, then the unknown ones kept."""
        out: dict[str, Any] = {"kind": self.kind}
        for name in _field_names(type(self)):
            value = getattr(self, name)
            if value is None and name in _OPTIONAL_COMMON:
                continue
            out[name] = value.to_dict() if isinstance(value, CellError) else value
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out

    def to_json(self) -> str:
        """One JSONL line (no trailing newline)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)


_FIELD_NAMES: dict[type[Observation], tuple[str, ...]] = {}


def _field_names(cls: type[Observation]) -> tuple[str, ...]:
    """The record fields of an observation class, computed once per class (``to_dict`` is hot)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls) if f.name != "extra")
    return names


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessage(Observation):
    """A message the user (or a supervisor speaking as one) sent to the parent."""

    kind: ClassVar[str] = "user_message"
    text: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage(Observation):
    """The agent's reasoning or reply text."""

    kind: ClassVar[str] = "assistant_message"
    text: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall(Observation):
    """The agent asked for a tool to run."""

    kind: ClassVar[str] = "tool_call"
    id: str = ""
    name: str = ""
    input: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult(Observation):
    """What a tool returned to the agent."""

    kind: ClassVar[str] = "tool_result"
    tool_call_id: str = ""
    output: str = ""
    is_error: bool = False
    exit_code: int | None = None


@dataclass(frozen=True, slots=True)
class CellError:
    """The exception a notebook cell raised, and the 1-based line of the cell it came from."""

    ename: str
    evalue: str = ""
    lineno: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``error`` object of a ``cell_executed`` record."""
        return {"ename": self.ename, "evalue": self.evalue, "lineno": self.lineno}


@dataclass(frozen=True, slots=True, kw_only=True)
class CellExecuted(Observation):
    """A notebook cell ran: its source, id, count, output sample and error."""

    kind: ClassVar[str] = "cell_executed"
    source: str = ""
    cell_id: str | None = None
    execution_count: int | None = None
    stdout: str = ""
    error: CellError | None = None
    duration_s: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Condensation(Observation):
    """The parent's context was trimmed or summarised."""

    kind: ClassVar[str] = "condensation"


@dataclass(frozen=True, slots=True, kw_only=True)
class HarnessError(Observation):
    """A harness-level error: a timeout, a format error (transcript kind ``error``)."""

    kind: ClassVar[str] = "error"
    text: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Done(Observation):
    """A turn of the parent ended."""

    kind: ClassVar[str] = "done"


KINDS: dict[str, type[Observation]] = {
    cls.kind: cls
    for cls in (
        UserMessage,
        AssistantMessage,
        ToolCall,
        ToolResult,
        CellExecuted,
        Condensation,
        HarnessError,
        Done,
    )
}

# field name -> (accepted types, description for the error message)
_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "text": ((str,), "a string"),
    "id": ((str,), "a string"),
    "name": ((str,), "a string"),
    "input": ((dict,), "an object"),
    "tool_call_id": ((str,), "a string"),
    "output": ((str,), "a string"),
    "is_error": ((bool,), "true or false"),
    "exit_code": ((int,), "an integer"),
    "source": ((str,), "a string"),
    "cell_id": ((str,), "a string"),
    "execution_count": ((int,), "an integer"),
    "stdout": ((str,), "a string"),
    "duration_s": ((int, float), "a number"),
    "ts": ((int, float), "a number"),
    "session": ((str,), "a string"),
    "parent_session": ((str,), "a string"),
}
_REQUIRED: dict[str, tuple[str, ...]] = {
    "user_message": ("text",),
    "assistant_message": ("text",),
    "tool_call": ("name",),
    "tool_result": ("output",),
    "cell_executed": ("source",),
    "error": ("text",),
}


def observation_from_dict(record: Mapping[str, Any]) -> Observation:
    """Build the observation a transcript record describes.

    Raises ``TranscriptError`` (without a location; the reader adds it) when the kind is unknown,
    a required field is missing, or a field has the wrong type.
    """
    if not isinstance(record, Mapping):
        raise TranscriptError(f"expected a JSON object, got {type(record).__name__}")
    kind = record.get("kind")
    cls = KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        known = ", ".join(sorted(KINDS))
        raise TranscriptError(f"unknown kind {kind!r}; expected one of: {known}")
    for name in _REQUIRED.get(cls.kind, ()):
        if name not in record:
            raise TranscriptError(f"a {cls.kind!r} record needs the field {name!r}")
    known_fields = _field_names(cls)  # cached per class: journal readers decode many rows
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in record.items():
        if key == "kind":
            continue
        if key not in known_fields:
            extra[key] = value
            continue
        if key == "error" and cls is CellExecuted:
            values[key] = _cell_error(value)
            continue
        if value is None:
            continue
        accepted, described = _TYPES[key]
        if not isinstance(value, accepted) or (isinstance(value, bool) and bool not in accepted):
            raise TranscriptError(f"field {key!r} of a {cls.kind!r} record must be {described}")
        values[key] = float(value) if key in ("ts", "duration_s") and isinstance(value, int | float) else value
    return cls(**values, extra=extra)


def _cell_error(value: Any) -> CellError | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not isinstance(value.get("ename"), str):
        raise TranscriptError("field 'error' of a 'cell_executed' record must be an object with 'ename'")
    lineno = value.get("lineno")
    return CellError(
        ename=value["ename"],
        evalue=str(value.get("evalue") or ""),
        lineno=lineno if isinstance(lineno, int) and not isinstance(lineno, bool) else None,
    )
