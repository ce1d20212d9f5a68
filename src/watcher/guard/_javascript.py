"""JavaScript and TypeScript as the guard's rules read them: what a name is known to hold, written
where it is read.

The rules read code as text (``_readable``). This parses it (tree-sitter, through ast-grep, which
the guard already uses for shell) and writes it back with what it can know in place: a name
declared once with a known value (``const HOME = os.homedir()``, ``let target = path.join(HOME,
'.ssh')``), a template literal whose parts are known (``\\`rm -rf ${target}\\```), a string joined
with ``+``, ``process.env.NAME || 'default'``'s default. A call of one of the file's functions
(``function wipe(dir)``, ``const wipe = (dir) => …``) with known arguments is written out again
below the code with them in place, so what the function does with those values is in the text.

Nothing is run; a name assigned more than once, or to a value computed at run time, is left as
written. Code that does not parse as JavaScript is returned as ``None``."""

from __future__ import annotations

import functools
import json
import posixpath
import re
from collections.abc import Callable
from typing import Any

__all__ = ["javascript_readable"]

_MAX_CODE = 64_000
_MAX_STR = 4096
_MAX_COPIES = 24
_MAX_WRITTEN = 32_000  # the characters of function bodies written out again, in all
_MAX_STEPS = 50_000  # the values worked out in one reading: past them, every value is unknown
_UNKNOWN: Any = object()
_UNDEFINED: Any = object()  # null or undefined: a value, false, never written
# what marks code as JavaScript (Ruby, Perl and Python do not parse without errors besides)
_LOOKS_JS = re.compile(r"\b(?:const|let|var|function)\s|=>|\brequire\(|^\s*import\s[^\n]*\bfrom\s", re.M)


def javascript_readable(code: str) -> str | None:
    """``code`` written back with the values its names are known to hold, and its functions written
    out again for each call with known arguments; None when it is not JavaScript or TypeScript (or
    too large). TypeScript is tried when the code does not parse as JavaScript."""
    if len(code) > _MAX_CODE or not _LOOKS_JS.search(code):
        return None
    return _read(code, "javascript")


@functools.lru_cache(maxsize=16)
def _read(code: str, language: str) -> str | None:
    try:
        from ast_grep_py import SgRoot

        root = SgRoot(code, language).root()
        if root.find(kind="ERROR") is not None:
            return None if language == "typescript" else _read(code, "typescript")
        return _Reader(code, root).read()
    except Exception:  # noqa: BLE001 - a fault of this reading leaves the code to the text readers, still judged
        return None


