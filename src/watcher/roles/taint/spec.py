"""The contract between the taint engine and a language: its grammar, and its security knowledge.

A ``Grammar`` says how a tree-sitter grammar spells the constructs the engine follows (which node
kinds are assignments, branches, calls, …, and the names of their fields). A ``Spec`` is the
security knowledge of one language and its frameworks: the engine asks it about every call,
attribute read, store, return and condition it meets, and the spec answers with a ``Value`` (a
source, a sanitised value) and reports sinks through ``Site.report``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from watcher.roles.taint.values import Origin, Value

if TYPE_CHECKING:
    from ast_grep_py import SgNode

__all__ = ["Analysis", "Call", "Flow", "Function", "Grammar", "Refinement", "Sink", "Site", "Spec"]


@dataclass(frozen=True, slots=True)
class Sink:
    """A class of sink: its id (``"command"``), CWE, a title, and the fix that fits it."""

    name: str
    cwe: int
    title: str
    fix: str
    severity: str = "warning"  # "critical", "warning" or "hint"


@dataclass(frozen=True, slots=True)
class Flow:
    """Data from ``source`` reaches sink ``sink`` (a ``Sink``) at ``line``, through variables ``path``.

    ``callee`` is how the sink reads in the code (``subprocess.run()``, ``session[...]``);
    ``sources`` holds every origin that reaches it, ``source`` the first of them.
    """

    sink: Sink
    callee: str
    line: int
    end_line: int
    sources: tuple[Origin, ...]
    severity: str

    @property
    def source(self) -> Origin:
        """The first source reaching the sink."""
        return self.sources[0]

    @property
    def path(self) -> tuple[str, ...]:
        """The variables the first source went through."""
        return self.source.via


@dataclass(slots=True)
class Analysis:
    """What one analysis found.

    ``flows``: each sink reached by untrusted data. ``verdicts``: per line, per sink class, the
    worst the engine saw there (``"tainted"``, ``"unknown"`` — data of unknown provenance —
    or ``"safe"``: constant or sanitised on every path). ``dead``: line ranges of branches that
    can never run. ``assigned``: per line, the value an assignment there stored. ``inputs``: the
    lines where untrusted input (label ``"input"``) enters — empty for code that reads none, such
    as a notebook's data work, where a sink of unknown provenance is nobody's input either.
    """

    flows: list[Flow] = field(default_factory=list)
    inputs: set[int] = field(default_factory=set)
    verdicts: dict[int, dict[str, str]] = field(default_factory=dict)
    dead: list[tuple[int, int]] = field(default_factory=list)
    assigned: dict[int, Value] = field(default_factory=dict)


@dataclass(frozen=True)
class Grammar:
    """Node kinds of one tree-sitter grammar, by the role the engine gives them.

    Fields are looked up by role name (``left``, ``right``, ``condition``, ``consequence``,
    ``alternative``, ``body``, ``function``, ``arguments``, ``object``, ``attribute``, ``value``,
    ``index``, ``name``, ``parameters``, ``key``) unless ``fields`` renames them for a kind:
    ``{("member_expression", "attribute"): "property"}``.
    """

    blocks: frozenset[str]
    functions: frozenset[str]
    classes: frozenset[str]
    decorated: frozenset[str]
    assignments: frozenset[str]
    augmented: frozenset[str]
    declarators: frozenset[str]
    ifs: frozenset[str]
    else_ifs: frozenset[str]
    elses: frozenset[str]
    for_each: frozenset[str]
    whiles: frozenset[str]
    tries: frozenset[str]
    handlers: frozenset[str]
    returns: frozenset[str]
    exits: frozenset[str]  # raise/throw/break/continue: the path ends here
    calls: frozenset[str]
    attributes: frozenset[str]
    subscripts: frozenset[str]
    identifiers: frozenset[str]
    strings: frozenset[str]
    string_parts: frozenset[str]  # literal text inside a string
    interpolations: frozenset[str]
    numbers: frozenset[str]
    constants: Mapping[str, Any]  # ``true`` → True, ``none`` → None
    binaries: frozenset[str]
    booleans: frozenset[str]
    comparisons: frozenset[str]
    nots: frozenset[str]
    ternaries: frozenset[str]
    sequences: frozenset[str]  # list/tuple/array literals
    dicts: frozenset[str]
    pairs: frozenset[str]
    comprehensions: frozenset[str]
    lambdas: frozenset[str]
    keyword_arguments: frozenset[str]
    ignored: frozenset[str] = frozenset()  # comments, imports, type annotations: no values
    parenthesized: frozenset[str] = frozenset()
    finals: frozenset[str] = frozenset()  # finally clauses
    matches: frozenset[str] = frozenset()  # match/switch: subject (or value), body of cases
    cases: frozenset[str] = frozenset()  # a case: its patterns, guard, consequence
    case_patterns: frozenset[str] = frozenset()
    union_patterns: frozenset[str] = frozenset()  # ``'A' | 'B'``
    captures: frozenset[str] = frozenset()  # a name a case pattern binds (``case other:``)
    defaults: frozenset[str] = frozenset()  # ``default:`` of a switch
    as_patterns: frozenset[str] = frozenset()  # ``with open(p) as fh``: value first, ``alias``
    spreads: frozenset[str] = frozenset()  # ``*args``, ``...rest``
    comprehension_clauses: frozenset[str] = frozenset()  # ``for x in xs`` inside a comprehension
    slices: frozenset[str] = frozenset()
    dict_keys_are_names: bool = False  # ``{a: 1}`` keys a JavaScript object by the name ``"a"``
    key_names: frozenset[str] = frozenset()  # kinds of a key that is a name, not an expression
    statements: frozenset[str] = frozenset()  # a single statement where a block may stand (``if (x) f();``)
    closures: frozenset[str] = frozenset()  # function expressions, run where they appear with the path's names
    wrappers: frozenset[str] = frozenset()  # ``await x``, ``x as T``, ``x!``: the value of their first operand
    shorthands: frozenset[str] = frozenset()  # ``{ a }``: the member ``a`` holding the variable ``a``
    object_patterns: frozenset[str] = frozenset()  # ``{ a, b: c } = value``: members bound by key
    pair_patterns: frozenset[str] = frozenset()  # ``b: c`` inside an object pattern
    shorthand_patterns: frozenset[str] = frozenset()  # ``a`` inside an object pattern
    default_patterns: frozenset[str] = frozenset()  # ``a = 1`` inside a pattern or a parameter list
    markup_attributes: frozenset[str] = frozenset()  # ``<div attr={value}>``: a store the spec is told of
    self_name: str = ""  # the receiver a method sees without declaring it (``this``)
    mutable_declarations: frozenset[str] = frozenset()  # ``let``/``var``: at module level, set by code not shown
    fields: Mapping[tuple[str, str], str] = field(default_factory=dict)

    def field(self, node: SgNode, role: str) -> SgNode | None:
        """The child of ``node`` in ``role``, under the grammar's own field name."""
        if role not in self.renamed:
            return node.field(role)
        return node.field(self.fields.get((node.kind(), role), role))

    @functools.cached_property
    def renamed(self) -> frozenset[str]:
        """The roles some kind names differently (the others are looked up without asking the kind)."""
        return frozenset(role for _, role in self.fields)


