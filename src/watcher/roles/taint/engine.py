"""The taint engine: walks every function of a file path-sensitively, following calls within the file.

Statements are interpreted on a ``Frame``: assignments bind values, a branch whose condition
folds to a constant runs only its live arm (the other is recorded as dead), other branches run
both arms and join, a condition the spec understands (an allow-list, a validating regex)
clears the variable on the arm where it holds, loops run their body twice, ``try`` joins the
paths through its handlers. Expressions are in ``expressions.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from watcher.roles.taint.calls import Calls
from watcher.roles.taint.frame import Frame, Here, join
from watcher.roles.taint.spec import Analysis, Flow, Function, Grammar, Sink, Spec
from watcher.roles.taint.values import NO_CONST, Origin, Value, merge

if TYPE_CHECKING:
    from ast_grep_py import SgNode

__all__ = ["Engine"]

_RANK = {"safe": 0, "unknown": 1, "tainted": 2}
_FUNCTION = Value(tags=frozenset({"function"}))


class Engine(Calls):
    """One analysis of one file (see the module docstring); ``run()`` returns the ``Analysis``."""

    max_depth = 4
    max_follows = 400

    def __init__(self, root: SgNode, spec: Spec) -> None:
        self.root = root
        self.spec = spec
        self.g: Grammar = spec.grammar
        self.imports = dict(spec.imports(root))
        self.functions: dict[str, list[Function]] = {}
        self.methods: dict[str, list[Function]] = {}
        self.classes: dict[str, SgNode] = {}
        self.globals: dict[str, Value] = {}
        self.result = Analysis()
        self._flows: dict[tuple[int, str], Flow] = {}
        self._stack: list[int] = []
        self._memo: dict[tuple[object, ...], Frame] = {}
        self._followed = 0  # calls followed so far: a budget, so a large class stays a bounded amount of work

    # ------------------------------------------------------------------ the file

    def run(self) -> Analysis:
        """Analyse the module body, then every function as if called from outside."""
        self._collect(self.root)
        module = Frame({})
        self.block(self.root, module)
        self.globals = {k: v for k, v in module.env.items()}
        for functions in (*self.functions.values(), *self.methods.values()):
            for fn in functions:
                if fn.node.kind() not in self.g.closures:
                    self.enter(fn)
        self.result.flows = sorted(self._flows.values(), key=lambda f: (f.line, f.sink.name))
        return self.result

    def _collect(self, root: SgNode) -> None:
        """Every class, function and method of the file (found natively by ast-grep, not by walking)."""
        g = self.g
        for cls in _find(root, g.classes):
            name = g.field(cls, "name")
            if name is not None:
                self.classes[name.text()] = cls
        for node in _find(root, g.functions):
            holder = node.parent()
            decorators: tuple[str, ...] = ()
            if holder is not None and holder.kind() in g.decorated:
                decorators = tuple(d.text() for d in holder.children() if d.kind() == "decorator")
                holder = holder.parent()
            owner = None
            outer = holder.parent() if holder is not None else None
            if outer is not None and outer.kind() in g.classes:
                name = g.field(outer, "name")
                owner = name.text() if name is not None else None
            name_node = g.field(node, "name")
            fn = Function(
                node, name_node.text() if name_node is not None else "", self.parameters(node), decorators, owner
            )
            (self.methods if owner else self.functions).setdefault(fn.name, []).append(fn)
        if g.closures:  # ``const clean = (s) => …``: followed at its calls by name, run where it is defined
            for node in _find(root, g.closures):
                holder = node.parent()
                name_node = g.field(holder, "name") if holder is not None and holder.kind() in g.declarators else None
                if name_node is not None and name_node.kind() in g.identifiers:
                    fn = Function(node, name_node.text(), self.parameters(node), (), None)
                    self.functions.setdefault(fn.name, []).append(fn)

    def parameters(self, node: SgNode) -> tuple[str, ...]:
        """The parameter names of a function, in order (``*args`` by its name, a destructured one by its text)."""
        return tuple(name for name, _ in self.targets(node))

    def targets(self, node: SgNode) -> list[tuple[str, SgNode | None]]:
        """Each parameter's name, and the pattern it destructures (None for a plain name)."""
        g = self.g
        params = g.field(node, "parameters")
        listed = params.named_children() if params is not None else []
        single = g.field(node, "parameter") if params is None else None
        out: list[tuple[str, SgNode | None]] = []
        for p in [single] if single is not None else listed:
            if p.kind() in g.ignored:
                continue
            target = g.field(p, "pattern") or p
            if target.kind() in g.default_patterns:
                target = g.field(target, "left") or target
            if target.kind() in g.object_patterns or target.kind() in g.sequences:
                out.append((target.text(), target))
                continue
            name = target if target.kind() in g.identifiers else (g.field(p, "name") or p.find(kind="identifier"))
            if name is not None:
                out.append((name.text(), None))
        return out

    def defaults(self, node: SgNode) -> dict[str, SgNode]:
        """Parameter name → its default value's node."""
        params = self.g.field(node, "parameters")
        out = {}
        for p in params.named_children() if params is not None else ():
            name = self.g.field(p, "name") or self.g.field(p, "pattern") or self.g.field(p, "left")
            value = self.g.field(p, "value") or self.g.field(p, "right")
            if name is not None and value is not None:
                out[name.text()] = value
        return out

    def bind(self, frame: Frame, fn_node: SgNode, values: dict[str, Value]) -> None:
        """Give each parameter of ``fn_node`` its value: a name directly, a pattern member by member."""
        for name, pattern in self.targets(fn_node):
            value = values.get(name)
            if value is None:
                continue
            if pattern is None:
                frame.env[name] = value
            else:
                self.assign(pattern, value, frame)

    def closure(self, node: SgNode, frame: Frame, given: Sequence[Value] | None = None) -> Value:
        """Run a function expression where it stands, seeing the path's names; a value that names a function."""
        names = self.parameters(node)
        fn = Function(node, "", names, (), None)
        inner = Frame(dict(frame.env), fn, entry=True)
        sources = self.spec.entry(fn, self.name_of) if given is None else {}
        line = node.range().start.line + 1
        values: dict[str, Value] = {}
        for i, name in enumerate(names):
            if given is not None:
                values[name] = given[i].through(name) if i < len(given) else Value()
            elif name in sources:
                values[name] = sources[name]
            else:
                values[name] = Value(origins=frozenset({Origin("unknown", f"parameter `{name}`", line)}))
        if any(v.labelled("input") for v in sources.values()):
            self.result.inputs.add(line)
        self.bind(inner, node, values)
        body = self.g.field(node, "body")
        key = id(node)
        if body is None or len(self._stack) >= 2 * self.max_depth or self._stack.count(key) > 0:
            return _FUNCTION
        self._stack.append(key)
        try:
            if body.kind() in self.g.blocks:
                self.block(body, inner)
            else:
                self.expr(body, inner)
        finally:
            self._stack.pop()
        return _FUNCTION

    def enter(self, fn: Function) -> None:
        """Analyse ``fn`` as called from outside: parameters are input where the spec says so, else unknown."""
        sources = self.spec.entry(fn, self.name_of)
        line = fn.node.range().start.line + 1
        env = dict(self.globals)
        values: dict[str, Value] = {}
        for i, name in enumerate(fn.parameters):
            if name in sources:
                values[name] = sources[name]
            elif i == 0 and fn.owner and name in ("self", "cls"):
                values[name] = Value(tags=frozenset({f"instance:{fn.owner}"}))
            else:
                values[name] = Value(origins=frozenset({Origin("unknown", f"parameter `{name}`", line)}))
        if fn.owner and self.g.self_name:
            env[self.g.self_name] = Value(parts={}, tags=frozenset({f"instance:{fn.owner}"}))
        frame = Frame(env, fn, entry=True)
        self.bind(frame, fn.node, values)
        if any(v.labelled("input") for v in sources.values()):
            self.result.inputs.add(line)
        body = self.g.field(fn.node, "body")
        if body is not None:
            self._stack.append(id(fn.node))
            try:
                self.block(body, frame)
            finally:
                self._stack.pop()

    def follow(self, fn: Function, args: list[Value], kwargs: dict[str, Value], receiver: Value | None) -> Frame | None:
        """Run ``fn`` with these arguments; its final frame, or None when too deep or recursive."""
        key = id(fn.node)
        if len(self._stack) >= self.max_depth or self._stack.count(key) > 0 or self._followed >= self.max_follows:
            return None
        memo = (
            key,
            _signature(receiver),
            *(_signature(a) for a in args),
            *((k, _signature(v)) for k, v in kwargs.items()),
        )
        if memo in self._memo:
            return self._memo[memo]  # the same data into the same function: the same result
        self._followed += 1
        env = dict(self.globals)
        params = list(fn.parameters)
        instance = receiver if receiver is not None else Value(tags=frozenset({f"instance:{fn.owner}"}))
        if fn.owner and params and params[0] in ("self", "cls"):
            env[params.pop(0)] = instance
        elif fn.owner and self.g.self_name:
            env[self.g.self_name] = instance
        defaults = self.defaults(fn.node)
        frame = Frame(env, fn)
        values: dict[str, Value] = {}
        for i, name in enumerate(params):
            if i < len(args):
                values[name] = args[i].through(name)
            elif name in kwargs:
                values[name] = kwargs[name].through(name)
            elif name in defaults:
                values[name] = self.expr(defaults[name], Frame(dict(self.globals)))
            else:
                values[name] = Value()
        self.bind(frame, fn.node, values)
        body = self.g.field(fn.node, "body")
        if body is None:
            return None
        self._stack.append(key)
        try:
            self.block(body, frame)
        finally:
            self._stack.pop()
        self._memo[memo] = frame
        return frame

    # ------------------------------------------------------------------ statements

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
                    frame.env[name.text()] = _FUNCTION  # a local definition: followed at its calls
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

    # ------------------------------------------------------------------ reporting

    def dead(self, node: SgNode) -> None:
        """Record lines that can never run."""
        r = node.range()
        self.result.dead.append((r.start.line + 1, r.end.line + 1))

    def record(
        self, node: SgNode, sink: Sink, value: Value, callee: str, labels: tuple[str, ...], severity: str | None
    ) -> None:
        """``value`` reaches ``sink`` at ``node``: a flow when data with ``labels`` does, and the line's verdict."""
        r = node.range()
        line, end = r.start.line + 1, r.end.line + 1
        reaching = value.reaching(sink.name, labels)
        if reaching:
            verdict = "tainted"
            key = (line, sink.name)
            old = self._flows.get(key)
            sources = tuple(dict.fromkeys([*(old.sources if old else ()), *reaching]))
            self._flows[key] = Flow(sink, callee, line, end, sources, severity or sink.severity)
        elif any(not o.safe_for(sink.name) for o in value.all_origins()):
            verdict = "unknown"
        else:
            verdict = "safe"
        seen = self.result.verdicts.setdefault(line, {})
        if _RANK[verdict] >= _RANK.get(seen.get(sink.name, "safe"), 0):
            seen[sink.name] = verdict