class _Reader:
    """One reading: the names declared once and the functions, then the text with values in place."""

    def __init__(self, code: str, root: Any) -> None:
        self.code, self.root = code, root
        self.functions: dict[str, tuple[list[tuple[str, Any]], Any]] = {}
        self.copies: list[str] = []
        self.copied: set[str] = set()
        self.returning: set[str] = set()  # the calls whose return values are being read
        self.results: dict[str, Any] = {}  # what a call of the file's function returns, by its arguments
        self.written = self.steps = 0
        self.classes = _classes(root)
        self.path_sep = bool(
            re.search(r"\bsep\b[^;\n]*\}\s*(?:from\s*|=\s*require\(\s*)['\"](?:node:)?path['\"]", code)
        )
        self.made: dict[str, Any] = {}  # the objects made by ``new``, by their class and arguments
        declared: dict[str, list[Any]] = {}
        for d in root.find_all(kind="variable_declarator"):
            name, value = d.field("name"), d.field("value")
            if name is None:
                continue
            if name.kind() in ("object_pattern", "array_pattern"):  # const { host, port } = config
                for named in _names(name):
                    declared.setdefault(named, []).append(_Taken(name, value) if value is not None else None)
                continue
            if name.kind() != "identifier":
                continue
            if value is not None and value.kind() in ("arrow_function", "function_expression", "function"):
                self._function(name.text(), value)
            declared.setdefault(name.text(), []).append(value)
        self.changed = _changed(root)  # assigned again (x = …, x += …, x++): not one value
        for name in self.changed:
            declared.setdefault(name, []).append(None)
        for f in root.find_all(kind="function_declaration"):
            name = f.field("name")
            if name is not None:
                self._function(name.text(), f)
        self.env: dict[str, Any] = {}
        for _ in range(4):  # a value built from another: rounds, as each becomes known
            for name, values in declared.items():
                if len(values) == 1 and values[0] is not None and name not in self.env:
                    value = self._taken(name, values[0], self.env)
                    if value is not _UNKNOWN:
                        self.env[name] = value

    def _taken(self, name: str, value: Any, env: dict[str, Any]) -> Any:
        """What a declared name holds: its value's, or its part of a destructured value's."""
        if not isinstance(value, _Taken):
            return self._value(value, env)
        found: dict[str, Any] = {}
        self._bind(value.pattern, self._value(value.value, env), found, env)
        return found.get(name, _UNKNOWN)

    def _function(self, name: str, f: Any) -> None:
        body = f.field("body")
        if body is not None:
            self.functions[name] = (_parameters(f), body)

    def read(self) -> str:
        self.results = {}  # what calls return, read again with every name of the file known
        text = self._render(self.root, self.env, depth=0)
        return "\n".join([text, *self.copies])

    # --- writing -----------------------------------------------------------------------------------

    def _render(self, node: Any, env: dict[str, Any], depth: int) -> str:
        """``node``'s text with what is known in place, and calls of the file's functions copied."""
        kind = node.kind()
        if kind in _FUNCTIONS:  # its parameters are its own: a name outside it with the same name is not them
            own = {name for pattern, _ in _parameters(node) for name in _names(pattern)}
            env = {k: v for k, v in env.items() if k not in own} if own & env.keys() else env
        replaceable = kind in _REPLACEABLE and not (kind == "identifier" and self._declares(node))
        if replaceable and kind == "binary_expression":  # spawnSync(…).status ?? 1 is a call, not its default
            replaceable = all(_PURE.match(c.text()) for c in node.find_all(kind="call_expression"))
        if replaceable and (kind != "call_expression" or _PURE.match(node.text())):
            value = self._value(node, env)
            # a name holding a template with holes is written as its text, holes and all (a template
            # itself stays as written: its holes are read from its ${…})
            holed = kind != "template_string" and _written(value)
            if isinstance(value, _Number):
                return str(value)
            if (_plain(value) or holed) and len(text := json.dumps(value, ensure_ascii=False)) <= 512:
                return text
        if kind == "for_in_statement" and (unrolled := self._unrolled(node, env, depth)) is not None:
            return unrolled
        if kind == "call_expression":
            self._copy(node, env, depth)
            self._each(node, env, depth)
        children = node.children()
        if not children:
            return str(node.text())
        start = node.range().start.index
        out, pos = [], start
        for c in children:
            r = c.range()
            out.append(self.code[pos : r.start.index])
            out.append(self._render(c, env, depth))
            pos = r.end.index
        out.append(self.code[pos : node.range().end.index])
        return "".join(out)

    def _bound(self, params: list[tuple[Any, Any]], body: Any, args: list[Any], this: Any = _UNKNOWN) -> dict[str, Any]:
        """The names a function's body sees: the file's, its parameters as given (or their defaults),
        ``this`` (a method's object), and its own names declared from them (``const target =
        path.join(dir, 'x')``)."""
        inside = dict(self.env)
        if this is not _UNKNOWN:
            inside["this"] = this
        own: set[str] = set()
        for i, (pattern, default) in enumerate(params):
            own.update(_names(pattern))
            if pattern.kind() == "rest_pattern":  # (...args): the arguments from here on, as a list
                rest = args[i:]
                value = rest if all(_plain(a) for a in rest) else _UNKNOWN
            elif i < len(args):
                value = args[i]
            else:
                value = self._value(default, self.env) if default is not None else _UNKNOWN
            self._bind(pattern, value, inside, self.env)
        self._declared(body, inside, own)
        return inside

    def _declared(self, body: Any, inside: dict[str, Any], own: set[str]) -> None:
        """The names a body declares from what it sees (``const target = path.join(dir, 'x')``), added
        to ``inside``: a function's body with its parameters, a loop's with its variable. A name of
        ``own`` (the parameters, the loop's variable) stays what it was given."""
        for d in body.find_all(kind="variable_declarator"):
            name, value = d.field("name"), d.field("value")
            if name is None or value is None or not _own(d, body) or own & set(_names(name)):
                continue
            if name.kind() == "identifier" and name.text() not in self.changed:
                known = self._value(value, inside)
                if known is not _UNKNOWN:
                    inside[name.text()] = known
                else:
                    inside.pop(name.text(), None)
            elif name.kind() in ("object_pattern", "array_pattern"):
                self._bind(name, self._value(value, inside), inside, inside)

    def _bind(self, pattern: Any, value: Any, env: dict[str, Any], defaults: dict[str, Any]) -> None:
        """Give the names of ``pattern`` (a name, ``{ a, b: c, d = 1 }``, ``[x, y]``, ``...rest``) their
        parts of ``value``; a part not known is not known (a default stands for a part not given)."""
        kind = pattern.kind()
        if kind in ("identifier", "shorthand_property_identifier_pattern"):
            if value is _UNKNOWN:
                env.pop(pattern.text(), None)
            else:
                env[pattern.text()] = value
        elif kind == "object_pattern":
            for part in pattern.named_children():
                if part.kind() == "shorthand_property_identifier_pattern":
                    self._bind(part, _member(value, part.text()), env, defaults)
                elif part.kind() == "pair_pattern" and (key := part.field("key")) and (target := part.field("value")):
                    self._bind(target, _member(value, _key(key)), env, defaults)
                elif part.kind() == "object_assignment_pattern" and (left := part.field("left")) is not None:
                    default = part.field("right")  # { root = "/srv" }: for a part the object does not give
                    given = _member(value, left.text())
                    if isinstance(value, dict) and left.text() not in value and default is not None:
                        given = self._value(default, defaults)
                    self._bind(left, given, env, defaults)
                else:
                    for name in _names(part):
                        env.pop(name, None)
        elif kind == "array_pattern":
            items, index = value if isinstance(value, list) else None, 0
            for part in pattern.children():
                if part.kind() == ",":
                    index += 1
                elif part.kind() == "rest_pattern":
                    self._bind(part, items[index:] if items is not None else _UNKNOWN, env, defaults)
                elif part.is_named():
                    self._bind(
                        part, items[index] if items is not None and index < len(items) else _UNKNOWN, env, defaults
                    )
        elif kind == "assignment_pattern" and (left := pattern.field("left")) is not None:
            default = pattern.field("right")
            given = self._value(default, defaults) if value is _UNKNOWN and default is not None else value
            self._bind(left, given, env, defaults)
        elif kind == "rest_pattern" and (inner := pattern.named_children()):
            self._bind(inner[0], value, env, defaults)
        else:
            for name in _names(pattern):
                env.pop(name, None)

    def _unrolled(self, loop: Any, env: dict[str, Any], depth: int) -> str | None:
        """``for (const d of ["build", "dist"]) {…}``: the loop once per value, its variable known in
        each; over a folder's entries (``fs.readdirSync(dir)``), once, for every entry (``dir/*``),
        unless its body picks some."""
        left, right, body = loop.field("left"), loop.field("right"), loop.field("body")
        if left is None or right is None or body is None or left.kind() not in _PATTERNS:
            return None
        if not any(c.kind() == "of" for c in loop.children()):
            return None  # for…in: the keys, not the values
        values = self._value(right, env)
        if isinstance(values, _Listing):
            values = [] if _picks(body) else ["*"]
        size = (body.range().end.index - body.range().start.index) * len(values) if isinstance(values, list) else 0
        if not isinstance(values, list) or not 0 < len(values) <= 16 or self.written + size > _MAX_WRITTEN:
            return None
        self.written += size
        out = []
        for v in values:
            inside = dict(env)
            self._bind(left, v, inside, env)
            self._declared(body, inside, set(_names(left)))
            shown = json.dumps(v, ensure_ascii=False) if _plain(v) else "…"
            out.append(f"for (const {left.text()} of [{shown}]) " + self._render(body, inside, depth))
        return "\n".join(out)

    def _each(self, call: Any, env: dict[str, Any], depth: int) -> None:
        """``["build", "dist"].forEach((d) => …)``: the callback written out once per value (once, for
        every entry, over a folder's entries its callback does not pick among)."""
        callee, args = call.field("function"), call.field("arguments")
        if callee is None or args is None or callee.kind() != "member_expression":
            return
        prop, target = callee.field("property"), callee.field("object")
        callbacks = [a for a in args.named_children() if a.kind() in ("arrow_function", "function_expression")]
        if prop is None or prop.text() not in ("forEach", "map", "flatMap") or target is None or len(callbacks) != 1:
            return
        values, params, body = self._value(target, env), _parameters(callbacks[0]), callbacks[0].field("body")
        if isinstance(values, _Listing) and body is not None:
            values = [] if _picks(body) else ["*"]
        if not isinstance(values, list) or not params or body is None or not 0 < len(values) <= 16:
            return
        size = (body.range().end.index - body.range().start.index) * len(values)
        if self.written + size > _MAX_WRITTEN or len(self.copies) >= _MAX_COPIES:
            return
        self.written += size
        for v in values:
            inside = dict(env)
            self._bind(params[0][0], v, inside, env)
            self._declared(body, inside, set(_names(params[0][0])))
            self.copies.append("{ " + self._render(body, inside, depth + 1) + " }")

    def _declares(self, node: Any) -> bool:
        """Whether an identifier is a name being declared or a parameter, not a value read."""
        parent = node.parent()
        if parent is None:
            return True
        kind = parent.kind()
        if kind in ("variable_declarator", "assignment_pattern", "required_parameter", "optional_parameter"):
            named = parent.field("name") or parent.field("left") or parent.field("pattern")
            return named is not None and named.range().start.index == node.range().start.index
        if kind == "assignment_expression":
            left = parent.field("left")
            return left is not None and left.range().start.index == node.range().start.index
        if kind == "call_expression":
            callee = parent.field("function")
            return callee is not None and callee.range().start.index == node.range().start.index
        return kind in (
            "formal_parameters",
            "function_declaration",
            "class_declaration",
            "import_specifier",
            "shorthand_property_identifier_pattern",
            "array_pattern",
            "pair_pattern",
            "rest_pattern",
        )

    def _copy(self, call: Any, env: dict[str, Any], depth: int) -> None:
        """A call of the file's function (or a method of an object of the file's class) with known
        arguments: its body written out again below the code, with them in place."""
        callee = call.field("function")
        if callee is None or depth >= 2 or len(self.copies) >= _MAX_COPIES:
            return
        args = self._args(call.field("arguments"), env)
        this, named = _UNKNOWN, callee.text()
        if callee.kind() == "identifier" and named in self.functions:
            params, body = self.functions[named]
            if all(a is _UNKNOWN for a in args) and (args or not any(d is not None for _, d in params)):
                return  # nothing known to add: its body is read where it is written (finish(): its defaults are)
        elif (method := self._method(callee, env)) is not None:
            (params, body), this = method  # janitor.run(): the object's values are known
        else:
            return
        inside = self._bound(params, body, args, this)
        names = {n for pattern, _ in params for n in _names(pattern)}
        key = f"{named}{sorted((k, repr(v)) for k, v in inside.items() if k in names)}{this!r}"
        size = body.range().end.index - body.range().start.index
        if key in self.copied or self.written + size > _MAX_WRITTEN:
            return  # copied already; or copies of a large function, or many: read no further than this
        self.copied.add(key)
        self.written += size
        label = re.sub(r"[^\w$]+", "_", named)
        self.copies.append(f"function {label}() {self._render(body, inside, depth + 1)}")

    def _method(self, callee: Any, env: dict[str, Any]) -> tuple[tuple[list[tuple[Any, Any]], Any], Any] | None:
        """The method ``obj.name`` calls when ``obj`` is an object of one of the file's classes, with it."""
        if callee.kind() != "member_expression" or (holder := callee.field("object")) is None:
            return None
        obj, prop = self._value(holder, env), callee.field("property")
        if not isinstance(obj, dict) or prop is None or (cls := obj.get(_CLASS)) not in self.classes:
            return None
        found = self.classes[cls].methods.get(prop.text())
        return (found, obj) if found is not None else None

    def _instance(self, name: str, args: list[Any]) -> Any:
        """``new Janitor({ root })``: the object, its fields as the constructor sets them (``this.root =
        opts.root``, TypeScript's ``constructor(private opts)``) and as the class declares them."""
        key = f"{name}{args!r}"
        if key not in self.made:
            self.made[key] = self._make(name, args)
        return self.made[key]

    def _make(self, name: str, args: list[Any]) -> Any:
        shape = self.classes[name]
        this: dict[str, Any] = {_CLASS: name}
        for field, value in shape.fields:
            this[field] = self._value(value, self.env) if value is not None else _UNKNOWN
        if (ctor := shape.methods.get("constructor")) is None:
            return this
        params, body = ctor
        if name in self.returning:
            return _UNKNOWN  # a class building an object of itself in its constructor
        self.returning.add(name)
        try:
            inside = self._bound(params, body, args, this)
            for field in shape.kept:
                this[field] = inside.get(field, _UNKNOWN)
            for call in body.find_all(kind="call_expression"):  # super(os.homedir()): the base's fields too
                callee = call.field("function")
                if callee is not None and callee.kind() == "super" and shape.base and _own(call, body):
                    made = self._make(shape.base, self._args(call.field("arguments"), inside))
                    if isinstance(made, dict):
                        this.update({k: v for k, v in made.items() if k != _CLASS})
            for a in body.find_all(kind="assignment_expression"):
                left, right = a.field("left"), a.field("right")
                if left is None or right is None or left.kind() != "member_expression" or not _own(a, body):
                    continue
                holder, prop = left.field("object"), left.field("property")
                if holder is not None and holder.kind() == "this" and prop is not None:
                    this[prop.text()] = self._value(right, inside)
        finally:
            self.returning.discard(name)
        return this

    # --- values --------------------------------------------------------------------------------------

    def _value(self, node: Any, env: dict[str, Any]) -> Any:
        """What an expression is known to hold: a string (a path, a command), a number, a list of them."""
        if self.steps >= _MAX_STEPS:
            return _UNKNOWN  # code built to take long to read: the rest is read as written
        self.steps += 1
        kind = node.kind()
        if kind == "string":
            return "".join(_text(c) for c in node.children() if c.kind() in ("string_fragment", "escape_sequence"))
        if kind == "number":
            return _Number(node.text())
        if kind in ("true", "false"):
            return kind == "true"
        if kind in ("null", "undefined") or (kind == "identifier" and node.text() == "undefined"):
            return _UNDEFINED
        if kind == "ternary_expression":  # cond ? a : b, by what the condition is known to be
            truth = self._truth(node.field("condition"), env)
            chosen = node.field("consequence") if truth else node.field("alternative")
            return self._value(chosen, env) if truth is not None and chosen is not None else _UNKNOWN
        if kind == "unary_expression" and node.text().startswith("!") and (inner := node.field("argument")):
            truth = self._truth(inner, env)
            return _UNKNOWN if truth is None else not truth
        if kind == "identifier":
            if node.text() == "sep" and "sep" not in env and self.path_sep:
                return "/"  # import { sep } from "path"
            return env.get(node.text(), _UNKNOWN) if node.text() not in ("__dirname", "undefined") else _UNKNOWN
        if kind == "this":
            return env.get("this", _UNKNOWN)
        if kind in _WRAPPERS:  # await x, x as T, x!, x satisfies T: what x holds
            inner = node.named_children()
            return self._value(inner[0], env) if inner else _UNKNOWN
        if kind == "new_expression":
            made = node.field("constructor")
            if made is not None and made.kind() == "identifier" and made.text() in self.classes:
                return self._instance(made.text(), self._args(node.field("arguments"), env))
            return _UNKNOWN
        if kind == "parenthesized_expression":
            inner = node.named_children()
            return self._value(inner[0], env) if len(inner) == 1 else _UNKNOWN
        if kind == "template_string":  # its parts; one known only when it runs is a hole, {name}
            parts, holes = [], False
            for c in node.children():
                if c.kind() == "template_substitution":
                    inner = c.named_children()
                    v = self._value(inner[0], env) if len(inner) == 1 else _UNKNOWN
                    known = isinstance(v, str) and not isinstance(v, _Holed)
                    holes = holes or not known
                    parts.append(v if known else "{" + (inner[0].text()[:40] if inner else "") + "}")
                elif c.kind() in ("string_fragment", "escape_sequence"):
                    parts.append(_text(c))
            text = _bounded("".join(parts))
            return _Holed(text) if holes and text is not _UNKNOWN else text
        if kind == "binary_expression":
            left, right = node.field("left"), node.field("right")
            op = node.field("operator")
            op_text = op.text() if op is not None else ""
            lv, rv = self._value(left, env), self._value(right, env)
            if op_text == "+" and isinstance(lv, str) and isinstance(rv, str):
                return _bounded(lv + rv)
            if op_text == "??":  # process.env.ROOT ?? '/srv': an unset variable's default
                return rv if lv is _UNKNOWN or lv is _UNDEFINED else lv
            if op_text in ("||", "&&"):
                truth = _truthy(lv) if lv is not _UNKNOWN else False  # an unset variable is not set
                return (lv if truth else rv) if op_text == "||" else (rv if truth else lv)
            if op_text in ("===", "!==", "==", "!=") and lv is not _UNKNOWN and rv is not _UNKNOWN:
                same = lv == rv if isinstance(lv, (str, bool)) and isinstance(rv, (str, bool)) else None
                return _UNKNOWN if same is None else same == op_text.startswith("=")
            return _UNKNOWN
        if kind == "array":  # its items, spreads of known lists in place: ["--context", ctx, ...args]
            items = self._args(node, env)
            known = all(isinstance(i, (str, dict)) or _plain(i) for i in items)
            return items if known and len(items) <= 64 else _UNKNOWN
        if kind == "member_expression":
            text = re.sub(r"\s+", "", node.text())
            if text in ("process.env.HOME", "process.env.USERPROFILE"):
                return "~"
            if text in ("path.sep", "path.posix.sep"):
                return "/"
            holder, prop = node.field("object"), node.field("property")
            held = self._value(holder, env) if holder is not None else _UNKNOWN
            return held.get(prop.text(), _UNKNOWN) if isinstance(held, dict) and prop is not None else _UNKNOWN
        if kind == "subscript_expression":  # TARGETS[env], steps[0]
            holder, index = node.field("object"), node.field("index")
            held = self._value(holder, env) if holder is not None else _UNKNOWN
            key = self._value(index, env) if index is not None else _UNKNOWN
            if isinstance(held, dict) and isinstance(key, str):
                return held.get(key, _UNKNOWN)
            if isinstance(held, list) and isinstance(key, str) and key.isdigit() and int(key) < len(held):
                return held[int(key)]
            return _UNKNOWN
        if kind == "object":  # { host: "db.prod", tables: ["a", "b"] }: what its known keys hold
            out: dict[str, Any] = {}
            for pair in node.named_children():
                if pair.kind() == "spread_element":  # { ...defaults, root: "/srv" }
                    inner = pair.named_children()
                    spread = self._value(inner[0], env) if inner else _UNKNOWN
                    if not isinstance(spread, dict):
                        return _UNKNOWN
                    out.update({k: v for k, v in spread.items() if k != _CLASS})
                elif pair.kind() == "shorthand_property_identifier":
                    out[pair.text()] = env.get(pair.text(), _UNKNOWN)
                elif pair.kind() == "pair" and (key := pair.field("key")) is not None and (v := pair.field("value")):
                    name = self._value(key, env) if key.kind() == "string" else key.text()
                    if isinstance(name, str):
                        out[name] = self._value(v, env)
            return out if len(out) <= 64 else _UNKNOWN
        if kind == "call_expression":
            return self._call(node, env)
        return _UNKNOWN

    def _truth(self, node: Any, env: dict[str, Any]) -> bool | None:
        """Whether a condition holds, when that is known. The script is read as run with no arguments
        and no variables set: ``process.env.X`` and ``process.argv[2]`` are unset (false)."""
        if node is None:
            return None
        if node.kind() == "parenthesized_expression" and len(inner := node.named_children()) == 1:
            return self._truth(inner[0], env)
        if _UNSET.match(text := re.sub(r"\s+", "", node.text())):
            return text.startswith("!")  # !process.env.X: it is unset, so the negation holds
        value = self._value(node, env)
        return None if value is _UNKNOWN else _truthy(value)

    def _args(self, node: Any, env: dict[str, Any]) -> list[Any]:
        """The values of a call's arguments (or an array's items), a spread of a known list in place;
        after a spread not known, where each item stands is not known either."""
        out: list[Any] = []
        lost = False  # past a spread whose items are not known
        for part in node.named_children() if node is not None else []:
            if lost:
                out.append(_UNKNOWN)
            elif part.kind() != "spread_element":
                out.append(self._value(part, env))
            else:
                inner = part.named_children()
                spread = self._value(inner[0], env) if inner else _UNKNOWN
                lost = not isinstance(spread, list)
                out.extend(spread if not lost else [_UNKNOWN])
        return out

    def _returned(self, name: str, args: list[Any], this: Any = _UNKNOWN) -> Any:
        """What one of the file's functions (or a method of an object of its classes) returns for these
        arguments: its one known return value (an arrow function's expression), read with its
        parameters bound."""
        key = f"{name}{[repr(a) for a in args]}{this!r}"
        if key in self.results:
            return self.results[key]
        if key in self.returning or len(self.returning) >= 3:
            return _UNKNOWN  # a function returning its own call, or calls nested too deep
        params, body = self.functions[name] if this is _UNKNOWN else self.classes[this[_CLASS]].methods[name]
        inside = self._bound(params, body, args, this)
        self.returning.add(key)
        try:
            if body.kind() != "statement_block":
                return self._value(body, inside)  # (d) => path.join(d, "x")
            returns = [r for r in body.find_all(kind="return_statement") if _own(r, body)]
            values = [self._value(r.named_children()[0], inside) if r.named_children() else _UNKNOWN for r in returns]
        finally:
            self.returning.discard(key)
        # `return []` or `return null` on a failure (a catch, a guard) beside the one value it gives
        given = [v for v in values if v is not _UNDEFINED and v != []] or values
        known = {repr(v) for v in given}
        self.results[key] = given[0] if len(known) == 1 and given[0] is not _UNKNOWN else _UNKNOWN
        return self.results[key]

    def _call(self, node: Any, env: dict[str, Any]) -> Any:
        callee = node.field("function")
        name = re.sub(r"\s+", "", callee.text()) if callee is not None else ""
        name = re.sub(r"^require\(['\"](?:node:)?(\w+)['\"]\)", r"\1", name)
        args = self._args(node.field("arguments"), env)
        if name in ("os.homedir", "homedir"):
            return "~"
        if name in ("process.cwd",):
            return "."
        if name in ("os.tmpdir", "tmpdir"):
            return "/tmp"
        if callee is not None and callee.kind() == "identifier" and name in self.functions:
            return self._returned(name, args)
        if callee is not None and (method := self._method(callee, env)) is not None:
            prop = callee.field("property")
            return self._returned(prop.text(), args, method[1]) if prop is not None else _UNKNOWN
        if name in ("Object.entries", "Object.keys", "Object.values") and len(args) == 1:
            held = args[0]
            if not isinstance(held, dict) or _CLASS in held or len(held) > 64:
                return _UNKNOWN
            entries = {"Object.entries": [[k, v] for k, v in held.items()], "Object.keys": list(held)}
            return entries.get(name, list(held.values()))
        if callee is not None and callee.kind() == "member_expression":
            joined = self._joined(callee, args, env)
            if joined is _UNKNOWN:
                joined = self._mapped(callee, node.field("arguments"), env)
            if joined is _UNKNOWN:
                joined = self._kept(callee, node.field("arguments"), env)
            if joined is not _UNKNOWN:
                return joined
        if _LISTS.match(name) and args and isinstance(args[0], str):
            return _Listing(args[0])  # fs.readdirSync(dir): the names of the folder's entries
        if any(not isinstance(a, str) for a in args):
            return _UNKNOWN
        if name in ("path.join", "join", "path.posix.join", "path.resolve", "resolve") and args:
            out = args[0]
            for a in args[1:]:
                out = a if a.startswith("/") else out.rstrip("/") + "/" + a
            return _bounded(out)
        if name in ("path.dirname", "dirname") and len(args) == 1:
            return posixpath.dirname(args[0]) or "."
        if name in ("path.basename", "basename") and len(args) == 1:
            return posixpath.basename(args[0].rstrip("/"))
        if name in ("String", "path.normalize", "normalize") and len(args) == 1:
            return str(args[0])
        if name in ("parseInt", "Number", "Number.parseInt") and args and re.fullmatch(r"[0-9]+", args[0]):
            base = args[1] if len(args) > 1 else "10"
            if base == "8" and re.fullmatch(r"[0-7]+", args[0]):
                return _Number("0o" + args[0])  # parseInt("777", 8): a file mode, written as one
            return _Number(args[0]) if base == "10" else _UNKNOWN
        return _UNKNOWN

    def _mapped(self, callee: Any, args: Any, env: dict[str, Any]) -> Any:
        """``stages.map((s) => `app-${s}`)``, ``.flatMap``: a known list's items through a callback that
        returns an expression, each known."""
        prop, holder = callee.field("property"), callee.field("object")
        callbacks = args.named_children() if args is not None else []
        if prop is None or holder is None or prop.text() not in ("map", "flatMap") or len(callbacks) != 1:
            return _UNKNOWN
        callback, items = callbacks[0], self._value(holder, env)
        body, params = callback.field("body"), _parameters(callback) if callback.kind() in _FUNCTIONS else []
        if not isinstance(items, list) or len(items) > 16 or not params or body is None:
            return _UNKNOWN
        if body.kind() == "statement_block":  # (s) => { return … }: its one statement
            inner = body.named_children()
            if len(inner) != 1 or inner[0].kind() != "return_statement" or not inner[0].named_children():
                return _UNKNOWN
            body = inner[0].named_children()[0]
        out: list[Any] = []
        for item in items:
            inside = dict(env)
            self._bind(params[0][0], item, inside, env)
            value = self._value(body, inside)
            if value is _UNKNOWN or isinstance(value, _Listing):
                return _UNKNOWN
            out.extend(value if prop.text() == "flatMap" and isinstance(value, list) else [value])
        return out if len(out) <= 64 else _UNKNOWN

    def _kept(self, callee: Any, args: Any, env: dict[str, Any]) -> Any:
        """``fs.readdirSync(dir).filter((n) => !KEEP.has(n))``: a folder's entries but a few named ones
        are still its entries (as a loop that skips a few); a filter that picks some is not."""
        prop, holder = callee.field("property"), callee.field("object")
        callbacks = args.named_children() if args is not None else []
        if prop is None or holder is None or prop.text() != "filter" or len(callbacks) != 1:
            return _UNKNOWN
        listing = self._value(holder, env)
        if not isinstance(listing, _Listing):
            return _UNKNOWN
        callback = callbacks[0]
        if callback.text() == "Boolean":
            return listing
        params, body = _parameters(callback) if callback.kind() in _FUNCTIONS else [], callback.field("body")
        if len(params) != 1 or params[0][0].kind() != "identifier" or body is None:
            return _UNKNOWN
        name = re.escape(params[0][0].text())
        skips = rf"!\s*[\w$.]+\.(?:has|includes)\(\s*{name}\s*\)|!\s*{name}\.startsWith\(\s*['\"]\.['\"]\s*\)"
        return listing if re.fullmatch(rf"(?:{skips})(?:\s*&&\s*(?:{skips}))*", body.text().strip()) else _UNKNOWN

    def _joined(self, callee: Any, args: list[Any], env: dict[str, Any]) -> Any:
        """``["rm", "-rf", dir].join(" ")``: a known list's items joined; ``"a,b".split(",")``: a known
        string's parts."""
        prop, holder = callee.field("property"), callee.field("object")
        if prop is not None and holder is not None and prop.text() in _STRING_METHODS and not args:
            text = self._value(holder, env)
            if not isinstance(text, str):
                return _UNKNOWN
            done = _STRING_METHODS[prop.text()](text)
            return _Holed(done) if isinstance(text, _Holed) else done
        if prop is not None and holder is not None and prop.text() == "split" and len(args) == 1:
            text, glue = self._value(holder, env), args[0]
            if isinstance(text, str) and not isinstance(text, _Holed) and isinstance(glue, str) and glue:
                parts = text.split(glue)
                return parts if len(parts) <= 64 else _UNKNOWN
            return _UNKNOWN
        if prop is None or holder is None or prop.text() != "join" or len(args) > 1:
            return _UNKNOWN
        items, glue = self._value(holder, env), args[0] if args else ","
        if isinstance(items, list) and isinstance(glue, str) and all(isinstance(i, str) for i in items):
            return _bounded(glue.join(items))
        return _UNKNOWN


