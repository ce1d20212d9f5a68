"""The taint of JavaScript/TypeScript expressions, and what assignments store.

``Values.ev`` gives the taint of an expression in a ``State`` and reports the sinks it passes
through; ``assign`` stores a taint under a name, an ``obj.key`` or the parts of a destructuring
pattern. What guards prove is in ``_security_js_guards``; calls (sanitizers, casts, sources,
functions of the same file) in ``_security_js_calls``.
"""

from __future__ import annotations

import re
from typing import Any

from watcher.roles._security_js_constants import UNKNOWN, fold, literal, named
from watcher.roles._security_js_sources import Taint, keyed, member_source, sanitized, union
from watcher.roles._security_sql import is_sql

__all__ = ["UNKNOWN", "Values", "dotted", "fold", "literal", "named"]


_GLOBALS = frozenset(
    {
        "undefined", "NaN", "Infinity", "JSON", "Math", "Object", "Array", "String", "Number", "Boolean", "Date",
        "console", "process", "require", "module", "exports", "Promise", "Buffer", "Error", "RegExp", "Symbol",
        "Map", "Set", "URL", "URLSearchParams", "window", "document", "globalThis", "__dirname", "__filename",
    }
)  # fmt: skip
_WRAPPERS = frozenset(
    {
        "parenthesized_expression", "as_expression", "non_null_expression", "satisfies_expression",
        "type_assertion", "await_expression", "spread_element", "sequence_expression",
    }
)  # fmt: skip
_LITERALS = frozenset({"string", "number", "true", "false", "null", "undefined", "regex", "template_string"})


def dotted(node: Any) -> str:
    """``a.b.c`` (``a["b"]`` and ``a[0]`` too) for a chain of names, else ""."""
    if node is None:
        return ""
    kind = node.kind()
    if kind in ("identifier", "this", "shorthand_property_identifier"):
        return str(node.text())
    if kind in ("non_null_expression", "parenthesized_expression", "as_expression"):
        inner = named(node)
        return dotted(inner[0]) if inner else ""
    if kind == "member_expression":
        base, prop = dotted(node.field("object")), node.field("property")
        return f"{base}.{prop.text()}" if base and prop is not None else ""
    if kind == "subscript_expression":
        base, index = dotted(node.field("object")), node.field("index")
        if base and index is not None and index.kind() in ("string", "number"):
            return f"{base}.{index.text().strip(chr(39) + chr(34))}"
    return ""


