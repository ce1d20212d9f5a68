"""Statements, for the taint engine: blocks, branches, loops, ``try`` and ``match``/``switch``.

A branch whose condition folds to a constant runs only its live arm (the other is recorded as
dead); other branches run both arms on forks of the path and join them, each arm knowing what
its condition proves (the spec's guards; ``and``/``or``/``not`` combined here). Loops run their
body twice (enough for a value set late in the body to reach its start), ``try`` joins the paths
through its handlers and runs ``finally`` on every path, a constant ``match``/``switch`` subject
picks its case and a case of literals makes the subject that literal on its arm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from watcher.roles.taint.calls import Calls
from watcher.roles.taint.frame import Frame, Here, join
from watcher.roles.taint.values import FUNCTION, NO_CONST, Value, merge

if TYPE_CHECKING:
    from ast_grep_py import SgNode

__all__ = ["Statements"]


class Statements(Calls):
    """The statement half of the engine."""

    def block(self, node: SgNode, frame: Frame) -> None:
        """Run the statements under ``node`` in order, until the path ends."""
        if node.kind() in self.g.statements:  # ``if (x) return;``: one statement stands for the block
            self.statement(node, frame)
            return
        for child in node.named_children():
            if not frame.live:
                return
            self.statement(child, frame)

    def statement(self, node: SgNode, frame: Frame) -> None:
        g, kind = self.g, node.kind()
        if kind in g.ignored or kind in g.functions or kind in g.classes or kind in g.decorated:
            if kind in g.functions | g.decorated | g.classes:
                name = g.field(node, "name") or g.field(g.field(node, "definition") or node, "name")
                if name is not None:
                    # closures run while the module is walked, before its names are globals: a function
                    # they call must be known as one to be followed (a class stays an opaque name)
                    followed = kind in g.functions and bool(g.closures)
                    frame.env[name.text()] = FUNCTION if followed else Value()
            return
        if kind in g.ifs:
            self.branch(node, frame)
        elif kind in g.for_each or kind in g.whiles:
            self.loop(node, frame)
        elif kind in g.tries:
            self.attempt(node, frame)
        elif kind in g.returns:
            value = union_children(self, node, frame)
            frame.returns.append(value)
            if frame.function is not None and frame.entry:
                self.spec.returned(frame.function, value, Here(self, node, frame))
            frame.live = False
        elif kind in g.exits:
            for child in node.named_children():
                self.expr(child, frame)
            frame.live = False
        elif kind in g.matches:
            self.match(node, frame)
        elif kind in g.blocks:
            self.block(node, frame)
        elif self.is_expression(kind):
            self.expr(node, frame)
        else:
            for child in node.named_children():
                if not frame.live:
                    return
                self.statement(child, frame)

    def branch(self, node: SgNode, frame: Frame) -> None:
        """``if``/``elif``/``else``: a constant condition runs one arm; otherwise both, then join."""
        rest = [c for c in node.children() if c.kind() in self.g.else_ifs or c.kind() in self.g.elses]
        if not rest:
            alt = self.g.field(node, "alternative")
            rest = [alt] if alt is not None else []
        self.branch_clause(node, rest, frame)

    def _rest(self, rest: list[SgNode], frame: Frame) -> None:
        """The ``elif``/``else`` arms after a condition that did not hold."""
        if not rest:
            return
        first, others = rest[0], rest[1:]
        if first.kind() in self.g.else_ifs:
            self.branch_clause(first, others, frame)
        else:
            inner = self.g.field(first, "body") or first
            if inner.kind() in self.g.ifs:
                self.branch(inner, frame)
            else:
                self.block(inner, frame)

    def branch_clause(self, clause: SgNode, others: list[SgNode], frame: Frame) -> None:
        """One condition and its arm (an ``if`` or an ``elif``), then ``others``, the arms after it."""
        condition = self.g.field(clause, "condition")
        body = self.g.field(clause, "consequence")
        value = self.expr(condition, frame) if condition is not None else Value()
        truth = self.truth(value)
        if truth is True:
            for other in others:
                self.dead(other)
            if body is not None:
                self.block(body, frame)
            return
        if truth is False:
            if body is not None:
                self.dead(body)
            self._rest(others, frame)
            return
        yes, no = frame.fork(), frame.fork()
        if condition is not None:
            self.refine(condition, yes, True)
            self.refine(condition, no, False)
        if body is not None:
            self.block(body, yes)
        self._rest(others, no)
        join([yes, no], frame)

    def refine(self, condition: SgNode, frame: Frame, when: bool) -> None:
        """Clear the variables ``condition`` validates on the arm where it is ``when``."""
        kind = condition.kind()
        if kind in self.g.nots:
            kids = condition.named_children()
            inner = self.g.field(condition, "argument") or (kids[-1] if kids else None)
            if inner is not None:
                self.refine(inner, frame, not when)
            return
        if kind in self.g.parenthesized:
            for inner in condition.named_children():
                self.refine(inner, frame, when)
            return
        op = self.g.field(condition, "operator") if kind in self.g.booleans | self.g.binaries else None
        if op is not None and op.text() in ("and", "or", "&&", "||"):
            both = op.text() in ("and", "&&")
            sides = [p for p in (self.g.field(condition, "left"), self.g.field(condition, "right")) if p is not None]
            if both == when:  # a and b true: both hold; a or b false: neither holds
                for part in sides:
                    self.refine(part, frame, when)
            elif len(sides) == 2:  # either side may be what holds: what both prove
                one, other = frame.fork(), frame.fork()
                self.refine(sides[0], one, when)
                self.refine(sides[1], other, when)
                join([one, other], frame)
            return
        for ref in self.spec.guard(condition, Here(self, condition, frame)):
            if ref.when != when:
                continue
            if ref.name in frame.env:
                frame.env[ref.name] = frame.env[ref.name].cleared(ref.classes)
            elif ref.node is not None:  # a member chain read straight from its object (``req.query.to``)
                frame.env[ref.name] = self.expr(ref.node, frame.fork()).cleared(ref.classes)

    def loop(self, node: SgNode, frame: Frame) -> None:
        """``for``/``while``: the body may run zero, one or more times (twice is enough for taint)."""
        kind = node.kind()
        condition = self.g.field(node, "condition")
        if kind in self.g.whiles and condition is not None and self.truth(self.expr(condition, frame)) is False:
            self.dead(self.g.field(node, "body") or node)
            return
        element: Value | None = None
        start = self.g.field(node, "initializer")
        if start is not None:
            self.statement(start, frame)
        step = self.g.field(node, "increment")
        if kind in self.g.for_each:
            items = self.expr(self.g.field(node, "right") or node, frame)
            element = self.element(items)
        body = self.g.field(node, "body")
        if body is None:
            return
        paths = [frame.fork()]
        current = frame.fork()
        for _ in range(2):
            current = current.fork()
            current.live = True
            target = self.g.field(node, "left")
            if element is not None and target is not None:
                self.assign(target, element, current)
            self.block(body, current)
            if step is not None and current.live:
                self.expr(step, current)
            paths.append(current)
        before = frame.returns
        join(paths, frame)
        frame.returns = before
        alternative = self.g.field(node, "alternative")
        if alternative is not None and frame.live:
            self.block(self.g.field(alternative, "body") or alternative, frame)

    def attempt(self, node: SgNode, frame: Frame) -> None:
        """``try``: the handlers start from any point of the body; ``finally`` from every path."""
        body = self.g.field(node, "body")
        start = frame.fork()
        done = frame.fork()
        if body is not None:
            self.block(body, done)
        paths = []
        handlers = [c for c in node.children() if c.kind() in self.g.handlers]
        for handler in handlers:
            path = start.fork()
            join([start, done] if done.live else [start], path)
            path.live = True
            inner = self.g.field(handler, "body") or handler.find(kind="block") or handler
            self.block(inner, path)
            paths.append(path)
        for c in node.children():
            if c.kind() in self.g.elses and done.live:
                self.block(self.g.field(c, "body") or c, done)
        join([done, *paths], frame)
        for c in node.children():
            if c.kind() in self.g.finals:
                live = frame.live
                frame.live = True
                self.block(self.g.field(c, "body") or c.find(kind="block") or c, frame)
                frame.live = frame.live and live

    def match(self, node: SgNode, frame: Frame) -> None:
        """``match``/``switch``: a constant subject picks its case; otherwise every case may run."""
        subject = self.g.field(node, "subject") or self.g.field(node, "value")
        value = self.expr(subject, frame) if subject is not None else Value()
        body = self.g.field(node, "body") or node
        cases = [c for c in body.named_children() if c.kind() in self.g.cases]
        paths: list[Frame] = []
        chosen = False
        for case in cases:
            patterns = self.case_constants(case)
            if value.constant and patterns is not None and not chosen:
                wildcard = patterns == "*"
                if wildcard or any(_equal(value.const, p) for p in patterns):
                    chosen = True
                    self.block(self.g.field(case, "consequence") or case, frame)
                    continue
                self.dead(case)
                continue
            if chosen:
                self.dead(case)
                continue
            path = frame.fork()
            self.capture(case, value, path)
            if patterns is not None and patterns != "*" and len(patterns) == 1 and isinstance(patterns[0], (str, int)):
                named = self.name_of(subject, frame) if subject is not None else ""
                if (
                    subject is not None
                    and named
                    and subject.kind() in self.g.identifiers | self.g.attributes | self.g.parenthesized
                ):
                    path.env[named] = Value(const=patterns[0])  # ``case "a":`` the subject is "a" here
            self.block(self.g.field(case, "consequence") or case, path)
            paths.append(path)
        if not chosen and paths:
            join([frame.fork(), *paths], frame)

    def capture(self, case: SgNode, subject: Value, frame: Frame) -> None:
        """``case other:`` / ``case {"k": v}:`` bind names to (parts of) the subject."""
        for pattern in case.named_children():
            if pattern.kind() not in self.g.case_patterns:
                continue
            for node in pattern.find_all(any=[{"kind": k} for k in sorted(self.g.captures)]) if self.g.captures else ():
                if "." not in node.text() and node.text() != "_":
                    frame.env[node.text()] = subject.flat().through(node.text())

    def case_constants(self, case: SgNode) -> Any:
        """The literal values a case matches, ``"*"`` for a wildcard, or None when not only literals."""
        if self.g.field(case, "guard") is not None:
            return None
        patterns = [c for c in case.named_children() if c.kind() in self.g.case_patterns]
        literal = self.g.field(case, "value") if not patterns else None
        if literal is not None:  # ``case "a":`` of a switch
            const = self.expr(literal, Frame({})).const
            return None if const is NO_CONST else [const]
        if not patterns:
            return "*" if case.kind() in self.g.defaults else None
        values: list[Any] = []
        for pattern in patterns:
            if pattern.text().strip() == "_":
                return "*"
            leaves = [n for n in pattern.named_children() if n.kind() not in self.g.case_patterns] or [pattern]
            if len(leaves) == 1 and leaves[0].kind() in self.g.union_patterns:
                leaves = leaves[0].named_children()
            for leaf in leaves:
                const = self.expr(leaf, Frame({})).const
                if const is NO_CONST:
                    return None
                values.append(const)
        return values

    def dead(self, node: SgNode) -> None:
        """Record lines that can never run."""
        r = node.range()
        self.result.dead.append((r.start.line + 1, r.end.line + 1))


def union_children(engine: Statements, node: SgNode, frame: Frame) -> Value:
    """The value of a ``return x`` (None for a bare ``return``)."""
    children = node.named_children()
    if not children:
        return Value(const=None)
    value = engine.expr(children[0], frame)
    for child in children[1:]:
        value = merge(value, engine.expr(child, frame))
    return value


def _equal(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001
        return False