_REPLACEABLE = frozenset(
    {"identifier", "template_string", "binary_expression", "call_expression", "member_expression", "array"}
)
_FUNCTIONS = frozenset(
    {"function_declaration", "function_expression", "arrow_function", "function", "method_definition"}
)


def _own(node: Any, body: Any) -> bool:
    """Whether ``node`` belongs to the function whose body is ``body``, not to a function inside it."""
    start = body.range().start.index
    parent = node.parent()
    while parent is not None:
        if parent.kind() in _FUNCTIONS:  # the nearest function: the owner starts before its body
            return bool(parent.range().start.index < start)
        parent = parent.parent()
    return True


def _parameters(f: Any) -> list[tuple[Any, Any]]:
    """A function's parameters, each as its pattern (a name, ``{ a, b }``, ``[x, y]``, ``...rest``) with
    its default's node (or None)."""
    params: list[tuple[Any, Any]] = []
    formal = f.field("parameters")
    single = f.field("parameter")  # x => …
    for p in formal.named_children() if formal is not None else [single] if single is not None else []:
        target, default = p, None
        if p.kind() == "assignment_pattern":
            target, default = p.field("left"), p.field("right")
        elif p.kind() in ("required_parameter", "optional_parameter"):  # TypeScript's, typed
            target, default = p.field("pattern"), p.field("value")
        if target is not None and target.kind() in _PATTERNS:
            params.append((target, default))
    return params