@dataclass(frozen=True, slots=True)
class Function:
    """A function or method of the file: its node, name, parameter names, decorators and class."""

    node: SgNode
    name: str
    parameters: tuple[str, ...]
    decorators: tuple[str, ...]
    owner: str | None  # the class it is defined in


class Site(Protocol):
    """Where the engine is (a call, a store, a return), and how a spec reports a sink there."""

    node: SgNode
    line: int

    def report(
        self, sink: Sink, value: Value, callee: str, labels: Sequence[str] = ("input",), severity: str | None = None
    ) -> None:
        """``value`` reaches ``sink``: a flow when origins with ``labels`` reach it uncleared."""

    def constant(self, node: SgNode | None) -> Any:
        """The folded constant of an expression node, or ``NO_CONST``."""

    def value(self, node: SgNode | None) -> Value:
        """The value of an expression node on this path."""

    def source(self, label: str, name: str) -> Value:
        """A value of data with ``label`` (``"input"``) read here, named ``name`` in findings."""

    def bind(self, name: str, value: Value) -> None:
        """Hold ``value`` under ``name`` (``req.body.email``) on this path: a call validated it."""


@dataclass(frozen=True, slots=True)
class Call:
    """A call the engine could not follow into the file: what is called, on what, with what."""

    name: str  # the dotted name, imports resolved ("subprocess.run", "flask.request.args.get")
    method: str  # the last segment ("get")
    receiver: Value | None  # the object of a method call
    args: tuple[Value, ...]
    kwargs: Mapping[str, Value]
    arg_nodes: tuple[SgNode, ...]
    kwarg_nodes: Mapping[str, SgNode]
    site: Site

    def arg(self, index: int, keyword: str = "") -> Value | None:
        """Argument ``index`` (or ``keyword``), or None when not given."""
        if keyword and keyword in self.kwargs:
            return self.kwargs[keyword]
        return self.args[index] if 0 <= index < len(self.args) else None

    def arg_node(self, index: int, keyword: str = "") -> SgNode | None:
        """The node of argument ``index`` (or ``keyword``)."""
        if keyword and keyword in self.kwarg_nodes:
            return self.kwarg_nodes[keyword]
        return self.arg_nodes[index] if 0 <= index < len(self.arg_nodes) else None


