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
from typing import Any

__all__ = ["javascript_readable"]

_MAX_CODE = 64_000
_MAX_STR = 4096
_MAX_COPIES = 24
_MAX_WRITTEN = 32_000  # the characters of function bodies written out again, in all
_UNKNOWN: Any = object()
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
        self.written = 0
        declared: dict[str, list[Any]] = {}
        for d in root.find_all(kind="variable_declarator"):
            name, value = d.field("name"), d.field("value")
            if name is None or name.kind() != "identifier":
                continue
            if value is not None and value.kind() in ("arrow_function", "function_expression", "function"):
                self._function(name.text(), value)
            declared.setdefault(name.text(), []).append(value)
        for a in root.find_all(kind="assignment_expression"):
            left = a.field("left")
            if left is not None and left.kind() == "identifier":
                declared.setdefault(left.text(), []).append(None)  # assigned again: not one value
        for f in root.find_all(kind="function_declaration"):
            name = f.field("name")
            if name is not None:
                self._function(name.text(), f)
        self.env: dict[str, Any] = {}
        for _ in range(4):  # a value built from another: rounds, as each becomes known
            for name, values in declared.items():
                if len(values) == 1 and values[0] is not None and name not in self.env:
                    value = self._value(values[0], self.env)
                    if value is not _UNKNOWN:
                        self.env[name] = value

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
            own = {name for name, _ in _parameters(node)}
            env = {k: v for k, v in env.items() if k not in own} if own & env.keys() else env
        replaceable = kind in _REPLACEABLE and not (kind == "identifier" and self._declares(node))
        if replaceable and (kind != "call_expression" or _PURE.match(node.text())):
            value = self._value(node, env)
            written = isinstance(value, (str, list)) and not isinstance(value, _Holed)
            if written and len(text := json.dumps(value, ensure_ascii=False)) <= 512:
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

    def _bound(self, params: list[tuple[str, Any]], body: Any, args: list[Any]) -> dict[str, Any]:
        """The names a function's body sees: the file's, its parameters as given (or their defaults),
        and its own names declared from them (``const target = path.join(dir, 'x')``)."""
        inside = dict(self.env)
        for i, (name, default) in enumerate(params):
            value = args[i] if i < len(args) else self._value(default, self.env) if default is not None else _UNKNOWN
            if value is _UNKNOWN:
                inside.pop(name, None)
            else:
                inside[name] = value
        for d in body.find_all(kind="variable_declarator"):
            name, value = d.field("name"), d.field("value")
            if (
                name is not None
                and value is not None
                and name.kind() == "identifier"
                and name.text() not in dict(params)
            ):
                known = self._value(value, inside)
                if known is not _UNKNOWN:
                    inside[name.text()] = known
        return inside

    def _unrolled(self, loop: Any, env: dict[str, Any], depth: int) -> str | None:
        """``for (const d of ["build", "dist"]) {…}``: the loop once per value, its variable known in each."""
        left, right, body = loop.field("left"), loop.field("right"), loop.field("body")
        if left is None or right is None or body is None or left.kind() != "identifier":
            return None
        if not any(c.kind() == "of" for c in loop.children()):
            return None  # for…in: the keys, not the values
        values = self._value(right, env)
        size = (body.range().end.index - body.range().start.index) * len(values) if isinstance(values, list) else 0
        if not isinstance(values, list) or not 0 < len(values) <= 16 or self.written + size > _MAX_WRITTEN:
            return None
        self.written += size
        return "\n".join(
            f"for (const {left.text()} of [{json.dumps(v, ensure_ascii=False)}]) "
            + self._render(body, {**env, left.text(): v}, depth)
            for v in values
        )

    def _each(self, call: Any, env: dict[str, Any], depth: int) -> None:
        """``["build", "dist"].forEach((d) => …)``: the callback written out once per value."""
        callee, args = call.field("function"), call.field("arguments")
        if callee is None or args is None or callee.kind() != "member_expression":
            return
        prop, target = callee.field("property"), callee.field("object")
        callbacks = [a for a in args.named_children() if a.kind() in ("arrow_function", "function_expression")]
        if prop is None or prop.text() not in ("forEach", "map") or target is None or len(callbacks) != 1:
            return
        values, params, body = self._value(target, env), _parameters(callbacks[0]), callbacks[0].field("body")
        if not isinstance(values, list) or not params or body is None or not 0 < len(values) <= 16:
            return
        size = (body.range().end.index - body.range().start.index) * len(values)
        if self.written + size > _MAX_WRITTEN or len(self.copies) >= _MAX_COPIES:
            return
        self.written += size
        for v in values:
            self.copies.append("{ " + self._render(body, {**env, params[0][0]: v}, depth + 1) + " }")

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
        )

    def _copy(self, call: Any, env: dict[str, Any], depth: int) -> None:
        callee = call.field("function")
        if callee is None or callee.kind() != "identifier" or callee.text() not in self.functions:
            return
        if depth >= 2 or len(self.copies) >= _MAX_COPIES:
            return
        params, body = self.functions[callee.text()]
        args_node = call.field("arguments")
        args = [self._value(a, env) for a in (args_node.named_children() if args_node is not None else [])]
        if all(a is _UNKNOWN for a in args):
            return
        inside = self._bound(params, body, args)
        key = f"{callee.text()}{sorted((k, repr(v)) for k, v in inside.items() if k in dict(params))}"
        size = body.range().end.index - body.range().start.index
        if key in self.copied or self.written + size > _MAX_WRITTEN:
            return  # copied already; or copies of a large function, or many: read no further than this
        self.copied.add(key)
        self.written += size
        self.copies.append(f"function {callee.text()}() {self._render(body, inside, depth + 1)}")

    # --- values --------------------------------------------------------------------------------------

    def _value(self, node: Any, env: dict[str, Any]) -> Any:
        """What an expression is known to hold: a string (a path, a command), a number, a list of them."""
        kind = node.kind()
        if kind == "string":
            return "".join(_text(c) for c in node.children() if c.kind() in ("string_fragment", "escape_sequence"))
        if kind == "number":
            return node.text()
        if kind == "identifier":
            return env.get(node.text(), _UNKNOWN) if node.text() not in ("__dirname", "undefined") else _UNKNOWN
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
            if op_text in ("||", "??"):
                return lv if lv is not _UNKNOWN else rv  # process.env.ROOT || '/srv'
            return _UNKNOWN
        if kind == "array":
            items = [self._value(c, env) for c in node.named_children()]
            return items if all(isinstance(i, str) for i in items) and len(items) <= 64 else _UNKNOWN
        if kind == "member_expression":
            text = re.sub(r"\s+", "", node.text())
            if text in ("process.env.HOME", "process.env.USERPROFILE"):
                return "~"
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
                if pair.kind() == "shorthand_property_identifier":
                    out[pair.text()] = env.get(pair.text(), _UNKNOWN)
                elif pair.kind() == "pair" and (key := pair.field("key")) is not None and (v := pair.field("value")):
                    name = self._value(key, env) if key.kind() == "string" else key.text()
                    if isinstance(name, str):
                        out[name] = self._value(v, env)
            return out if len(out) <= 64 else _UNKNOWN
        if kind == "call_expression":
            return self._call(node, env)
        return _UNKNOWN

    def _returned(self, name: str, args: list[Any]) -> Any:
        """What one of the file's functions returns for these arguments: its one known return value
        (an arrow function's expression), read with its parameters bound."""
        key = f"{name}{[repr(a) for a in args]}"
        if key in self.results:
            return self.results[key]
        if key in self.returning or len(self.returning) >= 3:
            return _UNKNOWN  # a function returning its own call, or calls nested too deep
        params, body = self.functions[name]
        inside = self._bound(params, body, args)
        self.returning.add(key)
        try:
            if body.kind() != "statement_block":
                return self._value(body, inside)  # (d) => path.join(d, "x")
            returns = [r for r in body.find_all(kind="return_statement") if _own(r, body)]
            values = [self._value(r.named_children()[0], inside) if r.named_children() else _UNKNOWN for r in returns]
        finally:
            self.returning.discard(key)
        known = {repr(v) for v in values}
        self.results[key] = values[0] if len(known) == 1 and values[0] is not _UNKNOWN else _UNKNOWN
        return self.results[key]

    def _call(self, node: Any, env: dict[str, Any]) -> Any:
        callee = node.field("function")
        name = re.sub(r"\s+", "", callee.text()) if callee is not None else ""
        name = re.sub(r"^require\(['\"](?:node:)?(\w+)['\"]\)", r"\1", name)
        args_node = node.field("arguments")
        args = [self._value(a, env) for a in (args_node.named_children() if args_node is not None else [])]
        if name in ("os.homedir", "homedir"):
            return "~"
        if name in ("process.cwd",):
            return "."
        if name in ("os.tmpdir", "tmpdir"):
            return "/tmp"
        if callee is not None and callee.kind() == "identifier" and name in self.functions:
            return self._returned(name, args)
        if any(not isinstance(a, str) for a in args):
            return _UNKNOWN
        if name in ("path.join", "join", "path.posix.join", "path.resolve", "resolve") and args:
            out = args[0]
            for a in args[1:]:
                out = a if a.startswith("/") else out.rstrip("/") + "/" + a
            return _bounded(out)
        if name in ("path.dirname", "dirname") and len(args) == 1:
            return posixpath.dirname(args[0]) or "."
        if name in ("String", "path.normalize", "normalize") and len(args) == 1:
            return args[0]
        return _UNKNOWN