def _names(pattern: Any) -> list[str]:
    """The names a pattern declares: ``{ a, b: c, d = 1 }`` declares a, c and d."""
    kind = pattern.kind()
    if kind in ("identifier", "shorthand_property_identifier_pattern"):
        return [str(pattern.text())]
    if kind == "pair_pattern":
        value = pattern.field("value")
        return _names(value) if value is not None else []
    if kind in ("object_assignment_pattern", "assignment_pattern"):
        left = pattern.field("left")
        return _names(left) if left is not None else []
    if kind in ("object_pattern", "array_pattern", "rest_pattern"):
        return [name for part in pattern.named_children() for name in _names(part)]
    return []


_PATTERNS = frozenset({"identifier", "object_pattern", "array_pattern", "rest_pattern"})
_WRAPPERS = frozenset({"await_expression", "as_expression", "satisfies_expression", "non_null_expression"})
_CLASS = "\0class"  # the key of an object's class name among its fields
# calls that list a folder's entries by name
_LISTS = re.compile(r"^(?:fs\.|fsp\.|fs\.promises\.|promises\.)?readdir(?:Sync)?$")


class _Taken:
    """A name's part of a destructured declaration (``const { host } = config``): the pattern and the value."""

    def __init__(self, pattern: Any, value: Any) -> None:
        self.pattern, self.value = pattern, value


