"""One path through a function body: the variables' values, whether the path is still live, its returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from watcher.roles.taint.values import NO_CONST, Origin, Value, merge

if TYPE_CHECKING:
    from ast_grep_py import SgNode

    from watcher.roles.taint.spec import Analysis, Function, Sink

__all__ = ["Env", "Frame", "Here", "join", "members"]


class Env(dict[str, Value]):
    """A path's variables, name → value, that also knows which names have members set (``req.args``):
    a new value for ``req`` forgets them without a pass over every variable (a module of thousands of
    assignments made that pass quadratic)."""

    __slots__ = ("dotted",)

    def __init__(self, items: dict[str, Value] | None = None) -> None:
        super().__init__(items or {})
        # a copy of an Env copies its index (a function entered copies the module's names, every time)
        self.dotted: set[str] = set(items.dotted) if isinstance(items, Env) else {k for k in self if "." in k}

    def __setitem__(self, key: str, value: Value) -> None:
        super().__setitem__(key, value)
        if "." in key:
            self.dotted.add(key)

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self.dotted.discard(key)

    def members(self, name: str) -> list[str]:
        """The keys of ``name``'s members (``name.x``, ``name.x.y``)."""
        prefix = name + "."
        return [k for k in self.dotted if k.startswith(prefix)] if self.dotted else []


def members(env: dict[str, Value], name: str) -> list[str]:
    """The keys of ``name``'s members in ``env`` (an ``Env`` answers without a pass over every name)."""
    if isinstance(env, Env):
        return env.members(name)
    prefix = name + "."
    return [k for k in env if k.startswith(prefix)]


@dataclass(slots=True)
class Frame:
    """The state of one path: ``env`` (name → value), ``live`` (no return/raise yet), what it returned."""

    env: dict[str, Value]  # an ``Env`` once made (a plain dict given is turned into one)
    function: Function | None = None
    entry: bool = False  # the function was entered from outside (a route), not followed from a call
    live: bool = True
    returns: list[Value] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.env, Env):
            self.env = Env(self.env)

    def fork(self) -> Frame:
        """A copy for one arm of a branch."""
        return Frame(Env(self.env), self.function, self.entry, self.live, self.returns)


def join(frames: list[Frame], into: Frame) -> None:
    """Merge the live ``frames`` (arms of a branch) into ``into``; dead when none is live."""
    live = [f for f in frames if f.live]
    if not live:
        into.live = False
        return
    names = set().union(*(f.env for f in live))
    env = Env()
    for name in names:
        values = [f.env.get(name) for f in live]
        known = [v for v in values if v is not None]
        value = known[0]
        for other in known[1:]:
            value = merge(value, other)
        env[name] = value
    into.env = env
    into.live = True


class Engine(Protocol):
    """What a ``Here`` needs of the engine: evaluating an expression, recording a sink, its result."""

    result: Analysis

    def expr(self, node: SgNode, frame: Frame) -> Value: ...

    def record(
        self, node: SgNode, sink: Sink, value: Value, callee: str, labels: tuple[str, ...], severity: str | None
    ) -> None: ...


class Here:
    """A ``Site``: the node the engine is at, and reporting of sinks reached there."""

    __slots__ = ("engine", "frame", "line", "node")

    def __init__(self, engine: Engine, node: SgNode, frame: Frame) -> None:
        self.engine = engine
        self.node = node
        self.frame = frame
        self.line = node.range().start.line + 1

    def report(
        self, sink: Sink, value: Value, callee: str, labels: Any = ("input",), severity: str | None = None
    ) -> None:
        """``value`` reaches ``sink`` here (see ``Engine.record``)."""
        self.engine.record(self.node, sink, value, callee, tuple(labels), severity)

    def constant(self, node: SgNode | None) -> Any:
        """The folded constant of ``node`` on this path, or ``NO_CONST``."""
        if node is None:
            return NO_CONST
        return self.engine.expr(node, self.frame.fork()).const

    def value(self, node: SgNode | None) -> Value:
        """The value of ``node`` on this path."""
        return Value() if node is None else self.engine.expr(node, self.frame.fork())

    def bind(self, name: str, value: Value) -> None:
        """Hold ``value`` under ``name`` on this path."""
        self.frame.env[name] = value

    def source(self, label: str, name: str) -> Value:
        """A value of untrusted data (``label``) read here, named ``name``."""
        if label == "input":
            self.engine.result.inputs.add(self.line)
        return Value(origins=frozenset({Origin(label, name, self.line)}))