_REPLACEABLE = frozenset({"identifier", "template_string", "binary_expression", "call_expression", "member_expression"})
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


def _parameters(f: Any) -> list[tuple[str, Any]]:
    """A function's parameters, each with its default's node (or None)."""
    params: list[tuple[str, Any]] = []
    formal = f.field("parameters")
    single = f.field("parameter")  # x => …
    for p in formal.named_children() if formal is not None else [single] if single is not None else []:
        if p.kind() == "identifier":
            params.append((p.text(), None))
        elif p.kind() in ("assignment_pattern", "required_parameter", "optional_parameter"):
            target = p.field("left") or p.field("pattern")
            default = p.field("right") or p.field("value")
            if target is not None and target.kind() == "identifier":
                params.append((target.text(), default))
    return params


# calls whose known value may stand for them: the home, the working folder, a joined path
_PURE = re.compile(
    r"^(?:require\(['\"](?:node:)?\w+['\"]\)\.|os\.|path\.(?:posix\.)?|process\.)?(?:homedir|tmpdir|cwd|join|resolve|dirname|normalize)\(|^String\("
)


def _text(part: Any) -> str:
    """A string's part as it reads: an escape (``\\n``, ``\\```) as the character it stands for."""
    text = str(part.text())
    return _ESCAPES.get(text, text[1:] if len(text) == 2 else text) if part.kind() == "escape_sequence" else text


_ESCAPES = {"\\n": "\n", "\\t": "\t", "\\r": "\r", "\\0": "\0"}


class _Holed(str):
    """A template's text with holes where a part is known only when it runs: read in a list of
    commands, never written in place of its template."""


def _bounded(text: str) -> Any:
    return text if len(text) <= _MAX_STR else _UNKNOWN