class _Shape:
    """A class of the file: its methods (with the constructor), the fields it declares with their
    values' nodes, and the constructor's parameters kept as fields (``constructor(private opts)``)."""

    def __init__(self) -> None:
        self.methods: dict[str, tuple[list[tuple[Any, Any]], Any]] = {}
        self.fields: list[tuple[str, Any]] = []
        self.kept: list[str] = []
        self.base = ""  # the class it extends, when the file has it


def _classes(root: Any) -> dict[str, _Shape]:
    """The file's classes by name, a subclass with the methods and fields of its base in the file."""
    shapes: dict[str, _Shape] = {}
    bases: dict[str, str] = {}
    for c in root.find_all(kind="class_declaration"):
        name, body = c.field("name"), c.field("body")
        if name is None or body is None:
            continue
        shape = shapes[name.text()] = _Shape()
        heritage = re.search(
            r"\bextends\s+([\w$]+)", next((h.text() for h in c.children() if h.kind() == "class_heritage"), "")
        )
        if heritage:
            bases[name.text()] = heritage.group(1)
        for member in body.named_children():
            key = member.field("name") or member.field("property")
            if key is None:
                continue
            if member.kind() == "method_definition" and (block := member.field("body")) is not None:
                shape.methods[key.text()] = (_parameters(member), block)
                if key.text() == "constructor":
                    formal = member.field("parameters")
                    shape.kept = [
                        p.field("pattern").text()
                        for p in (formal.named_children() if formal is not None else [])
                        if p.field("pattern") is not None
                        and any(m.kind() == "accessibility_modifier" or m.text() == "readonly" for m in p.children())
                    ]
            elif member.kind() in ("field_definition", "public_field_definition"):
                shape.fields.append((key.text(), member.field("value")))
    for name, base in bases.items():  # a method of the base the subclass does not define is the base's
        if base in shapes:
            shapes[name].base = base
            if "constructor" not in shapes[name].methods:
                shapes[name].kept = shapes[base].kept  # the base's constructor, and the fields it keeps
        seen = {name}
        while base in shapes and base not in seen:
            seen.add(base)
            for method, found in shapes[base].methods.items():
                shapes[name].methods.setdefault(method, found)
            shapes[name].fields = [*shapes[base].fields, *shapes[name].fields]
            base = bases.get(base, "")
    return shapes


