"""Intra-procedural taint tracking over a JavaScript/TypeScript syntax tree (ast-grep nodes).

The walk follows statements in order, with a ``State`` per path: each variable (and each
``obj.key`` written or validated) maps to its ``Taint``, or to None when the value is known to be
clean; constants are folded, so ``if (7 * 42 - n > 200)`` with ``const n = 86`` selects its branch
and a value constant on every path is clean. Branches are walked on copies and merged; a branch
that returns or throws does not reach the code after it, which is how a guard clause
(``if (!ALLOWED.includes(to)) return``) cleans the value below it. Loops run twice. Functions of
the same file are followed at their calls with the arguments' taints (depth 3), callbacks see
their closure, and ``.then``/``.subscribe`` callbacks receive the taint of what they wait on.
The value expressions live in ``_security_js_values``; sinks in ``_security_js_sinks``.
"""

from __future__ import annotations

import re
from typing import Any

from watcher.roles._security_js_calls import Calls
from watcher.roles._security_js_sources import ALL_KINDS, Taint, union
from watcher.roles._security_js_values import UNKNOWN, dotted, fold, named

__all__ = ["Flow", "State"]

_EXITS = frozenset({"return_statement", "throw_statement", "break_statement", "continue_statement"})
_FUNCTIONS = frozenset(
    {"function_declaration", "generator_function_declaration", "function_expression", "function", "arrow_function"}
)
_HANDLER_NAMES = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "handler", "loader", "action"})


class State:
    """What one path of the walk knows: taints of names and keys, and constant values."""

    __slots__ = ("consts", "vars")

    def __init__(self, vars: dict[str, Taint | None] | None = None, consts: dict[str, Any] | None = None) -> None:
        self.vars: dict[str, Taint | None] = dict(vars or {})
        self.consts: dict[str, Any] = dict(consts or {})

    def copy(self) -> State:
        return State(self.vars, self.consts)

    def absorb(self, other: State) -> None:
        """Merge another path into this one: a name tainted on either path is tainted."""
        for name, taint in other.vars.items():
            mine = self.vars.get(name)
            self.vars[name] = union(mine, taint) if name in self.vars else taint
        self.consts = {k: v for k, v in self.consts.items() if k in other.consts and other.consts[k] == v}