@dataclass(frozen=True, slots=True)
class Refinement:
    """What a condition proves about a variable (by its text, ``name`` or ``obj.attr``) on one side.

    When the condition is ``when``, the variable is cleared for ``classes`` (``{"*"}``: all). With
    ``node`` (the checked expression), a member chain not yet stored on the path is cleared too.
    """

    name: str
    classes: frozenset[str]
    when: bool
    node: SgNode | None = None


class Spec(Protocol):
    """The security knowledge of one language (see the module docstring)."""

    grammar: Grammar
    builtins: frozenset[str]  # functions whose result is built from their arguments only
    exits: frozenset[str]  # calls that never return (``flask.abort``, ``sys.exit``)
    mutators: Mapping[
        str, str
    ]  # method → "append", "prepend", "insert", "pop", "shift", "remove", "update", "extend", "absorb", "clear"
    constructor: str  # the name of a class's constructor method ("__init__", "constructor")
    text_clears: frozenset[str]  # classes data interpolated into a string no longer reaches (``"object"``)

    def imports(self, root: SgNode) -> Mapping[str, str]:
        """Local name → dotted name it was imported as."""

    def entry(self, function: Function, name_of: Callable[[SgNode], str]) -> Mapping[str, Value]:
        """The parameters of ``function`` that carry input when it is called from outside (a route)."""

    def call(self, call: Call) -> Value | None:
        """The value of a call not defined in the file (a source, a sanitiser), reporting sinks; None: default."""

    def attribute(self, name: str, obj: Value, site: Site) -> Value | None:
        """The value of reading attribute chain ``name`` (``flask.request.args``); None: default."""

    def store(self, target: str, key: Any, value: Value, site: Site) -> None:
        """``target[key] = value`` or ``target.key = value`` (``flask.session``): report sinks.

        A plain ``name = value`` arrives as ``store("", "name", value, site)``.
        """

    def returned(self, function: Function, value: Value, site: Site) -> None:
        """``value`` is returned from ``function``: report sinks (a route returning HTML)."""

    def guard(self, condition: SgNode, site: Site) -> Sequence[Refinement]:
        """What ``condition`` proves when true or false (allow-lists, validating regexes)."""

    def callback(self, call: Call, index: int) -> Sequence[Value] | None:
        """The parameters a function passed as argument ``index`` of ``call`` receives; None: as declared."""

    def describe(self, text: str) -> frozenset[str]:
        """``text:`` tags for literal text a string is built from (``text:sql``), kept by what is built from it."""