def _changed(root: Any) -> set[str]:
    """The names the code assigns after declaring them: ``x = …``, ``x += …``, ``x++``."""
    changed: set[str] = set()
    for kind, field in (("assignment_expression", "left"), ("augmented_assignment_expression", "left")):
        for a in root.find_all(kind=kind):
            target = a.field(field)
            if target is not None and target.kind() == "identifier":
                changed.add(target.text())
    for u in root.find_all(kind="update_expression"):
        target = u.field("argument")
        if target is not None and target.kind() == "identifier":
            changed.add(target.text())
    return changed


def _member(value: Any, key: str) -> Any:
    """What ``value.key`` holds: a key a known object does not have is ``undefined``."""
    if not isinstance(value, dict) or key == _CLASS:
        return _UNKNOWN
    return value.get(key, _UNDEFINED)


def _truthy(value: Any) -> bool:
    """JavaScript's truth of a known value (a number is kept as its text)."""
    if value is _UNDEFINED or isinstance(value, bool):
        return value is True
    if isinstance(value, str) and re.fullmatch(r"[+-]?(?:0+(?:\.0*)?|0[xXoObB]0+)", value):
        return False  # 0, 0.0 (a string "0" is true, but numbers are kept as text)
    return bool(value) or isinstance(value, (list, dict, _Listing))