class Flow(Calls):
    """The statement walk; expressions, guards and sinks come from ``Values``."""

    nesting = 0  # functions the walk is inside of

    def run(self) -> None:
        self.module_state = State()
        self.block(self.root.children(), self.module_state)

    # ------------------------------------------------------------------ statements

    def block(self, statements: Any, st: State) -> bool:
        """Walk statements in order; True when the block always leaves (return, throw, break)."""
        return any(stmt.is_named() and self.statement(stmt, st) for stmt in statements)

    def statement(self, node: Any, st: State) -> bool:
        kind = node.kind()
        if kind in ("lexical_declaration", "variable_declaration"):
            for decl in named(node):
                if decl.kind() == "variable_declarator":
                    self.declare(decl, st)
        elif kind == "expression_statement":
            for child in named(node):
                self.ev(child, st)
        elif kind == "statement_block":
            return self.block(node.children(), st)
        elif kind == "if_statement":
            return self.branch(node, st)
        elif kind in _EXITS:
            value = next(iter(named(node)), None)
            if value is not None and value.kind() != "statement_identifier":
                taint = self.ev(value, st)
                if kind == "return_statement":
                    self.returned.append(taint)
            return True
        elif kind in ("for_in_statement", "for_statement", "while_statement", "do_statement"):
            self.loop(node, st)
        elif kind == "try_statement":
            self.attempt(node, st)
        elif kind == "switch_statement":
            self.switch(node, st)
        elif kind in _FUNCTIONS or kind in ("class_declaration", "abstract_class_declaration", "class"):
            self.ev(node, st)
        elif kind in ("export_statement", "labeled_statement"):
            for child in named(node):
                if self.statement(child, st):
                    return True
        elif kind == "ERROR":  # a fragment the grammar cannot place (a method without its class): read on
            for child in named(node):
                if child.kind().endswith(("statement", "declaration", "block")):
                    self.statement(child, st)
                else:
                    self.ev(child, st)
        elif kind == "import_statement":
            for ident in node.find_all(kind="identifier"):
                st.vars[ident.text()] = None
        return False

    def declare(self, decl: Any, st: State) -> None:
        target, value = decl.field("name"), decl.field("value")
        if target is None:
            return
        if value is None:
            if target.kind() == "identifier":
                st.vars[target.text()] = None
                st.consts[target.text()] = None  # undefined
            return
        if value.kind() in _FUNCTIONS and target.kind() == "identifier":
            self.functions.setdefault(target.text(), value)
        taint = self.ev(value, st)
        keyword = decl.parent().child(0) if decl.parent() is not None else None
        if self.nesting == 0 and keyword is not None and keyword.text() != "const" and target.kind() == "identifier":
            # a module-level let/var: code this text does not show may set it
            line = int(target.range().start.line) + 1
            taint = union(taint, Taint(f"`{target.text()}`", line, strong=False))
            self.assign(target, taint, None, st)
            return
        self.assign(target, taint, value, st)

    def branch(self, node: Any, st: State) -> bool:
        cond = node.field("condition")
        then, other = node.field("consequence"), node.field("alternative")
        known = fold(cond, st.consts) if cond is not None else UNKNOWN
        if known is not UNKNOWN:  # a constant condition: only its branch runs
            taken = then if known else other
            if taken is None:
                return False
            return self.statement(taken if taken.kind() != "else_clause" else _body(taken), st)
        if cond is not None:
            self.ev(cond, st)
        yes, no = st.copy(), st.copy()
        if cond is not None:
            self.refine(cond, yes, True)
            self.refine(cond, no, False)
        yes_exits = self.statement(then, yes) if then is not None else False
        no_exits = self.statement(_body(other), no) if other is not None else False
        if yes_exits and no_exits:
            return True
        paths = [s for s, exits in ((yes, yes_exits), (no, no_exits)) if not exits]
        st.vars, st.consts = paths[0].vars, paths[0].consts
        for path in paths[1:]:
            st.absorb(path)
        return False

    def loop(self, node: Any, st: State) -> None:
        body = node.field("body")
        if node.kind() == "for_in_statement":
            left, right = node.field("left"), node.field("right")
            taint = self.ev(right, st) if right is not None else None
            if left is not None:
                self.assign(left, taint, None, st)
                if dotted(right) in self.url_lists:  # for (const allowed of ALLOWED_URLS)
                    self.url_items.add(left.text())
        else:
            for part in ("initializer", "condition", "increment"):
                child = node.field(part)
                if child is not None:
                    self.statement(child, st) if child.kind().endswith("declaration") else self.ev(child, st)
        if body is None:
            return
        for _ in range(2):  # a value set late in the body reaches its start on the next turn
            turn = st.copy()
            self.statement(body, turn)
            st.absorb(turn)

    def attempt(self, node: Any, st: State) -> None:
        body = node.field("body")
        entry = st.copy()
        if body is not None:
            self.statement(body, st)
        st.absorb(entry)
        handler, final = node.field("handler"), node.field("finalizer")
        if handler is not None:
            caught = st.copy()
            param = handler.field("parameter")
            if param is not None:
                self.assign(param, None, None, caught)
            block = handler.field("body")
            if block is not None and not self.statement(block, caught):
                st.absorb(caught)
        if final is not None:
            block = final.field("body") or next(iter(named(final)), None)
            if block is not None:
                self.statement(block, st)

    def switch(self, node: Any, st: State) -> None:
        value, body = node.field("value"), node.field("body")
        self.ev(value, st)
        subject = dotted(value)
        after: list[State] = []
        for case in named(body) if body is not None else ():
            path = st.copy()
            literal = case.field("value")
            if subject and literal is not None and literal.kind() in ("string", "number"):
                path.vars[subject] = None  # equal to a literal in this case
            statements = [c for c in named(case) if c != literal]
            if not self.block(statements, path) or any(c.kind() == "break_statement" for c in statements):
                after.append(path)
        if not any(c.kind() == "switch_default" for c in named(body) if body is not None):
            after.append(st.copy())
        if after:
            st.vars, st.consts = after[0].vars, after[0].consts
            for path in after[1:]:
                st.absorb(path)

    # ------------------------------------------------------------------ functions

    def function(self, fn: Any, st: State, given: list[Taint | None] | None = None) -> Taint | None:
        """Walk a function's body with its closure ``st``; the taint of what it returns."""
        inner = st.copy()
        params = fn.field("parameters")
        names = [p for p in named(params)] if params is not None else []
        single = fn.field("parameter")
        if single is not None:
            names = [single]
        handler = _is_route_handler(fn)
        for i, param in enumerate(names):
            target = param.field("pattern") if param.kind() in ("required_parameter", "optional_parameter") else param
            if target is None:
                continue
            taint = (given[i] if i < len(given) else None) if given is not None else self.parameter(target, i, handler)
            decorator = next((d for d in named(param) if d.kind() == "decorator"), None)
            if given is None and decorator is not None:  # NestJS: @Query('q') q, @Body() dto, @Param('id') id
                taint = _decorated(decorator, target, param) or (None if taint is None or not taint.strong else taint)
            self.assign(target, taint, None, inner)
        saved, self.returned = self.returned, []
        self.nesting += 1
        body = fn.field("body")
        if body is not None:
            if body.kind() == "statement_block":
                self.block(body.children(), inner)
            else:
                self.returned.append(self.ev(body, inner))
        self.nesting -= 1
        result, self.returned = union(*self.returned), saved
        return result

    def parameter(self, target: Any, index: int, handler: bool) -> Taint | None:
        name = target.text()
        line = int(target.range().start.line) + 1
        if name in ("req", "request", "ctx", "context"):
            return Taint(f"the request (`{name}`)", line)
        if name in ("res", "response", "reply", "next"):
            return None
        if target.kind() == "object_pattern" and re.search(r"\b(?:query|body|params|cookies|headers)\b", name):
            return Taint("the request (`req`)", line)  # ({ query }: Request, res) => …
        if handler and index == 1 and target.kind() == "object_pattern":  # Next.js: { params }
            return Taint(f"the route parameters (`{name}`)", line, ALL_KINDS - {"object"})
        return Taint(f"the parameter `{name}`", line, strong=False)

    def call_local(self, name: str, args: list[Taint | None], st: State) -> tuple[bool, Taint | None]:
        """Follow a call to a function of this file: (whether it was followed, its result's taint)."""
        fn = self.functions.get(name)
        if fn is None or self.depth >= 3 or name in self.active:
            return False, None
        self.depth += 1
        self.active.add(name)
        try:
            return True, self.function(fn, self.module_state or st, args)
        finally:
            self.depth -= 1
            self.active.discard(name)


