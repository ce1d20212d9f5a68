"""JavaScript/TypeScript on a real parser (ast-grep): command injection, code evaluation, SQL built
from values in any statement and letter case, NoSQL ``$where``, disabled TLS, hard-coded secrets.

ast-grep parses with tree-sitter grammars (JavaScript, TypeScript, TSX) and matches on syntax
nodes, so a call split over lines, an optional call (``eval?.(x)``), a member call
(``cp.execSync``) or a string in a comment are told apart as a parser tells them. One parse per
text; the rules walk the nodes they need. A value is *dynamic* unless it is a literal, a
template without substitutions, a concatenation of those, or a name declared once in the file
with such a value: ``exec("ls -l")`` is not injection, ``exec("ls " + dir)`` is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from watcher.roles._security_model import Finding
from watcher.roles._security_secrets import example_value
from watcher.roles._security_sql import is_sql

__all__ = ["js_ast_findings", "parse", "process_modules"]

_CHILD_PROCESS = r"""['"](?:node:)?child_process['"]"""
_DESTRUCTURED = re.compile(
    rf"(?:\{{([^}}]*)\}}\s*=\s*require\(\s*{_CHILD_PROCESS}\s*\)|import\s*\{{([^}}]*)\}}\s*from\s*{_CHILD_PROCESS})"
)
_NAMESPACE = re.compile(
    rf"(?:(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*require\(\s*{_CHILD_PROCESS}\s*\)"
    rf"|import\s+(?:\*\s+as\s+)?([A-Za-z_$][\w$]*)\s+from\s*{_CHILD_PROCESS})"
)
_MEMBER_IMPORT = re.compile(rf"(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*require\(\s*{_CHILD_PROCESS}\s*\)\.(\w+)")
_PROCESS_OBJECTS = frozenset({"child_process", "childProcess", "ChildProcess", "childprocess"})
_SHELL_RUNNERS = frozenset({"exec", "execSync"})
_PROGRAM_RUNNERS = frozenset({"spawn", "spawnSync", "execFile", "execFileSync", "fork"})
_VM_RUNNERS = frozenset({"runInNewContext", "runInThisContext", "runInContext", "compileFunction", "Script"})
_GLOBALS = frozenset({"", "window", "globalThis", "global", "self"})
_TIMERS = frozenset({"setTimeout", "setInterval", "setImmediate"})
_SQL_RUNNERS = frozenset(
    {"query", "execute", "raw", "run", "all", "get", "exec", "prepare", "unsafe", "$queryRawUnsafe"}
)
_SECRET_KEYS = re.compile(
    r"^['\"]?(?:secret|secretOrKey|secretOrPrivateKey|sessionSecret|jwtSecret|cookieSecret)['\"]?$"
)
_TLS_OFF = {"rejectUnauthorized": "false", "strictSSL": "false", "secure": None, "insecure": "true"}

# tree-sitter grammar per file extension; the TypeScript grammar cannot read JSX, TSX can
_GRAMMARS = {".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx"}


def _grammar(path: str) -> str:
    return next((g for ext, g in _GRAMMARS.items() if path.endswith(ext)), "javascript")


def process_modules(text: str) -> frozenset[str]:
    """Names this text binds to the child_process module (``import * as cp from …``)."""
    return frozenset(m.group(1) or m.group(2) for m in _NAMESPACE.finditer(text))


def parse(text: str, path: str = "") -> Any:
    """The syntax tree of a JavaScript/TypeScript text, in the grammar its file name calls for."""
    from ast_grep_py import SgRoot  # imported on first JS text: keeps the role's import light

    return SgRoot(text, _grammar(path)).root()


def js_ast_findings(text: str, *, path: str = "", root: Any = None) -> list[Finding]:
    """Findings of the structural rules in one JavaScript/TypeScript text (parsed once by ``parse``)."""
    scan = _Scan(text, root if root is not None else parse(text, path))
    return [*scan.calls(), *scan.sql(), *scan.pairs(), *scan.aliases()]


class _Scan:
    """One parsed text and what the rules learn about it (constant names, child_process bindings)."""

    def __init__(self, text: str, root: Any) -> None:
        self.text = text
        self.root = root
        self.constants, self.assigned = self._declarations()
        self.runners: dict[str, str] = {}  # bare names bound to child_process functions: local → exported
        self.modules = set(_PROCESS_OBJECTS)  # names bound to the child_process module
        for match in _DESTRUCTURED.finditer(text):
            for item in (match.group(1) or match.group(2)).split(","):
                names = re.split(r"\s*(?::|\bas\b)\s*", item.strip())
                if names[-1].strip():
                    self.runners[names[-1].strip()] = names[0].strip()
        self.modules |= {m.group(1) or m.group(2) for m in _NAMESPACE.finditer(text)}
        self.runners |= {m.group(1): m.group(2) for m in _MEMBER_IMPORT.finditer(text)}
        self.uses_child_process = bool(re.search(_CHILD_PROCESS, text))

    # ------------------------------------------------------------------ constants

    def _declarations(self) -> tuple[dict[str, Any], set[str]]:
        """``const`` names declared once with a value (their value nodes), and names assigned later.

        Only ``const`` bindings are read as constants: a ``let`` or ``var`` may be reassigned by
        code this text does not show. Every binding is kept for ``binding_above``.
        """
        values: dict[str, list[Any]] = {}
        self.bindings: dict[str, list[tuple[int, Any]]] = {}
        for node in self.root.find_all(kind="variable_declarator"):
            name, value = node.field("name"), node.field("value")
            if name is not None and value is not None and name.kind() == "identifier":
                declaration = node.parent()
                keyword = declaration.child(0) if declaration is not None else None
                if keyword is not None and keyword.text() == "const":
                    values.setdefault(name.text(), []).append(value)
                self.bindings.setdefault(name.text(), []).append((node.range().start.line, value))
        assigned = set()
        for node in self.root.find_all(
            any=[{"kind": "assignment_expression"}, {"kind": "augmented_assignment_expression"}]
        ):
            left = node.field("left")
            if left is not None and left.kind() == "identifier":
                assigned.add(left.text())
                if node.kind() == "assignment_expression" and (right := node.field("right")) is not None:
                    self.bindings.setdefault(left.text(), []).append((node.range().start.line, right))
        once = {name: nodes[0] for name, nodes in values.items() if len(nodes) == 1}
        return once, assigned

    def binding_above(self, name: str, line: int) -> Any:
        """The value last given to ``name`` on a line above ``line`` (0-based), or None."""
        above = [(at, value) for at, value in self.bindings.get(name, ()) if at < line]
        return max(above, key=lambda item: item[0])[1] if above else None

    def dynamic(self, node: Any, depth: int = 0) -> bool:
        """Whether the value of ``node`` may come from outside the code (see the module docstring)."""
        kind = node.kind()
        if kind in ("string", "number", "true", "false", "null", "undefined", "regex"):
            return False
        if kind == "template_string":
            return any(c.kind() == "template_substitution" for c in node.children())
        if kind in ("parenthesized_expression", "as_expression", "non_null_expression", "satisfies_expression"):
            inner = node.child(0) if kind != "parenthesized_expression" else node.child(1)
            return inner is None or self.dynamic(inner, depth)
        if kind == "binary_expression":
            left, right = node.field("left"), node.field("right")
            return left is None or right is None or self.dynamic(left, depth) or self.dynamic(right, depth)
        if kind == "identifier" and depth < 3:
            name = node.text()
            value = self.constants.get(name)
            if value is not None and name not in self.assigned:
                return self.dynamic(value, depth + 1)
        return True

    # ------------------------------------------------------------------ calls

    def calls(self) -> Iterator[Finding]:
        for node in self.root.find_all(any=[{"kind": "call_expression"}, {"kind": "new_expression"}]):
            callee = node.field("function") if node.kind() == "call_expression" else node.field("constructor")
            arguments = node.field("arguments")
            if callee is None:
                continue
            args = [a for a in (arguments.children() if arguments is not None else ()) if a.is_named()]
            args = [a for a in args if a.kind() != "comment"]
            name, owner = _callee(callee)
            finding = self._call(node, name, owner, args)
            if finding is not None:
                yield finding

    def _call(self, node: Any, name: str, owner: str, args: list[Any]) -> Finding | None:
        first = args[0] if args else None
        from_module = owner in self.modules or (not owner and name in self.runners)
        if not owner and name in self.runners:
            name = self.runners[name]  # const run = require("child_process").exec
        if name in _SHELL_RUNNERS and from_module and first is not None and self.dynamic(first):
            return self._finding(
                node,
                "js:command-injection",
                f"Shell command built from values ({name})",
                "warning",
                f"`{name}` runs its string through a shell, and the string here is built from values: one "
                "holding `;`, `|` or `$(...)` runs commands of its own. Use `execFile`/`spawn` with the "
                "program and an array of arguments (no `shell: true`).",
                first,
            )
        if name in _PROGRAM_RUNNERS and (from_module or (not owner and self.uses_child_process)):
            shell = next((a for a in args if a.kind() == "object" and _shell_on(a)), None)
            if shell is not None:
                return self._finding(
                    node,
                    "js:spawn-shell",
                    f"{name} with shell: true",
                    "warning",
                    f"`{name}` with the `shell` option joins the program and its arguments into one shell "
                    "command line, so an argument holding `;` or `$(...)` runs commands. Drop the `shell` option.",
                    first,
                )
            if from_module and first is not None and self.dynamic(first):
                return self._finding(
                    node,
                    "js:command-injection",
                    f"Program to run taken from a value ({name})",
                    "warning",
                    f"The program `{name}` starts is not a constant: whoever controls that value chooses what "
                    "runs on this machine. Run a fixed program and pass values only as arguments.",
                    first,
                )
        sink = self._code_sink(name, owner, args)
        if sink is not None:
            return self._code_exec(node, *sink)
        if name in _SQL_RUNNERS and owner and first is not None:
            return self._sql_sink(node, name, first)
        return None

    def _code_sink(self, name: str, owner: str, args: list[Any]) -> tuple[str, Any] | None:
        """(what runs code, the value it runs) when a call evaluates a string that is not a constant."""
        first = args[0] if args else None
        if name == "eval" and first is not None and self.dynamic(first):
            return "eval()", first  # eval(x), (0, eval)(x), window.eval(x), eval?.(x)
        if name == "Function" and owner in _GLOBALS and any(self.dynamic(a) for a in args):
            return "new Function()", args[-1]
        if name in _VM_RUNNERS and owner == "vm" and first is not None and self.dynamic(first):
            return f"vm.{name}()", first
        strings = ("template_string", "binary_expression", "string")
        if (
            name in _TIMERS
            and owner in _GLOBALS
            and first is not None
            and first.kind() in strings
            and self.dynamic(first)
        ):
            return f"{name}() with a string", first
        return None

    def aliases(self) -> Iterator[Finding]:
        """``var run = eval``: calls through the alias evaluate code out of sight of the eval rule."""
        for node in self.root.find_all(kind="identifier", regex="^eval$"):
            parent = node.parent()
            if parent is None or parent.kind() not in ("variable_declarator", "assignment_expression", "pair"):
                continue
            if parent.field("value" if parent.kind() != "assignment_expression" else "right") != node:
                continue
            yield self._finding(
                parent,
                "js:code-exec",
                "eval passed around under another name",
                "warning",
                "eval is given another name here, so code it runs is evaluated wherever the alias is called; "
                "a value reaching it runs as JavaScript. Parse the data instead of evaluating it.",
                None,
            )

    def _code_exec(self, node: Any, what: str, value: Any) -> Finding:
        return self._finding(
            node,
            "js:code-exec",
            f"Code evaluated from a value ({what})",
            "warning",
            f"{what} runs the string it is given as JavaScript, and this string is not a constant: input "
            "that reaches it runs as code with the page's or the server's rights. Parse the data instead "
            "(JSON.parse, a lookup table, a function chosen by name).",
            value,
        )

    def _sql_sink(self, node: Any, name: str, first: Any) -> Finding | None:
        """``db.query(q)`` where ``q`` was built as SQL from values in this file."""
        value = first
        if value.kind() == "object":  # conn.query({sql: q, ...})
            pair = next((p for p in value.children() if p.kind() == "pair" and _key(p) == "sql"), None)
            value = pair.field("value") if pair is not None else None
        if value is None or value.kind() != "identifier":
            return None
        built = self.constants.get(value.text())
        if built is None or not self._sql_value(built):
            return None
        return self._finding(
            node,
            "js:sql-injection",
            f"SQL built from values run by {name}()",
            "warning",
            f"`{value.text()}` is SQL with values spliced into it, and `{name}()` runs it: input containing "
            "quotes rewrites the query. Use placeholders and pass the values separately.",
            built,
        )

    # ------------------------------------------------------------------ SQL

    def _sql_value(self, node: Any) -> bool:
        """Whether ``node`` builds SQL text out of literal SQL and dynamic values."""
        kind = node.kind()
        if kind == "template_string":
            literal = " ".join(c.text() for c in node.children() if c.kind() == "string_fragment")
            return self.dynamic(node) and is_sql(literal + " x")
        if kind == "binary_expression" and (op := node.field("operator")) is not None and op.text() == "+":
            strings = [
                n.text()[1:-1]
                for n in node.find_all(any=[{"kind": "string"}, {"kind": "template_string"}])
                if n.kind() == "string" or not self.dynamic(n)
            ]
            return self.dynamic(node) and is_sql(" ".join(strings) + " x")
        if kind == "call_expression":
            callee = node.field("function")
            args = node.field("arguments")
            arg_nodes = [a for a in (args.children() if args is not None else ()) if a.is_named()]
            if callee is None or not arg_nodes:
                return False
            name, owner = _callee(callee)
            if name == "concat" and callee.kind() == "member_expression":
                obj = callee.field("object")
                if obj is not None and obj.kind() == "identifier":  # query = query.concat(input)
                    obj = self.binding_above(obj.text(), node.range().start.line)
                return (
                    obj is not None
                    and obj.kind() == "string"
                    and is_sql(obj.text()[1:-1] + " x")
                    and any(self.dynamic(a) for a in arg_nodes)
                )
            if name == "format" and owner == "util":
                return (
                    arg_nodes[0].kind() == "string"
                    and is_sql(arg_nodes[0].text()[1:-1] + " x")
                    and any(self.dynamic(a) for a in arg_nodes[1:])
                )
        return False

    def sql(self) -> Iterator[Finding]:
        seen: list[tuple[int, int]] = []
        rule = {
            "any": [
                {"kind": "template_string", "has": {"kind": "template_substitution"}},
                {"kind": "binary_expression", "not": {"inside": {"kind": "binary_expression"}}},
                {"kind": "call_expression", "regex": r"^(?:util\.format|['\"]|[\w$.]+\.concat\()"},
                {"kind": "augmented_assignment_expression"},
            ]
        }
        for node in self.root.find_all(**rule):
            target = node.field("right") if node.kind() == "augmented_assignment_expression" else node
            if target is None:
                continue
            if node.kind() == "augmented_assignment_expression":
                left = node.field("left")
                base = self.binding_above(left.text(), node.range().start.line) if left is not None else None
                if base is None or not is_sql(base.text() + " x") or not self.dynamic(target):
                    continue
            elif not self._sql_value(target):
                continue
            span = (node.range().start.line, node.range().end.line)
            if any(a <= span[0] and span[1] <= b for a, b in seen):
                continue
            seen.append(span)
            yield self._finding(
                node,
                "js:sql-injection",
                "SQL built from values",
                "warning",
                "The query is built by splicing values into SQL text: input containing quotes rewrites the "
                "query (data theft or loss). Use placeholders and pass the values separately.",
                node,
            )

    # ------------------------------------------------------------------ object options

    def pairs(self) -> Iterator[Finding]:
        for pair in self.root.find_all(kind="pair"):
            key, value = _key(pair), pair.field("value")
            if value is None:
                continue
            if key in ("rejectUnauthorized", "strictSSL") and value.kind() == "false":
                yield self._finding(
                    pair,
                    "js:tls-off",
                    f"TLS verification disabled ({key}: false)",
                    "warning",
                    f"`{key}: false` accepts any certificate, so anyone on the network path can read and change "
                    "the traffic. Keep verification on and give the client the CA it needs (the `ca` option or "
                    "NODE_EXTRA_CA_CERTS).",
                    pair,
                )
            elif key == "$where" and self.dynamic(value):
                yield self._finding(
                    pair,
                    "js:nosql-injection",
                    "MongoDB $where built from values",
                    "warning",
                    "`$where` runs its string as JavaScript inside the database; built from values, input can "
                    "change what it does. Use ordinary query operators ($eq, $gt) with the values.",
                    pair,
                )
            elif _SECRET_KEYS.match(key) and self._hard_coded(value):
                yield self._finding(
                    pair,
                    "js:hard-coded-secret",
                    "Hard-coded session or token secret",
                    "warning",
                    "The secret that signs sessions or tokens is written into the code: anyone who reads the "
                    "code can forge them. Read it from the environment or a secrets manager.",
                    value,
                )

    def _hard_coded(self, value: Any) -> bool:
        if value.kind() == "identifier" and value.text() not in self.assigned:
            value = self.binding_above(value.text(), value.range().start.line)
        if value is None or value.kind() != "string":
            return False
        word = value.text()[1:-1]
        return bool(word) and not example_value(word)

    # ------------------------------------------------------------------ findings

    def _finding(self, node: Any, rule: str, title: str, severity: Any, explanation: str, value: Any) -> Finding:
        """A finding on the statement holding ``node``, reaching up to where ``value`` was built."""
        start, end = node.range().start.line + 1, node.range().end.line + 1
        if value is not None and value.kind() == "identifier":
            bound = self.binding_above(value.text(), node.range().start.line + 1)
            if bound is not None and 0 <= start - (bound.range().start.line + 1) <= 15:
                start = bound.range().start.line + 1
        snippet = " ".join(node.text().split())[:200]
        return Finding(rule, title, severity, explanation, start, end, fingerprint=f"{rule}:{snippet}")


def _callee(node: Any) -> tuple[str, str]:
    """(name, owner) of what is called: ``cp.exec`` → (exec, cp); ``(0, eval)`` → (eval, '')."""
    kind = node.kind()
    if kind == "parenthesized_expression":
        inner = [c for c in node.children() if c.is_named()]
        if inner and inner[-1].kind() == "sequence_expression":
            inner = [c for c in inner[-1].children() if c.is_named()]
        return _callee(inner[-1]) if inner else ("", "")
    if kind == "member_expression":
        prop, obj = node.field("property"), node.field("object")
        owner = obj.text() if obj is not None else ""
        if obj is not None and obj.kind() == "call_expression" and obj.text().startswith("require("):
            owner = "child_process" if "child_process" in obj.text() else owner
        return (prop.text() if prop is not None else "", owner.rsplit(".", 1)[-1])
    return node.text(), ""


def _key(pair: Any) -> str:
    key = pair.field("key")
    return key.text().strip("'\"") if key is not None else ""


def _shell_on(options: Any) -> bool:
    for pair in options.children():
        if pair.kind() == "pair" and _key(pair) == "shell":
            value = pair.field("value")
            return value is not None and value.kind() not in ("false", "null", "undefined")
    return False