class Values:
    """Expression taints, stores and guards over one parsed text; subclassed by the statement walk."""

    def __init__(self, root: Any, sinks: Any) -> None:
        self.root = root
        self.sinks = sinks
        self.functions: dict[str, Any] = {}
        self.returned: list[Taint | None] = []
        self.depth = 0
        self.active: set[str] = set()
        self.module_state: Any = None
        self.url_of: dict[str, Any] = {}  # u → the value `new URL(value)` parsed into u
        self.objects: dict[int, dict[str, tuple[Taint | None, Any]]] = {}  # object literal → its keys
        self.regexes: dict[str, Any] = {}  # const NAME = /.../
        self.url_lists: set[str] = set()  # names of lists (arrays, Sets) of URL literals
        self.url_items: set[str] = set()  # names bound to their items (loop variables, callback parameters)
        self.renderers: set[str] = set()  # names bound to compiled templates (pug.compileFile(…))
        self.setters: dict[str, str] = {}  # React: setBody → body (const [body, setBody] = useState())
        self.stored: dict[str, Taint | None] = {}  # what the setters were given, wherever they ran

    # subclass hooks -------------------------------------------------------------------
    def function(self, fn: Any, st: Any, given: list[Taint | None] | None = None) -> Taint | None:
        raise NotImplementedError

    def call(self, node: Any, st: Any) -> Taint | None:
        raise NotImplementedError

    # ------------------------------------------------------------------ expressions

    def ev(self, node: Any, st: Any) -> Taint | None:
        kind = node.kind()
        if kind in _LITERALS and kind != "template_string":
            return None
        if kind == "identifier":
            name = node.text()
            if name in self.stored:  # React state: what any of its setter calls stored
                return union(st.vars.get(name), self.stored[name])
            if name in st.vars:
                return st.vars[name]  # type: ignore[no-any-return]
            if name in _GLOBALS or name in self.functions:
                return None
            return Taint(f"`{name}`", int(node.range().start.line) + 1, strong=False)
        if kind == "template_string":
            subs = [self.ev(c, st) for c in named(node) if c.kind() == "template_substitution"]
            text = "".join(c.text() for c in named(node) if c.kind() == "string_fragment")
            value = sanitized(union(*subs, text=text), frozenset({"object"}))  # a string now
            if subs and is_sql(text + " x"):
                self.sinks.built(node, value)
            return value
        if kind in ("member_expression", "subscript_expression"):
            return self.member(node, st)
        if kind in ("call_expression", "new_expression"):
            return self.call(node, st)
        if kind == "binary_expression":
            return self.binary(node, st)
        if kind == "ternary_expression":
            known = fold(node.field("condition"), st.consts)
            if known is not UNKNOWN:
                return self.ev(node.field("consequence" if known else "alternative"), st)
            self.ev(node.field("condition"), st)
            return union(self.ev(node.field("consequence"), st), self.ev(node.field("alternative"), st))
        if kind in _WRAPPERS or kind == "template_substitution":
            inner = [self.ev(c, st) for c in named(node) if not c.kind().endswith("type")]
            return inner[-1] if inner else None
        if kind in ("assignment_expression", "augmented_assignment_expression"):
            return self.store(node, st)
        if kind == "object":
            return self.literal_object(node, st)
        if kind == "array":
            return union(*(self.ev(c, st) for c in named(node)))
        if kind in ("arrow_function", "function_expression", "function", "generator_function"):
            self.function(node, st)
            return None
        if kind in ("class_declaration", "class", "abstract_class_declaration"):
            self.klass(node, st)
            return None
        if kind == "function_declaration" or kind == "generator_function_declaration":
            name = node.field("name")
            if name is not None:
                self.functions.setdefault(name.text(), node)
            self.function(node, st)
            return None
        if kind == "jsx_attribute":
            self.sinks.jsx(self, node, st)
        for child in named(node):  # unary, update, jsx and the rest: walk for the sinks inside
            self.ev(child, st)
        return None

    def member(self, node: Any, st: Any) -> Taint | None:
        key = dotted(node)
        if key and key in st.vars:
            return st.vars[key]  # type: ignore[no-any-return]
        source = member_source(node)
        if source is not None:
            return source
        obj = node.field("object")
        base = self.ev(obj, st) if obj is not None else None
        if node.kind() == "subscript_expression":
            index = node.field("index")
            index_taint = self.ev(index, st) if index is not None else None
            if base is None:
                return None  # our own data looked up with an untrusted key
            del index_taint
        prop = node.field("property") if node.kind() == "member_expression" else node.field("index")
        word = prop.text().strip("'\"") if prop is not None else ""
        if base is None or word in ("length", "size"):
            return None
        if (
            base.origin.startswith("the request (")
            and member_source(node) is None
            and node.kind() == "member_expression"
        ):
            return None  # req.session, req.user, req.app: the server's own state
        return keyed(base, word) if word and node.kind() == "member_expression" else base

    def binary(self, node: Any, st: Any) -> Taint | None:
        op = node.field("operator")
        left, right = node.field("left"), node.field("right")
        known = fold(node, st.consts)
        lt = self.ev(left, st) if left is not None else None
        rt = self.ev(right, st) if right is not None else None
        text = op.text() if op is not None else ""
        if text == "+":
            words = literal(node, st.consts)
            value = union(lt, rt, text=words) if known is UNKNOWN and (lt is not None or rt is not None) else None
            parent = node.parent()
            if (parent is None or parent.kind() != "binary_expression") and is_sql(words + " x"):
                self.sinks.built(node, value)
            return value
        if known is not UNKNOWN:
            return None
        if text in ("||", "??", "&&"):
            return union(lt, rt)
        return None  # comparisons and arithmetic give booleans and numbers

    def literal_object(self, node: Any, st: Any) -> Taint | None:
        keys: dict[str, tuple[Taint | None, Any]] = {}
        parts = []
        for child in named(node):
            kind = child.kind()
            if kind == "pair":
                key, value = child.field("key"), child.field("value")
                taint = self.ev(value, st) if value is not None else None
                if key is not None:
                    keys[key.text().strip("'\"")] = (taint, value)
                parts.append(taint)
            elif kind == "shorthand_property_identifier":
                taint = st.vars.get(child.text()) if child.text() in st.vars else None
                keys[child.text()] = (taint, child)
                parts.append(taint)
            elif kind in ("spread_element", "method_definition"):
                parts.append(self.ev(child, st) if kind == "spread_element" else None)
        self.objects[int(node.range().start.index)] = keys
        return union(*parts)

    def klass(self, node: Any, st: Any) -> None:
        body = node.field("body")
        methods = [m for m in named(body)] if body is not None else []
        for method in methods:
            name = method.field("name")
            if method.kind() == "method_definition" and name is not None:
                self.functions.setdefault(name.text(), method)
        for method in methods:
            if method.kind() == "method_definition":
                self.function(method, st)
            else:
                value = method.field("value")
                if value is not None:
                    self.ev(value, st)

    # ------------------------------------------------------------------ stores

    def store(self, node: Any, st: Any) -> Taint | None:
        left, right = node.field("left"), node.field("right")
        taint = self.ev(right, st) if right is not None else None
        if node.kind() == "augmented_assignment_expression" and left is not None:
            base = self.ev(left, st)
            taint = union(base, taint, text=literal(left, st.consts) + " " + literal(right, st.consts))
            if taint is None or (taint.text and is_sql(taint.text + " x")):
                self.sinks.built(node, taint)
        if left is not None:
            self.sinks.assigned(self, node, left, taint, st)
            self.assign(left, taint, right if node.kind() == "assignment_expression" else None, st)
        return taint

    def assign(self, target: Any, taint: Taint | None, value: Any, st: Any) -> None:
        kind = target.kind()
        if kind == "identifier":
            name = target.text()
            for key in [k for k in st.vars if k.startswith(name + ".")]:
                del st.vars[key]
            st.vars[name] = taint.through(name) if taint is not None else None
            constant = fold(value, st.consts) if value is not None else UNKNOWN
            if constant is not UNKNOWN:
                st.consts[name] = constant
            else:
                st.consts.pop(name, None)
            self.remember(name, value, st)
        elif kind in ("member_expression", "subscript_expression"):
            key = dotted(target)
            if not key:
                base = dotted(target.field("object"))
                if base and taint is not None and base != "this":
                    st.vars[base] = union(st.vars.get(base), taint)
                return
            st.vars[key] = taint.through(key) if taint is not None else None
            parts = key.split(".")
            for i in range(1, len(parts)):
                prefix = ".".join(parts[:i])
                if prefix != "this" and taint is not None:
                    st.vars[prefix] = union(st.vars.get(prefix), taint)
        elif kind == "object_pattern":
            for child in named(target):
                ck = child.kind()
                if ck == "shorthand_property_identifier_pattern":
                    st.vars[child.text()] = _through(keyed(taint, child.text()), child.text())
                elif ck == "pair_pattern":
                    key, inner = child.field("key"), child.field("value")
                    if inner is not None:
                        self.assign(
                            inner, keyed(taint, key.text().strip("'\"")) if key is not None else taint, None, st
                        )
                elif ck == "object_assignment_pattern":
                    left, right = child.field("left"), child.field("right")
                    default = self.ev(right, st) if right is not None else None
                    if left is not None:
                        st.vars[left.text()] = _through(union(keyed(taint, left.text()), default), left.text())
                else:
                    inner_nodes = named(child)
                    if inner_nodes:
                        self.assign(inner_nodes[-1], taint, None, st)
        elif kind in ("array_pattern", "rest_pattern"):
            items = named(target)
            if value is not None and value.kind() == "call_expression" and len(items) == 2:
                callee = value.field("function")
                if callee is not None and callee.text().rsplit(".", 1)[-1] == "useState":
                    self.setters[items[1].text()] = items[0].text()
                    self.stored.setdefault(items[0].text(), None)
            for child in items:
                self.assign(child, taint, None, st)
        elif kind == "assignment_pattern":
            left, right = target.field("left"), target.field("right")
            if left is not None:
                self.assign(left, union(taint, self.ev(right, st) if right is not None else None), None, st)
        elif kind in ("lexical_declaration", "variable_declaration"):
            for decl in named(target):
                name = decl.field("name")
                if name is not None:
                    self.assign(name, taint, None, st)

    def remember(self, name: str, value: Any, st: Any) -> None:
        """Keys of an object literal, the input of ``new URL()``, a regex: for later reads and guards."""
        if value is None:
            return
        kind = value.kind()
        if kind in ("array", "new_expression") and re.search(
            r"""^(?:new\s+Set\(\s*)?\[\s*['"`]https?://""", value.text()
        ):
            self.url_lists.add(name)
        if kind == "call_expression" and re.match(r"[\w.]+\.(?:compile|compileFile|template)\(", value.text()):
            self.renderers.add(name)
        if kind == "object":
            for key, (taint, _node) in self.objects.get(int(value.range().start.index), {}).items():
                st.vars[f"{name}.{key}"] = _through(taint, name)
        elif kind == "array":
            for i, item in enumerate(named(value)):
                if item.kind() != "spread_element":
                    st.vars[f"{name}.{i}"] = _through(self.ev(item, st), name)
        elif kind == "new_expression" and value.field("constructor") is not None:
            args = value.field("arguments")
            first = named(args)[0] if args is not None and named(args) else None
            if value.field("constructor").text() == "URL" and dotted(first):
                self.url_of[name] = first
        elif kind == "regex":
            self.regexes[name] = value


def _through(taint: Taint | None, name: str) -> Taint | None:
    return taint.through(name) if taint is not None else None