def _body(node: Any) -> Any:
    """The statement of an ``else`` clause."""
    if node is not None and node.kind() == "else_clause":
        inner = named(node)
        return inner[0] if inner else node
    return node


def _is_route_handler(fn: Any) -> bool:
    """A Next.js route handler (``export async function GET(request, { params })``)."""
    if fn.kind() != "function_declaration":
        return False
    name = fn.field("name")
    return name is not None and name.text() in _HANDLER_NAMES


_NEST_SOURCES = {
    "Query": ("query parameter", True),
    "Body": ("request body field", True),
    "Param": ("route parameter", False),
    "Headers": ("request header", False),
    "Req": ("request", True),
}


def _decorated(decorator: Any, target: Any, param: Any) -> Taint | None:
    """The taint of a NestJS handler parameter its decorator fills from the request.

    A body typed with a class (a DTO) is validated by the application's pipe: strings stay strings.
    """
    match = re.match(r"@(\w+)\(\s*(?:['\"]([^'\"]*)['\"])?", decorator.text())
    if match is None or match.group(1) not in _NEST_SOURCES:
        return None
    what, objects = _NEST_SOURCES[match.group(1)]
    key = match.group(2)
    name = target.text()
    origin = f"the `{key}` {what} (`@{match.group(1)}`)" if key else f"the {what} (`{name}`)"
    line = int(target.range().start.line) + 1
    typed = re.search(r":\s*[A-Z]\w*\s*$", param.text()) is not None
    return Taint(origin, line, ALL_KINDS if objects and not typed else ALL_KINDS - {"object"})