# a string's methods that give another string (of a hole, a hole still)
_STRING_METHODS: dict[str, Callable[[str], str]] = {
    "trim": str.strip,
    "trimStart": str.lstrip,
    "trimEnd": str.rstrip,
    "toLowerCase": str.lower,
    "toUpperCase": str.upper,
    "toString": str,
}
# a condition on what is unset when the script runs with no arguments and no variables
_UNSET = re.compile(r"^!?process\.(?:env(?:\.\w+|\[['\"]\w+['\"]\])|argv\[[2-9]\])$")


def _key(node: Any) -> str:
    """An object's key as written: ``host``, ``"host"``."""
    text = str(node.text())
    return text[1:-1] if node.kind() == "string" and len(text) >= 2 else text


def _written(value: Any) -> bool:
    """Whether a value can be written in place of a name: a string or a list of them, holes and all."""
    if isinstance(value, str):
        return True
    return isinstance(value, list) and bool(value) and all(_written(v) for v in value)


def _plain(value: Any) -> bool:
    """Whether a value can be written in place as JSON: a string known whole, or a list of them."""
    if isinstance(value, str):
        return not isinstance(value, _Holed)
    return isinstance(value, list) and all(_plain(v) for v in value)


class _Listing:
    """The entries of a folder (``fs.readdirSync(dir)``), known only when the code runs: a loop over them
    reads as one over every entry, ``dir/*``, unless it picks some."""

    def __init__(self, folder: str) -> None:
        self.folder = folder


