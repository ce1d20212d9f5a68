"""Interjections and decisions: what a watcher concludes and what it says to the parent."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias, TypedDict, get_args

from watcher.core.errors import InvalidLocationError

__all__ = [
    "ACTIONS",
    "SEVERITIES",
    "Action",
    "Continue",
    "Decision",
    "Interject",
    "Interjection",
    "InterjectionDict",
    "Location",
    "LocationDict",
    "Origin",
    "PersonChannel",
    "Severity",
    "SuggestedFix",
    "SuggestedFixDict",
]

Severity: TypeAlias = Literal["hint", "warning", "critical"]
Action: TypeAlias = Literal["nudge", "guidance", "sync", "pause", "abort"]
PersonChannel: TypeAlias = Literal["panel", "editor", "magic", "python"]
SEVERITIES: tuple[Severity, ...] = get_args(Severity)
ACTIONS: tuple[Action, ...] = get_args(Action)
PERSON_CHANNELS: tuple[PersonChannel, ...] = get_args(PersonChannel)


class LocationDict(TypedDict, total=False):
    """The wire form of a ``Location``: ``path``, ``cell_id`` or a cell's number/index, and its lines."""

    path: str | None
    cell_id: str | None
    execution_count: int
    cell_index: int
    start_line: int
    end_line: int


class SuggestedFixDict(TypedDict):
    """The wire form of a ``SuggestedFix``."""

    location: LocationDict
    replacement: str
    title: str


class InterjectionDict(TypedDict):
    """The wire form of an ``Interjection`` (journal, widgets, language server, ``--json``)."""

    id: str
    watcher: str
    content: str
    urgent: bool
    severity: Severity
    action: Action
    locations: list[LocationDict]
    fix: SuggestedFixDict | None
    origin: str | None


@dataclass(frozen=True, slots=True)
class Origin:
    """Who speaks: a watcher by name, or a person through a panel, an editor, a magic or Python.

    Carried on the interjection and journaled, so a parent formats a person's words as guidance
    and a watcher's as the watcher's, without guessing.
    """

    watcher: str = ""
    person: PersonChannel | None = None

    def __post_init__(self) -> None:
        if bool(self.watcher) == (self.person is not None):
            raise InvalidLocationError(
                f"Origin(watcher={self.watcher!r}, person={self.person!r}) names both or neither: "
                "use Origin.of_watcher(name) or Origin.of_person('panel'|'editor'|'magic'|'python')"
            )

    @classmethod
    def of_watcher(cls, name: str) -> Origin:
        """A watcher speaks (``name`` is the watcher's name)."""
        return cls(watcher=name)

    @classmethod
    def of_person(cls, via: PersonChannel) -> Origin:
        """A person speaks through ``via``: a panel, an editor, a magic or the Python API."""
        return cls(person=via)

    @property
    def by_person(self) -> bool:
        """True when a person (not a watcher) speaks."""
        return self.person is not None

    def render(self) -> str:
        """The journaled form: ``watcher:NAME`` or ``person:panel`` (``editor``, ``magic``, ``python``)."""
        return f"person:{self.person}" if self.person is not None else f"watcher:{self.watcher}"

    @classmethod
    def parse(cls, text: object) -> Origin | None:
        """Inverse of ``render``; None for anything else (old journals carry no origin)."""
        if not isinstance(text, str):
            return None
        kind, _, rest = text.partition(":")
        if kind == "watcher" and rest:
            return cls(watcher=rest)
        for via in PERSON_CHANNELS:
            if kind == "person" and rest == via:
                return cls(person=via)
        return None


@dataclass(frozen=True, slots=True)
class Location:
    """Where an interjection points: a file ``path`` or a notebook ``cell_id``, and 1-based lines.

    The lines count within the observed file content or cell source, so an editor can place a
    diagnostic on them. A cell that has no id (nbclient, nbval, classic notebooks, replayed
    notebooks) is named by its ``execution_count`` (``In [7]``) and/or its ``cell_index`` (the
    1-based order in which the watcher saw the cells run), so a person can still find the line.
    """

    path: str | None = None
    cell_id: str | None = None
    start_line: int = 1
    end_line: int | None = None
    execution_count: int | None = None
    cell_index: int | None = None

    def __post_init__(self) -> None:
        if self.path is not None and self.cell_id is not None:
            raise InvalidLocationError(
                f"Location(path={self.path!r}, cell_id={self.cell_id!r}) names both: give a path or a cell, not both"
            )
        if self.path is None and self.cell_id is None and self.execution_count is None and self.cell_index is None:
            raise InvalidLocationError(
                "Location names neither a path nor a cell: give a path, a cell_id, or a cell's execution_count or cell_index"
            )
        if self.start_line < 1 or (self.end_line is not None and self.end_line < self.start_line):
            raise InvalidLocationError(
                f"Location line range {self.start_line}-{self.end_line} is invalid: lines are 1-based and end >= start"
            )

    @property
    def last_line(self) -> int:
        """The last line of the range (``start_line`` when no end was given)."""
        return self.end_line if self.end_line is not None else self.start_line

    def to_dict(self) -> LocationDict:
        """The JSON form used by the journal and ``watcher replay --json``."""
        wire: LocationDict = {}
        if self.path is not None:
            wire["path"] = self.path
        elif self.cell_id is not None:
            wire["cell_id"] = self.cell_id
        if self.execution_count is not None:
            wire["execution_count"] = self.execution_count
        if self.cell_index is not None:
            wire["cell_index"] = self.cell_index
        wire["start_line"] = self.start_line
        wire["end_line"] = self.last_line
        return wire

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Location:
        """Inverse of ``to_dict``."""
        return cls(
            path=data.get("path"),
            cell_id=data.get("cell_id"),
            start_line=int(data.get("start_line") or 1),
            end_line=data.get("end_line"),
            execution_count=_int_or_none(data.get("execution_count")),
            cell_index=_int_or_none(data.get("cell_index")),
        )

    def render(self) -> str:
        """The ``location:`` field value of the protocol: ``auth.js:2-3`` or ``cell:ID:4``.

        A cell without an id renders as ``In[7]:4`` (its execution count) or ``cell #3:4``.
        """
        if self.path is not None:
            target = self.path
        elif self.cell_id is not None:
            target = f"cell:{self.cell_id}"
        elif self.execution_count is not None:
            target = f"In[{self.execution_count}]"
        else:
            target = f"cell #{self.cell_index}"
        lines = str(self.start_line) if self.last_line == self.start_line else f"{self.start_line}-{self.last_line}"
        return f"{target}:{lines}"


