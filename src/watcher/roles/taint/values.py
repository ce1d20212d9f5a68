"""What the taint engine knows about a value: where untrusted data in it came from, and its constant.

A ``Value`` is immutable. ``origins`` are the sources whose data may be in it (each with the
variables it went through and the sink classes a sanitiser cleared it for); ``const`` is its
folded constant when it is the same on every path (``NO_CONST`` otherwise); ``parts`` are the
known members of a container or object — dict keys, list indices, attributes — so that reading
another key than the tainted one yields only what was stored there. ``tags`` carry facts a
language spec attaches (a normalised path, a parser resolving external entities).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

__all__ = ["ANY_KEY", "FUNCTION", "NO_CONST", "Origin", "Value", "merge", "union"]


class _NoConst:
    """The marker for "not a constant" (``None`` is a constant)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_CONST"


NO_CONST: Final[Any] = _NoConst()
ANY_KEY: Final[str] = "\0any"  # the part of a container whose key or index is not known
_MAX_VIA = 6


@dataclass(frozen=True, slots=True)
class Origin:
    """One source of data: what it is (``label``), how it reads, its line, and what it went through.

    ``label`` is ``"input"`` for untrusted input; a spec may use others (``"weak-random"``,
    ``"weak-hash"``, ``"unknown"`` for a parameter nobody vouches for). ``cleared`` names the
    sink classes a sanitiser made this data safe for (``"*"``: all of them).
    """

    label: str
    name: str
    line: int
    via: tuple[str, ...] = ()
    cleared: frozenset[str] = frozenset()

    def safe_for(self, sink_class: str) -> bool:
        """Whether a sanitiser cleared this data for ``sink_class``."""
        return "*" in self.cleared or sink_class in self.cleared

    def through(self, name: str) -> Origin:
        """The same data, having gone through variable ``name``."""
        if not name or (self.via and self.via[-1] == name) or len(self.via) >= _MAX_VIA:
            return self
        return Origin(self.label, self.name, self.line, (*self.via, name), self.cleared)


@dataclass(frozen=True, slots=True)
class Value:
    """The engine's knowledge of one value (see the module docstring)."""

    origins: frozenset[Origin] = frozenset()
    const: Any = NO_CONST
    parts: Mapping[Any, Value] | None = None
    tags: frozenset[str] = frozenset()
    seq: tuple[Value, ...] | None = field(default=None)  # a list or tuple whose elements are known in order

    @property
    def constant(self) -> bool:
        """Whether the value is a known constant."""
        return self.const is not NO_CONST

    def labelled(self, *labels: str) -> frozenset[Origin]:
        """The origins with one of ``labels``."""
        return frozenset(o for o in self.origins if o.label in labels)

    def reaching(self, sink_class: str, labels: Iterable[str] = ("input",)) -> list[Origin]:
        """The origins with one of ``labels`` that no sanitiser cleared for ``sink_class``, in a stable order."""
        wanted = set(labels)
        return sorted(
            (o for o in self.all_origins() if o.label in wanted and not o.safe_for(sink_class)),
            key=lambda o: (o.line, o.name, o.via),
        )

    def all_origins(self) -> frozenset[Origin]:
        """Origins of the value and of everything it holds."""
        out = set(self.origins)
        for part in (self.parts or {}).values():
            out |= part.all_origins()
        for item in self.seq or ():
            out |= item.all_origins()
        return frozenset(out)

    def through(self, name: str) -> Value:
        """The value stored under variable ``name``: its origins record the name."""
        if not self.origins and not self.parts and not self.seq:
            return self
        return replace(
            self,
            origins=frozenset(o.through(name) for o in self.origins),
            parts={k: v.through(name) for k, v in self.parts.items()} if self.parts else self.parts,
            seq=tuple(v.through(name) for v in self.seq) if self.seq else self.seq,
        )

    def cleared(self, classes: frozenset[str]) -> Value:
        """The value after a sanitiser for ``classes`` (``{"*"}``: every class)."""
        return Value(
            origins=frozenset(Origin(o.label, o.name, o.line, o.via, o.cleared | classes) for o in self.all_origins()),
            tags=self.tags,
        )

    def flat(self) -> Value:
        """The value as one opaque thing: its parts' origins folded into it, constant kept."""
        if not self.parts and not self.seq:
            return self
        return Value(origins=self.all_origins(), const=self.const, tags=self.tags)

    def part(self, key: Any) -> Value:
        """The member under ``key``: the stored one when known, else all that may be there."""
        seq = self.seq
        if seq is not None and isinstance(key, int) and not isinstance(key, bool) and -len(seq) <= key < len(seq):
            return seq[key]
        if self.parts is not None:
            if key is not NO_CONST and key in self.parts:
                return self.parts[key]
            if ANY_KEY in self.parts:
                return self.parts[ANY_KEY]
            if key is not NO_CONST and not self.origins:
                return Value()  # a key never stored: nothing (the program would raise)
        if self.constant:
            try:
                return Value(const=self.const[key])
            except Exception:  # noqa: BLE001 - folding is best effort: any failure means "not known"
                pass
        return Value(origins=self.all_origins())


FUNCTION: Final[Value] = Value(tags=frozenset({"function"}))  # a function of the file, held by a name


def union(values: Iterable[Value]) -> Value:
    """A value built from all of ``values`` (``a + b``, ``f"{a}{b}"``): their origins; no constant.

    Tags describe an object (a module, a request, a normalised path); what is built from it is not
    that — except ``text:`` tags, which describe the literal text a string was built around (SQL).
    """
    origins: set[Origin] = set()
    tags: set[str] = set()
    for v in values:
        origins |= v.all_origins()
        if v.tags:
            tags.update(t for t in v.tags if t.startswith("text:"))
    return Value(origins=frozenset(origins), tags=frozenset(tags))


def merge(a: Value, b: Value) -> Value:
    """What a variable holds after two paths join: either value."""
    if a is b or a == b:
        return a
    const = a.const if (a.constant and b.constant and _same(a.const, b.const)) else NO_CONST
    parts: dict[Any, Value] | None = None
    if a.parts is not None and b.parts is not None:
        parts = {k: merge(a.parts.get(k, Value()), b.parts.get(k, Value())) for k in {*a.parts, *b.parts}}
    elif a.parts is not None or b.parts is not None:
        parts = dict(a.parts or b.parts or {})
    seq = None
    if a.seq is not None and b.seq is not None and len(a.seq) == len(b.seq):
        seq = tuple(merge(x, y) for x, y in zip(a.seq, b.seq, strict=True))
    origins = a.origins | b.origins
    if (a.seq is not None or b.seq is not None) and seq is None:
        origins = a.all_origins() | b.all_origins()
    return Value(origins=origins, const=const, parts=parts, tags=a.tags | b.tags, seq=seq)


def _same(x: Any, y: Any) -> bool:
    try:
        return type(x) is type(y) and bool(x == y)
    except Exception:  # noqa: BLE001 - an odd constant compares as "not the same"
        return False