def union_children(engine: Engine, node: SgNode, frame: Frame) -> Value:
    """The value of a ``return x`` (None for a bare ``return``)."""
    children = node.named_children()
    if not children:
        return Value(const=None)
    value = engine.expr(children[0], frame)
    for child in children[1:]:
        value = merge(value, engine.expr(child, frame))
    return value


def _find(root: SgNode, kinds: frozenset[str]) -> list[SgNode]:
    """The nodes of ``kinds`` under ``root``; a kind this language's grammar lacks is skipped."""
    try:
        return root.find_all(any=[{"kind": k} for k in sorted(kinds)])
    except RuntimeError:  # ast-grep refuses a rule naming a kind the grammar does not have
        found: list[SgNode] = []
        for kind in sorted(kinds):
            try:
                found.extend(root.find_all(kind=kind))
            except RuntimeError:
                continue
        return sorted(found, key=lambda n: n.range().start.index)


def _signature(value: Value | None) -> object:
    """What a call's result depends on in an argument: its data's sources and cleared classes, its constant."""
    if value is None:
        return None
    const = (
        value.const if isinstance(value.const, (str, bytes, int, float, bool, type(None))) else repr(value.const)[:80]
    )
    sources = frozenset((o.label, o.name, o.line, o.cleared) for o in value.all_origins())
    parts = tuple(sorted((repr(k), _signature(v)) for k, v in value.parts.items())) if value.parts else ()
    seq = tuple(_signature(v) for v in value.seq) if value.seq is not None else None
    return (sources, const, value.tags, parts, seq)


def _equal(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001
        return False