def _int_or_none(value: Any) -> int | None:
    return int(value) if isinstance(value, int | str) and str(value).lstrip("-").isdigit() else None


@dataclass(frozen=True, slots=True)
class SuggestedFix:
    """A mechanical fix: replace the lines of ``location`` with ``replacement``."""

    location: Location
    replacement: str
    title: str = "Apply suggested fix"

    def to_dict(self) -> SuggestedFixDict:
        """The JSON form used by the journal."""
        return {"location": self.location.to_dict(), "replacement": self.replacement, "title": self.title}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SuggestedFix:
        """Inverse of ``to_dict``."""
        return cls(
            Location.from_dict(data["location"]),
            str(data["replacement"]),
            str(data.get("title") or "Apply suggested fix"),
        )


@dataclass(frozen=True, slots=True)
class Interjection:
    """What a watcher says to its parent session.

    ``urgent`` interjections interrupt the parent now; the others wait for a natural breakpoint.
    ``action`` says how the parent should take it: ``guidance`` (the default: advice to act on),
    ``nudge`` (you are stuck, try something else), ``sync`` (news from another session),
    ``pause`` or ``abort`` (stop). ``origin`` says who speaks (None: the watcher named ``watcher``).
    """

    content: str
    urgent: bool = False
    severity: Severity = "warning"
    action: Action = "guidance"
    locations: tuple[Location, ...] = ()
    fix: SuggestedFix | None = None
    watcher: str = ""
    id: str = ""
    origin: Origin | None = None

    def with_source(self, watcher: str, id: str) -> Interjection:
        """The same interjection, stamped with the watcher that made it (its origin) and a unique id."""
        return replace(self, watcher=watcher, id=id, origin=Origin.of_watcher(watcher))

    @property
    def speaker(self) -> Origin:
        """Who speaks: ``origin``, or the watcher named ``watcher`` when none was recorded."""
        return self.origin if self.origin is not None else Origin.of_watcher(self.watcher or "watcher")

    def to_dict(self) -> InterjectionDict:
        """The JSON form used by the journal, the widgets and the language server."""
        return {
            "id": self.id,
            "watcher": self.watcher,
            "content": self.content,
            "urgent": self.urgent,
            "severity": self.severity,
            "action": self.action,
            "locations": [loc.to_dict() for loc in self.locations],
            "fix": self.fix.to_dict() if self.fix else None,
            "origin": self.origin.render() if self.origin is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Interjection:
        """Inverse of ``to_dict``; unknown severities and actions fall back to the defaults."""
        severity = data.get("severity")
        action = data.get("action")
        fix = data.get("fix")
        return cls(
            content=str(data.get("content") or ""),
            urgent=bool(data.get("urgent")),
            severity=severity if severity in SEVERITIES else "warning",
            action=action if action in ACTIONS else "guidance",
            locations=tuple(Location.from_dict(x) for x in data.get("locations") or ()),
            fix=SuggestedFix.from_dict(fix) if isinstance(fix, Mapping) else None,
            watcher=str(data.get("watcher") or ""),
            id=str(data.get("id") or ""),
            origin=Origin.parse(data.get("origin")),
        )


@dataclass(frozen=True, slots=True)
class Continue:
    """The watcher saw nothing to act on; ``note`` is what it observed, for its own context."""

    note: str = ""
    error: str | None = field(default=None)

    @property
    def interjection(self) -> None:
        """Always None: a continue carries no interjection."""
        return None


@dataclass(frozen=True, slots=True)
class Interject:
    """The watcher decided to speak to the parent."""

    interjection: Interjection
    note: str = ""
    error: str | None = field(default=None)


Decision: TypeAlias = Continue | Interject
