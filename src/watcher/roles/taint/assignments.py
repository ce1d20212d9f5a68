"""Assignments, for the taint engine: binding a value to a name, a member, an item or a pattern.

``x = v`` binds the name (and forgets what guards proved of ``x.*``), ``obj.key = v`` and
``obj[k] = v`` store a member of the container (another key keeps its own value), and a pattern
unpacks the value: by position (``a, b = v``, ``[a, b] = v``) or by key (``{ a, b: c, d = 1 }
= v``). The spec is told of every store it may care about (the session, a ``Location`` header,
``innerHTML``, a JSX attribute). A module-level binding a language lets code elsewhere change
(JavaScript's ``let``/``var``) keeps its constant but is no input-free value.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from watcher.roles.taint import fold
from watcher.roles.taint.containers import hashable as _hashable
from watcher.roles.taint.containers import with_part
from watcher.roles.taint.expressions import Expressions
from watcher.roles.taint.frame import Frame, Here, members
from watcher.roles.taint.values import NO_CONST, Origin, Value, merge, union

if TYPE_CHECKING:
    from ast_grep_py import SgNode

__all__ = ["Assignments"]


class Assignments(Expressions):
    """The assignment part of the engine's expressions."""

    def assignment(self, node: SgNode, frame: Frame) -> Value:
        g, kind = self.g, node.kind()
        if kind in g.declarators:
            target, source = g.field(node, "name"), g.field(node, "value")
        else:
            target, source = g.field(node, "left"), g.field(node, "right")
        if source is None:
            return Value()
        value = self.expr(source, frame)
        if kind in g.augmented and target is not None:
            op = g.field(node, "operator")
            current = self.expr(target, frame)
            symbol = op.text().rstrip("=") if op is not None else "+"
            const = fold.binary(symbol, current.const, value.const)
            texts = [v.const for v in (current, value) if isinstance(v.const, str)]
            value = Value(const=const) if const is not NO_CONST else self.built([current, value], texts)
        if kind in g.declarators and frame.function is None and target is not None and g.mutable_declarations:
            value = self._shared(node, target, value)
        if target is not None:
            self.assign(target, value, frame)
        line = node.range().start.line + 1
        old = self.result.assigned.get(line)
        self.result.assigned[line] = value if old is None else merge(old, value)
        return value

    def assign(self, target: SgNode, value: Value, frame: Frame) -> None:
        """Bind ``value`` to an assignment target: a name, ``obj.attr``, ``obj[key]`` or a pattern."""
        g, kind = self.g, target.kind()
        if kind in g.identifiers:
            self._forget(target.text(), frame)
            frame.env[target.text()] = value.through(target.text())
            self.spec.store("", target.text(), value, Here(self, target, frame))
        elif kind in g.attributes:
            obj_node, attr = g.field(target, "object"), g.field(target, "attribute")
            if obj_node is None or attr is None:
                return
            owner = self.name_of(obj_node, frame)
            self._forget(f"{owner}.{attr.text()}", frame)
            self.spec.store(owner, attr.text(), value, Here(self, target, frame))
            self._update(obj_node, attr.text(), value, frame)
        elif kind in g.object_patterns:
            self.unpack(target, value, frame)
        elif kind in g.default_patterns:
            left, right = g.field(target, "left"), g.field(target, "right")
            if left is not None:
                self.assign(left, merge(value, self.expr(right, frame)) if right is not None else value, frame)
        elif kind in g.subscripts:
            obj_node, index = g.field(target, "object"), g.field(target, "index")
            if obj_node is None:
                return
            key = self.expr(index, frame) if index is not None else Value()
            k = key.const if key.constant and _hashable(key.const) else NO_CONST
            self.spec.store(self.name_of(obj_node, frame), k, value, Here(self, target, frame))
            self._update(obj_node, k, value, frame)
        elif kind in g.spreads:
            for child in target.named_children():
                self.assign(child, value.flat(), frame)
        else:
            targets = [c for c in target.named_children() if c.kind() not in g.ignored]
            for i, child in enumerate(targets):
                self.assign(child, value.part(i) if child.kind() not in g.spreads else value.flat(), frame)

    def _shared(self, node: SgNode, target: SgNode, value: Value) -> Value:
        """A module-level ``let``/``var``: code this text does not show may set it, so it is no input-free value."""
        declaration = node.parent()
        keyword = declaration.child(0) if declaration is not None else None
        if keyword is None or keyword.text() not in self.g.mutable_declarations:
            return value
        elsewhere = Origin("unknown", f"`{target.text()}`", target.range().start.line + 1)
        return replace(value, origins=value.origins | {elsewhere})

    def unpack(self, pattern: SgNode, value: Value, frame: Frame) -> None:
        """``{ a, b: c, d = 1, ...rest } = value``: each name gets the member of its key."""
        g = self.g
        for child in pattern.named_children():
            kind = child.kind()
            if kind in g.shorthand_patterns:
                self._forget(child.text(), frame)
                frame.env[child.text()] = value.part(child.text()).through(child.text())
            elif kind in g.pair_patterns:
                key, inner = g.field(child, "key"), g.field(child, "value")
                if inner is None:
                    continue
                k = key.text().strip("'\"") if key is not None else NO_CONST
                self.assign(inner, value.part(k), frame)
            elif kind in g.default_patterns:
                left, right = g.field(child, "left"), g.field(child, "right")
                if left is not None:
                    member = value.part(left.text())
                    self.assign(left, merge(member, self.expr(right, frame)) if right is not None else member, frame)
            elif kind not in g.ignored:
                for inner in child.named_children():  # ``...rest``: whatever else it holds
                    self.assign(inner, value.flat(), frame)

    def markup(self, node: SgNode, frame: Frame) -> Value:
        """``<div attr={value}>``: the value is evaluated and the spec told of the store."""
        kids = node.named_children()
        value = self.expr(kids[1], frame) if len(kids) == 2 else union(self.expr(k, frame) for k in kids[1:])
        if kids:
            self.spec.store(node.kind(), kids[0].text(), value, Here(self, node, frame))
        return Value()

    def _forget(self, name: str, frame: Frame) -> None:
        """A new value for ``name``: what guards proved of its members no longer holds."""
        for key in members(frame.env, name):
            del frame.env[key]

    def _update(self, obj_node: SgNode, key: Any, value: Value, frame: Frame) -> None:
        if obj_node.kind() not in self.g.identifiers | self.g.attributes | self.g.subscripts:
            return
        container = self.expr(obj_node, frame.fork())
        updated = with_part(container, key, value)
        if obj_node.kind() in self.g.identifiers:
            frame.env[obj_node.text()] = updated
        else:
            self.assign(obj_node, updated, frame)
