"""The taint engine: walks every function of a file path-sensitively, following calls within the file.

Statements are interpreted on a ``Frame``: assignments bind values, a branch whose condition
folds to a constant runs only its live arm (the other is recorded as dead), other branches run
both arms and join, a condition the spec understands (an allow-list, a validating regex)
clears the variable on the arm where it holds, loops run their body twice, ``try`` joins the
paths through its handlers (``statements.py``). Expressions are in ``expressions.py``, assignments
in ``assignments.py``, calls in ``calls.py``; this module runs the file and its functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from watcher.roles.taint.frame import Env, Frame
from watcher.roles.taint.spec import Analysis, Flow, Function, Grammar, Sink, Spec
from watcher.roles.taint.statements import Statements
from watcher.roles.taint.values import FUNCTION, Origin, Value

if TYPE_CHECKING:
    from ast_grep_py import SgNode

__all__ = ["Engine"]

_RANK = {"safe": 0, "unknown": 1, "tainted": 2}
_NAME = re.compile(r"[A-Za-z_$][\w$]*")  # the names a function's text can mention (Python's and JavaScript's)


class Engine(Statements):
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
        self.globals: dict[str, Value] = Env()
        self.result = Analysis()
        self._flows: dict[tuple[int, str], Flow] = {}
        self._stack: list[int] = []
        self._memo: dict[tuple[object, ...], Frame] = {}
        self._followed = 0  # calls followed so far: a budget, so a large class stays a bounded amount of work
        self._roots: dict[str, list[str]] = {}  # a global's first name -> its keys (`app`, `app.config`)

    # ------------------------------------------------------------------ the file

    def run(self) -> Analysis:
        """Analyse the module body, then every function as if called from outside."""
        self._collect(self.root)
        module = Frame({})
        self.block(self.root, module)
        self.globals = Env(module.env)
        self._roots = {}
        for key in self.globals:
            self._roots.setdefault(key.split(".", 1)[0], []).append(key)
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
        inner = Frame(Env(frame.env), fn, entry=True)
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
        key = node.range().start.index  # its place in the text: the node objects themselves are not kept
        if body is None or len(self._stack) >= 2 * self.max_depth or self._stack.count(key) > 0:
            return FUNCTION
        self._stack.append(key)
        try:
            if body.kind() in self.g.blocks:
                self.block(body, inner)
            else:
                self.expr(body, inner)
        finally:
            self._stack.pop()
        return FUNCTION

    def _globals_for(self, node: SgNode) -> Env:
        """The module's names that ``node``'s text mentions, as a new path's variables: a function
        reads no other global, and copying all of them into each of a module's thousands of
        functions made its analysis quadratic."""
        if len(self.globals) <= 64:
            return Env(self.globals)
        words = set(_NAME.findall(node.text()))
        return Env({key: self.globals[key] for word in words for key in self._roots.get(word, ())})

    def enter(self, fn: Function) -> None:
        """Analyse ``fn`` as called from outside: parameters are input where the spec says so, else unknown."""
        sources = self.spec.entry(fn, self.name_of)
        line = fn.node.range().start.line + 1
        env = self._globals_for(fn.node)
        values: dict[str, Value] = {}
        for i, name in enumerate(fn.parameters):
            if name in sources:
                values[name] = sources[name]
            elif i == 0 and fn.owner and name in ("self", "cls"):
                values[name] = Value(tags=frozenset({f"instance:{fn.owner}"}))
            else:
                values[name] = Value(origins=frozenset({Origin("unknown", f"parameter `{name}`", line)}))
        if fn.owner and self.g.self_name:  # its members were set by code not followed here
            elsewhere = Origin("unknown", f"`{self.g.self_name}`", line)
            env[self.g.self_name] = Value(frozenset({elsewhere}), parts={}, tags=frozenset({f"instance:{fn.owner}"}))
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
        env = self._globals_for(fn.node)
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
                values[name] = self.expr(defaults[name], Frame(Env(self.globals)))
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

    # ------------------------------------------------------------------ reporting

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