# a test of an entry's kind (every entry passes one branch or the other)
_KIND_TEST = re.compile(r"\b(?:isDirectory|isFile|isSymbolicLink|existsSync|exists)\b")
_IDLE = re.compile(
    r"^\{?\s*(?:(?:continue|break|return)\b[^;{}]*|console\.\w+\([^;]*\)|\w+\s*\+\+|\w+\s*\+=\s*1)?\s*;?\s*\}?$"
)


def _idle(branch: Any) -> bool:
    """Whether a branch only skips, stops, logs or counts: each of its statements does."""
    if branch.kind() == "else_clause":
        inner = branch.named_children()
        return len(inner) == 1 and _idle(inner[0])
    statements = branch.named_children() if branch.kind() == "statement_block" else [branch]
    return all(_IDLE.match(s.text().strip()) for s in statements if s.kind() != "comment")


def _picks(body: Any) -> bool:
    """Whether a loop's body acts on some entries only: a branch chosen by a condition other than the
    entry's kind, whose branch does more than skip, stop, log or count; or a filter of them."""
    for node in body.find_all(kind="if_statement"):
        condition = node.field("condition")
        if condition is not None and _KIND_TEST.search(condition.text()):
            continue
        branches = [b for b in (node.field("consequence"), node.field("alternative")) if b is not None]
        if not all(_idle(b) for b in branches):
            return True
    return body.find(kind="ternary_expression") is not None


# calls whose known value may stand for them: the home, the working folder, a joined path
_PURE = re.compile(
    r"^(?:require\(['\"](?:node:)?\w+['\"]\)\.|os\.|path\.(?:posix\.)?|process\.)?(?:homedir|tmpdir|cwd|join|resolve|dirname|normalize)\(|^String\("
)


def _text(part: Any) -> str:
    """A string's part as it reads: an escape (``\\n``, ``\\```) as the character it stands for."""
    text = str(part.text())
    return _ESCAPES.get(text, text[1:] if len(text) == 2 else text) if part.kind() == "escape_sequence" else text


_ESCAPES = {"\\n": "\n", "\\t": "\t", "\\r": "\r", "\\0": "\0"}


class _Number(str):
    """A number, kept as the text that writes it (``0o777``, ``1024``): written in place unquoted."""


class _Holed(str):
    """A template's text with holes where a part is known only when it runs: read in a list of
    commands, never written in place of its template."""


def _bounded(text: str) -> Any:
    return text if len(text) <= _MAX_STR else _UNKNOWN
