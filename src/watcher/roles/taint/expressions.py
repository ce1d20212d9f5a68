"""How the taint engine evaluates expressions: names, literals, operators, containers, assignments.

Each expression yields a ``Value``: its constant when it folds, the origins of the data in it, and
for a container or object the members stored under known keys. An assignment binds a target (a
name, ``obj.attr``, ``obj[key]``, a pattern) and tells the spec of stores it cares about (the
session, a ``Location`` header) — in ``assignments.py``. Calls are in ``calls.py``.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from watcher.roles.taint import fold
from watcher.roles.taint.containers import hashable as _hashable
from watcher.roles.taint.frame import Frame, Here
from watcher.roles.taint.spec import Function
from watcher.roles.taint.values import ANY_KEY, NO_CONST, Origin, Value, merge, union

if TYPE_CHECKING:
    from ast_grep_py import SgNode

    from watcher.roles.taint.spec import Analysis, Grammar, Sink, Spec

__all__ = ["EngineHooks", "Expressions"]

_COMPARISONS = frozenset(
    ["<", "<=", ">", ">=", "==", "!=", "===", "!==", "<>", "in", "not", "in", "is", "is", "not", "instanceof"]
)
_LOGICAL = frozenset({"and", "or", "&&", "||", "??"})


class EngineHooks(Protocol):
    """What the expression half needs of the rest of the engine (``calls.py`` and ``engine.py``)."""

    def refine(self, condition: SgNode, frame: Frame, when: bool) -> None:
        """Clear the variables ``condition`` validates on the arm where it is ``when``."""
        ...

    def follow(self, fn: Function, args: list[Value], kwargs: dict[str, Value], receiver: Value | None) -> Frame | None:
        """Run ``fn`` of this file with these arguments; its final frame."""
        ...

    def record(
        self, node: SgNode, sink: Sink, value: Value, callee: str, labels: tuple[str, ...], severity: str | None
    ) -> None:
        """``value`` reaches ``sink`` at ``node``."""
        ...

    def call(self, node: SgNode, frame: Frame) -> Value:
        """The value of a call expression."""
        ...

    def closure(self, node: SgNode, frame: Frame, given: Sequence[Value] | None = None) -> Value:
        """Run a function expression where it stands."""
        ...

    def assignment(self, node: SgNode, frame: Frame) -> Value:
        """An assignment or a declaration: binds its target, and is worth the stored value."""
        ...

    def assign(self, target: SgNode, value: Value, frame: Frame) -> None:
        """Bind ``value`` to an assignment target."""
        ...

    def markup(self, node: SgNode, frame: Frame) -> Value:
        """``<div attr={value}>``."""
        ...


class Expressions(EngineHooks):
    """The expression half of ``Engine`` (a mixin: it reads the engine's grammar, spec and file)."""

    g: Grammar
    spec: Spec
    imports: dict[str, str]
    functions: dict[str, list[Function]]
    methods: dict[str, list[Function]]
    classes: dict[str, SgNode]
    globals: dict[str, Value]
    result: Analysis

    # ------------------------------------------------------------------ dispatch

    def is_expression(self, kind: str) -> bool:
        kinds = self.__dict__.get("_expression_kinds")
        if kinds is None:
            g = self.g
            kinds = frozenset().union(
                g.calls, g.attributes, g.subscripts, g.identifiers, g.strings, g.numbers, g.binaries,
                g.booleans, g.comparisons, g.nots, g.ternaries, g.sequences, g.dicts, g.comprehensions,
                g.lambdas, g.assignments, g.augmented, g.declarators, g.parenthesized, g.as_patterns, g.constants,
                g.closures, g.wrappers, g.markup_attributes,
            )  # fmt: skip
            self.__dict__["_expression_kinds"] = kinds
        return kind in kinds

    def expr(self, node: SgNode, frame: Frame) -> Value:
        """The value of expression ``node`` on the path ``frame`` (which assignments in it update)."""
        g, kind = self.g, node.kind()
        if kind in g.identifiers:
            return self.lookup(node.text(), node, frame)
        if kind in g.strings:
            return self.string(node, frame)
        if kind in g.numbers:
            return Value(const=_number(node.text()))
        if kind in g.constants:
            return Value(const=g.constants[kind])
        if kind in g.calls:
            return self.call(node, frame)
        if kind in g.attributes:
            return self.attribute(node, frame)
        if kind in g.subscripts:
            return self.subscript(node, frame)
        if kind in g.binaries or kind in g.booleans or kind in g.comparisons:
            return self.operation(node, frame)
        if kind in g.nots:
            return self.negation(node, frame)
        if kind in g.ternaries:
            return self.ternary(node, frame)
        if kind in g.sequences:
            return self.sequence(node, frame)
        if kind in g.dicts:
            return self.mapping(node, frame)
        if kind in g.comprehensions:
            return self.comprehension(node, frame)
        if kind in g.closures:
            return self.closure(node, frame)
        if kind in g.wrappers:
            inner = next((c for c in node.named_children() if c.kind() not in g.ignored), None)
            return self.expr(inner, frame) if inner is not None else Value()
        if kind in g.markup_attributes:
            return self.markup(node, frame)
        if kind in g.lambdas or kind in g.ignored:
            return Value()
        if kind in g.assignments or kind in g.augmented or kind in g.declarators:
            return self.assignment(node, frame)
        if kind in g.as_patterns:
            children = node.named_children()
            value = self.expr(children[0], frame) if children else Value()
            alias = g.field(node, "alias")
            if alias is not None:
                self.assign(alias.named_children()[0] if alias.named_children() else alias, value, frame)
            return value
        children = node.named_children()
        if len(children) == 1:
            return self.expr(children[0], frame)
        return union(self.expr(c, frame) for c in children)

    def lookup(self, name: str, node: SgNode, frame: Frame) -> Value:
        if name in frame.env:
            return frame.env[name]
        if name in self.globals:
            return self.globals[name]
        if name in self.imports or name in self.functions or name in self.classes:
            return Value(tags=frozenset({"module"}))
        if name in self.spec.builtins:
            return Value()
        return Value(origins=frozenset({Origin("unknown", f"`{name}`", node.range().start.line + 1)}))

    def truth(self, value: Value) -> Any:
        """True, False, or None when the value's truth is not known."""
        result = fold.truth(value.const)
        return None if result is NO_CONST else result

    def element(self, items: Value) -> Value:
        """What iterating over ``items`` yields."""
        if items.seq is not None:
            out = Value()
            for i, item in enumerate(items.seq):
                out = item if i == 0 else merge(out, item)
            return out.flat() if items.seq else Value()
        if items.parts:
            return Value(origins=items.all_origins())
        return Value(origins=items.origins)

    # ------------------------------------------------------------------ literals and operators

    def string(self, node: SgNode, frame: Frame) -> Value:
        g = self.g
        parts = node.children()
        if len(parts) == 3 and parts[0].text() in ('"', "'") and parts[1].kind() in g.string_parts:
            return Value(const=_unescape(parts[1].text()))  # "plain": no prefix, no interpolation (most strings)
        pieces: list[Any] = []
        values: list[Value] = []
        raw = binary = False
        for child in parts:
            kind = child.kind()
            if kind in g.strings:
                value = self.string(child, frame)
                values.append(value)
                pieces.append(value.const)
            elif kind in g.string_parts:
                pieces.append(child.text() if raw else _unescape(child.text()))
            elif kind in g.interpolations:
                inner = child.named_children()
                value = self.expr(inner[0], frame) if inner else Value()
                values.append(value)
                plain = len(inner) == 1 and value.const is not NO_CONST and fold.plain(value.const)
                pieces.append(str(value.const) if plain else NO_CONST)
            elif kind.endswith("start") or child.text()[:1] in "rRbBuUfFtT":
                prefix = child.text().lower()
                raw, binary = "r" in prefix, binary or "b" in prefix
        if any(p is NO_CONST for p in pieces):
            built = self.built(values, [p for p in pieces if isinstance(p, str)])
            return built.cleared(self.spec.text_clears) if self.spec.text_clears else built
        text = "".join(p.decode("latin-1") if isinstance(p, bytes) else str(p) for p in pieces)
        origins = frozenset().union(*(v.origins for v in values))
        return Value(const=text.encode("latin-1", "replace") if binary else text, origins=origins)

    def operation(self, node: SgNode, frame: Frame) -> Value:
        """Arithmetic, ``and``/``or`` and comparisons; chains such as ``a < b < c`` too."""
        operands = [c for c in node.children() if c.is_named() and c.kind() not in self.g.ignored]
        op_node = self.g.field(node, "operator")
        ops: list[str] = []
        pending: list[str] = []
        for child in node.children():
            if child.is_named():
                if pending:
                    ops.append(" ".join(pending))
                    pending = []
            else:
                pending.append(child.text())
        if op_node is not None and len(operands) == 2:
            ops = [op_node.text()]
        values = [self.expr(o, frame) for o in operands]
        if not values:
            return Value()
        if ops and ops[0] in _LOGICAL and len(values) == 2:
            left, right = values
            truth = self.truth(left)
            first = ops[0] in ("and", "&&")
            if truth is None:
                return merge(left, right) if left.origins or right.origins else union([left, right])
            if ops[0] == "??":
                return right if left.const is None else left
            return right if truth == first else left
        if ops and all(op in _COMPARISONS for op in ops):
            result: Any = True
            for op, left, right in zip(ops, values, values[1:], strict=False):
                step = fold.compare(op, left.const, right.const)
                if step is NO_CONST:
                    return Value()  # a boolean carries no data
                result = result and step
            return Value(const=result)
        if len(values) == 2 and ops:
            const = fold.binary(ops[0], values[0].const, values[1].const)
            if const is not NO_CONST:  # a constant here may still be set elsewhere (a module-level ``let``)
                return Value(const=const, origins=values[0].origins | values[1].origins)
            if ops[0] == "%" and values[1].seq is not None:
                return union([values[0], *values[1].seq])
            if ops[0] == "+":
                return self.built(values, [v.const for v in values if isinstance(v.const, str)])
        return union(values)

    def built(self, values: list[Value], literals: list[str]) -> Value:
        """A string built from ``values`` around ``literals``: their data, and what the literal text is."""
        value = union(values)
        described = self.spec.describe(" ".join(literals)) if literals else frozenset()
        return Value(origins=value.origins, tags=value.tags | described) if described else value

    def negation(self, node: SgNode, frame: Frame) -> Value:
        op = self.g.field(node, "operator")
        kids = node.named_children()
        inner = self.g.field(node, "argument") or (kids[-1] if kids else None)
        value = self.expr(inner, frame) if inner is not None else Value()
        if op is not None and op.text() not in ("not", "!"):
            if op.text() == "-" and isinstance(value.const, (int, float)):
                return Value(const=-value.const)
            return Value(origins=value.all_origins()) if op.text() not in ("typeof", "void") else Value()
        truth = self.truth(value)
        return Value() if truth is None else Value(const=not truth)

    def ternary(self, node: SgNode, frame: Frame) -> Value:
        condition = self.g.field(node, "condition")
        if condition is not None:
            yes, no = self.g.field(node, "consequence"), self.g.field(node, "alternative")
        else:  # Python: body if condition else orelse
            kids = node.named_children()
            if len(kids) != 3:
                return union(self.expr(k, frame) for k in kids)
            yes, condition, no = kids
        truth = self.truth(self.expr(condition, frame))
        if truth is True and yes is not None:
            return self.expr(yes, frame)
        if truth is False and no is not None:
            return self.expr(no, frame)
        yes_frame, no_frame = frame.fork(), frame.fork()
        self.refine(condition, yes_frame, True)
        self.refine(condition, no_frame, False)
        a = self.expr(yes, yes_frame) if yes is not None else Value()
        b = self.expr(no, no_frame) if no is not None else Value()
        return merge(a, b)

    def sequence(self, node: SgNode, frame: Frame) -> Value:
        items: list[Value] = []
        spread = False
        for child in node.named_children():
            if child.kind() in self.g.ignored:
                continue
            value = self.expr(child, frame)
            if child.kind() in self.g.spreads:
                spread = True
            items.append(value)
        if spread:
            return union(items)
        const: Any = NO_CONST
        if all(v.constant for v in items):
            consts = [v.const for v in items]
            const = tuple(consts) if "tuple" in node.kind() else set(consts) if node.kind() == "set" else consts
            const = const if fold.plain(const) else NO_CONST
        return Value(const=const, seq=tuple(items))

    def mapping(self, node: SgNode, frame: Frame) -> Value:
        parts: dict[Any, Value] = {}
        origins: set[Origin] = set()
        for child in node.named_children():
            if child.kind() in self.g.pairs:
                key_node, value_node = self.g.field(child, "key"), self.g.field(child, "value")
                key = Value(const=key_node.text()) if key_node is not None and key_node.kind() in self.g.key_names else (
                    self.expr(key_node, frame) if key_node is not None else Value()
                )  # fmt: skip
                if key_node is not None and key_node.kind() in self.g.identifiers and self.g.dict_keys_are_names:
                    key = Value(const=key_node.text())
                value = self.expr(value_node, frame) if value_node is not None else Value()
                k = key.const if key.constant and _hashable(key.const) else ANY_KEY
                parts[k] = merge(parts[k], value) if k in parts else value
                origins |= key.all_origins()
            elif child.kind() in self.g.shorthands:  # ``{ a }``: the member a holds the variable a
                parts[child.text()] = self.lookup(child.text(), child, frame)
            elif child.kind() in self.g.functions:
                continue  # a method of the object literal: entered on its own
            elif child.kind() not in self.g.ignored:
                spread = self.expr(child, frame)
                for k, v in (spread.parts or {}).items():
                    parts[k] = v
                origins |= spread.origins
        const: Any = NO_CONST
        if all(v.constant for v in parts.values()) and ANY_KEY not in parts and not origins:
            const = {k: v.const for k, v in parts.items()}
        return Value(origins=frozenset(origins), const=const, parts=parts)

    def comprehension(self, node: SgNode, frame: Frame) -> Value:
        inner = frame.fork()
        for clause in node.named_children():
            if clause.kind() in self.g.comprehension_clauses:
                source = self.g.field(clause, "right")
                target = self.g.field(clause, "left")
                if source is not None and target is not None:
                    self.assign(target, self.element(self.expr(source, inner)), inner)
        body = self.g.field(node, "body")
        if body is None:
            return Value()
        value = self.expr(body, inner) if body.kind() not in self.g.pairs else self.pair(body, inner)
        return Value(origins=value.all_origins())

    def pair(self, node: SgNode, frame: Frame) -> Value:
        return union(self.expr(c, frame) for c in node.named_children())

    # ------------------------------------------------------------------ names and members

    def name_of(self, node: SgNode | None, frame: Frame | None = None) -> str:
        """The dotted name of an expression, imports resolved: ``request.args.get`` → ``flask.request.args.get``."""
        if node is None:
            return ""
        kind = node.kind()
        if kind in self.g.identifiers:
            if frame is not None and node.text() in frame.env:
                return node.text()  # a local variable shadows an import
            return self.imports.get(node.text(), node.text())
        if kind in self.g.attributes:
            base = self.name_of(self.g.field(node, "object"), frame)
            attr = self.g.field(node, "attribute")
            return f"{base}.{attr.text()}" if attr is not None else base
        if kind in self.g.calls:
            return self.name_of(self.g.field(node, "function"), frame) + "()"
        if kind in self.g.subscripts:
            return self.name_of(self.g.field(node, "object"), frame) + "[]"
        if kind in self.g.parenthesized or kind in self.g.wrappers:
            kids = [k for k in node.named_children() if k.kind() not in self.g.ignored]
            return self.name_of(kids[0], frame) if kids else ""
        return ""

    def attribute(self, node: SgNode, frame: Frame) -> Value:
        obj_node, attr = self.g.field(node, "object"), self.g.field(node, "attribute")
        name = self.name_of(node, frame)
        if name in frame.env:  # a member chain a guard validated, or stored on this path
            return frame.env[name]
        obj = self.expr(obj_node, frame) if obj_node is not None else Value()
        found = self.spec.attribute(name, obj, Here(self, node, frame))
        if found is not None:
            return found
        if attr is None:
            return obj.flat()
        if obj.parts is not None:
            return obj.part(attr.text())
        if obj.constant:
            return Value()
        return Value(origins=obj.origins)

    def subscript(self, node: SgNode, frame: Frame) -> Value:
        obj_node, index = self.g.field(node, "object"), self.g.field(node, "index")
        obj = self.expr(obj_node, frame) if obj_node is not None else Value()
        if index is None:
            return obj.flat()
        if index.kind() in self.g.slices:
            bounds = [self.expr(b, frame).const for b in index.named_children()]
            if obj.constant and all(isinstance(b, int) for b in bounds) and len(bounds) <= 3:
                try:
                    return Value(const=obj.const[slice(*bounds)]) if len(bounds) > 1 else obj.flat()
                except Exception:  # noqa: BLE001
                    pass
            return Value(origins=obj.all_origins(), tags=obj.tags)
        key = self.expr(index, frame)
        return obj.part(key.const if key.constant and _hashable(key.const) else NO_CONST)


def _number(text: str) -> Any:
    cleaned = text.replace("_", "").rstrip("nNjJlL")
    try:
        return int(cleaned, 0)
    except ValueError:
        try:
            return float(cleaned)
        except ValueError:
            return NO_CONST


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    try:
        return codecs.decode(text.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return text
