"""Python rules beyond bandit's defaults, on the ``ast`` of the code bandit also reads.

* SQL of any statement and letter case built by ``%``, ``.format``, f-strings or ``+`` from
  values (bandit knows only some statements, and not ``CREATE USER … '{password}'``); a query
  built in a variable is also reported where it is run.
* Deserialisation: ``pickle``/``_pickle``/``cPickle``/``dill``/``shelve``/``jsonpickle``/``marshal``
  loads of data that is not a literal, ``yaml.unsafe_load`` and ``yaml.load`` with an unsafe
  ``Loader``; a class whose ``__reduce__`` runs a command, pickled.
* Commands through aliases bandit does not resolve (``from os import system``, ``getattr(os, "system")``).
* TLS verification switched off by assignment (``ssl._create_default_https_context =
  ssl._create_unverified_context``, ``verify_mode = ssl.CERT_NONE``, ``check_hostname = False``).

It also tells bandit's findings apart from constants: ``eval("1 + 1")`` or
``pickle.loads(b"...")`` of a literal, and ``yaml.load(f, Loader=yaml.SafeLoader)``, are not
problems (``constant_lines``). Names are resolved through the file's imports and aliases.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator

from watcher.core.interjection import Severity
from watcher.roles._security_model import Finding
from watcher.roles._security_sql import is_sql, mentions_credentials

__all__ = ["Analysis", "analyse", "python_tree"]

_SQL_SINKS = frozenset(
    {"execute", "executemany", "executescript", "raw", "read_sql", "read_sql_query", "exec_driver_sql", "mogrify"}
)
_CURSOR_SINKS = frozenset({"execute", "executemany", "executescript", "mogrify", "exec_driver_sql"})
_PICKLERS = ("pickle", "_pickle", "cPickle", "dill", "shelve", "jsonpickle", "marshal", "cloudpickle")
_UNSAFE_LOADERS = frozenset({"Loader", "UnsafeLoader", "FullLoader", "CLoader", "CUnsafeLoader", "CFullLoader"})
_SAFE_LOADERS = frozenset({"SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"})
_COMMANDS = frozenset(
    {
        "os.system",
        "os.popen",
        "os.popen2",
        "os.popen3",
        "os.popen4",
        "commands.getoutput",
        "commands.getstatusoutput",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
    }
)
_RUNS_CODE = ("os.system", "os.popen", "subprocess.", "eval", "exec", "builtins.eval", "builtins.exec")
_TRACE = 15  # lines between building a query in a variable and running it
# where a spliced value is a value, not a table name: after a comparison, LIKE, IN (, VALUES (, a comma, LIMIT
_VALUE_HOLE = re.compile(r"""(?i)(?:[=<>]|\blike|\bin\s*\(|\bvalues\s*\(|,|\blimit|\boffset)\s*['"(%]*\s* x """)


class Analysis:
    """What the AST rules found in one text, and the lines where bandit's finding is about a constant."""

    def __init__(self, tree: ast.Module, lines: list[str]) -> None:
        self.lines = lines
        self.tree = tree
        # one pass over the tree: every node outside in (as ast.walk), each one's parent
        self.parents: dict[ast.AST, ast.AST] = {}
        self.nodes: list[ast.AST] = [tree]
        parents, nodes, AST = self.parents, self.nodes, ast.AST
        for node in nodes:  # the list grows while it is read (ast.iter_child_nodes, inlined)
            for field in node._fields:
                value = getattr(node, field, None)
                if isinstance(value, AST):
                    parents[value] = node
                    nodes.append(value)
                elif isinstance(value, list):
                    for child in value:
                        if isinstance(child, AST):
                            parents[child] = node
                            nodes.append(child)
        self.aliases: dict[str, str] = {}
        self.defined: set[str] = set()
        self.cursor_calls: dict[str, list[tuple[int, ast.Call]]] = {}  # cur.execute(name) by name
        for node in self.nodes:
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.defined.add(node.name)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _CURSOR_SINKS
                and node.args
                and isinstance(node.args[0], ast.Name)
            ):
                self.cursor_calls.setdefault(node.args[0].id, []).append((node.lineno, node))
        self.findings: list[Finding] = []
        self.constant_lines: set[int] = set()  # bandit's findings on these lines are about literals
        self.safe_yaml_lines: set[int] = set()
        self._run()

    # ------------------------------------------------------------------ names and values

    def qualname(self, node: ast.AST) -> str:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualname(node.value)
            return f"{base}.{node.attr}" if base else node.attr
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            return f"{self.qualname(node.args[0])}.{node.args[1].value}"
        return ""

    def dynamic(self, node: ast.AST | None) -> bool:
        """Whether a value is built from something other than literals."""
        if node is None or isinstance(node, ast.Constant):
            return False
        if isinstance(node, ast.JoinedStr):
            return any(isinstance(v, ast.FormattedValue) and self.dynamic(v.value) for v in node.values)
        if isinstance(node, ast.BinOp):
            return self.dynamic(node.left) or self.dynamic(node.right)
        if isinstance(node, (ast.Tuple, ast.List)):
            return any(self.dynamic(e) for e in node.elts)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            return (
                self.dynamic(node.func.value)
                or any(self.dynamic(a) for a in node.args)
                or any(self.dynamic(k.value) for k in node.keywords)
            )
        return True

    def _sql_text(self, node: ast.AST) -> str | None:
        """A string built from values, with `` x `` where each value goes; None for anything else."""
        if isinstance(node, ast.JoinedStr):
            if not self.dynamic(node):
                return None
            return "".join(v.value if isinstance(v, ast.Constant) else " x " for v in node.values)  # type: ignore[misc]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and self.dynamic(node):
            return "".join(
                n.value if isinstance(n, ast.Constant) and isinstance(n.value, str) else " x " for n in _added(node)
            )
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Mod)
            and self.dynamic(node.right)
            and isinstance(node.left, ast.Constant)
            and isinstance(node.left.value, str)
        ):
            return re.sub(r"%(?:\([^)]*\))?[-+ #0]*\d*(?:\.\d+)?[sdifr]", " x ", node.left.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            base = node.func.value
            if isinstance(base, ast.Constant) and isinstance(base.value, str) and self.dynamic(node):
                return re.sub(r"\{[^{}]*\}", " x ", base.value)
        return None

    def _spliced(self, text: str) -> bool:
        """SQL with a value in it: any statement but a SELECT, or a SELECT comparing or limiting by a value.

        ``SELECT * FROM {table}`` in a notebook names a table; it is data work, not input in a query.
        """
        if not is_sql(text):
            return False
        return not re.match(r"(?is)\s*\(?\s*select\b", text) or bool(_VALUE_HOLE.search(text))

    # ------------------------------------------------------------------ the walk

    def _run(self) -> None:
        covered: set[int] = set()  # ids of nodes inside a reported query (ast.walk goes outside in)
        reduce_classes = self._command_reducers()
        for node in self.nodes:
            if isinstance(node, ast.Call):
                self._call(node, reduce_classes)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                self._assignment(node)
            if isinstance(node, (ast.JoinedStr, ast.BinOp, ast.Call)) and id(node) not in covered:
                text = self._sql_text(node)
                if text is not None and (self._spliced(text) or (is_sql(text) and self._run_by_cursor(node))):
                    covered.update(id(n) for n in ast.walk(node))
                    self.findings.append(self._sql_finding(node, text))
                elif text is None and _constant_sql(node):
                    self.constant_lines.add(node.lineno)

    def _run_by_cursor(self, node: ast.AST) -> bool:
        """Whether a string is run by a database cursor: passed to ``execute()`` directly, or
        assigned to a name that is, a few lines further down in the same function.

        ``SELECT * FROM {table}`` handed to ``pd.read_sql`` in a notebook names a table to look
        at; handed to ``cur.execute`` it is a statement an input can rewrite.
        """
        parent = self.parents.get(node)
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node:
            return isinstance(parent.func, ast.Attribute) and parent.func.attr in _CURSOR_SINKS
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            name, scope = parent.targets[0].id, self._scope(parent)
            return any(
                line - parent.lineno <= _TRACE and self._scope(call) is scope
                for line, call in self.cursor_calls.get(name, ())
                if line > parent.lineno
            )
        return False

    def _sql_finding(self, node: ast.AST, text: str) -> Finding:
        critical = mentions_credentials(text)
        return self._finding(
            node,
            "py:sql-built",
            "SQL built from values" + (" (credentials in the query)" if critical else ""),
            "critical" if critical else "warning",
            "The SQL text is put together from values by formatting or concatenation: input holding a quote "
            "rewrites the statement"
            + (", here one that handles credentials" if critical else "")
            + '. Pass the values as query parameters, e.g. cur.execute("... WHERE name = %s", (name,)).',
        )

    def _call(self, node: ast.Call, reduce_classes: set[str]) -> None:
        name = self.qualname(node.func)
        attr = node.func.attr if isinstance(node.func, ast.Attribute) else name
        first = node.args[0] if node.args else None
        module, _, function = name.rpartition(".")
        constant = first is not None and not self.dynamic(first)
        if name in ("eval", "exec", "builtins.eval", "builtins.exec", "compile") and constant:
            self.constant_lines.add(node.lineno)
        if module in _PICKLERS and function in ("loads", "load", "Unpickler", "open"):
            if first is not None and not self.dynamic(first):
                self.constant_lines.add(node.lineno)
            elif module not in ("pickle", "marshal", "dill", "shelve") or _aliased(node.func, module):
                self._add(
                    node,
                    "py:deserialise",
                    f"Deserialising with {module}.{function}",
                    "warning",
                    f"{module}.{function} builds objects that run code chosen by whoever wrote the data; only load "
                    "data you produced, or use JSON.",
                )
        if module in _PICKLERS and function == "dumps" and first is not None:
            made = first.func if isinstance(first, ast.Call) else None
            if isinstance(made, ast.Name) and made.id in reduce_classes:
                self._add(
                    node,
                    "py:pickle-payload",
                    "Pickle payload that runs a command",
                    "warning",
                    f"`{made.id}.__reduce__` returns a command, so unpickling this data runs it: this builds a "
                    "code-execution payload. Do not produce or load such data.",
                )
        if name.startswith("yaml.") and function in ("unsafe_load", "unsafe_load_all"):
            self._add(node, "py:yaml-unsafe", f"yaml.{function}", "warning", _YAML)
        elif name.startswith("yaml.") and function in ("load", "load_all"):
            loader = next((k.value for k in node.keywords if k.arg == "Loader"), None)
            loader = loader if loader is not None else (node.args[1] if len(node.args) > 1 else None)
            kind = self.qualname(loader).rsplit(".", 1)[-1] if loader is not None else ""
            if kind in _SAFE_LOADERS:
                self.safe_yaml_lines.add(node.lineno)
            elif kind in _UNSAFE_LOADERS:
                self._add(node, "py:yaml-unsafe", f"yaml.{function} with Loader={kind}", "warning", _YAML)
        # a fragment may call system()/popen() imported elsewhere: a bare call to one not defined here
        bare = isinstance(node.func, ast.Name) and name in ("system", "popen") and name not in self.defined
        if (name in _COMMANDS or bare) and first is not None and self.dynamic(first) and not _plain(node.func):
            self._add(
                node,
                "py:command",
                f"Shell command built from values ({name})",
                "warning",
                "The command string is built from values and run by a shell: a value holding `;` or `$(...)` "
                "runs commands of its own. Use subprocess.run([...], check=True) with a list of arguments.",
            )
        if attr in _SQL_SINKS and isinstance(first, ast.Name):
            built = self._built(first.id, node)
            if built is not None:
                text = self._sql_text(built.value)
                if text is not None and self._spliced(text):
                    finding = self._sql_finding(node, text)
                    self.findings.append(
                        Finding(
                            finding.rule,
                            f"{finding.title}, run by {attr}()",
                            finding.severity,
                            f"`{first.id}` (built at line {built.lineno}) is run here. {finding.explanation}",
                            finding.start_line,
                            finding.end_line,
                            fingerprint=finding.fingerprint,
                        )
                    )

    def _assignment(self, node: ast.Assign | ast.AnnAssign) -> None:
        value = self.qualname(node.value)  # type: ignore[arg-type]
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        target = " ".join(self.qualname(t) or (t.attr if isinstance(t, ast.Attribute) else "") for t in targets)
        if value.endswith("_create_unverified_context") or (
            target.endswith(("verify_mode", "check_hostname"))
            and (value.endswith("CERT_NONE") or (isinstance(node.value, ast.Constant) and node.value.value is False))
        ):
            self._add(
                node,
                "py:tls-off",
                "TLS verification disabled",
                "warning",
                "This turns off certificate checks for the connections that use it, so anyone on the network "
                "path can impersonate the server. Keep verification on; point it at the right CA bundle.",
            )

    def _built(self, name: str, call: ast.Call) -> ast.Assign | None:
        """The nearest assignment of ``name`` above ``call`` in the same function, within the window."""
        scope = self._scope(call)
        best = None
        for node in ast.walk(scope):
            if (
                isinstance(node, ast.Assign)
                and node.lineno < call.lineno
                and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
                and self._scope(node) is scope
            ):
                best = node if best is None or node.lineno > best.lineno else best
        if best is None or call.lineno - best.lineno <= _TRACE:
            return None  # near enough: the finding on the assignment is beside it
        return best

    def _scope(self, node: ast.AST) -> ast.AST:
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return node
        return self.tree

    def _command_reducers(self) -> set[str]:
        """Classes whose ``__reduce__`` returns a command or code to run when unpickled."""
        out = set()
        for cls in self.nodes:
            if not isinstance(cls, ast.ClassDef):
                continue
            for item in cls.body:
                if isinstance(item, ast.FunctionDef) and item.name in ("__reduce__", "__reduce_ex__"):
                    names = {self.qualname(n) for n in ast.walk(item) if isinstance(n, (ast.Name, ast.Attribute))}
                    if any(n.startswith(_RUNS_CODE) for n in names):
                        out.add(cls.name)
        return out

    # ------------------------------------------------------------------ findings

    def _add(self, node: ast.AST, rule: str, title: str, severity: Severity, explanation: str) -> None:
        self.findings.append(self._finding(node, rule, title, severity, explanation))

    def _finding(self, node: ast.AST, rule: str, title: str, severity: Severity, explanation: str) -> Finding:
        statement = node
        while statement in self.parents and not isinstance(statement, ast.stmt):
            statement = self.parents[statement]
        start = getattr(statement, "lineno", 1)
        end = getattr(statement, "end_lineno", None) or start
        if isinstance(statement, (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.FunctionDef, ast.ClassDef)):
            start = getattr(node, "lineno", start)  # a node in a block's header: its own lines
            end = getattr(node, "end_lineno", None) or start
        snippet = " ".join(" ".join(self.lines[start - 1 : end]).split())
        return Finding(rule, title, severity, explanation + f" ({rule}).", start, end, fingerprint=f"{rule}:{snippet}")


_YAML = (
    "This loader builds arbitrary Python objects named in the document, so a YAML file can run code when "
    "loaded. Use yaml.safe_load() (or Loader=yaml.SafeLoader)."
)


def _added(node: ast.AST) -> list[ast.AST]:
    """The operands of a chain of ``+``, left to right."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [*_added(node.left), *_added(node.right)]
    return [node]


def _constant_sql(node: ast.AST) -> bool:
    """``"SELECT … WHERE age=" + "3"``: SQL put together from literals only."""
    if not isinstance(node, ast.BinOp) or not isinstance(node.op, (ast.Add, ast.Mod)):
        return False
    if not any(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in (node.left, node.right)):
        return False
    leaves = [n for n in ast.walk(node) if not isinstance(n, (ast.BinOp, ast.operator, ast.Tuple, ast.Load))]
    strings = [n.value for n in leaves if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return all(isinstance(n, ast.Constant) for n in leaves) and is_sql(" ".join(strings))


def _aliased(func: ast.expr, module: str) -> bool:
    """``adaasfa.loads`` where ``adaasfa`` is ``_pickle`` imported under another name: bandit misses it."""
    return not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == module)


def _plain(func: ast.expr) -> bool:
    """``os.system(...)`` spelled out: bandit already reports it."""
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "os"


@functools.lru_cache(maxsize=64)
def python_tree(code: str) -> ast.Module | None:
    """``code``'s syntax tree, or None when this interpreter cannot parse it.

    Parsed once per text: bandit, the AST rules and the taint engine's syntax check all read it.
    """
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError):
        return None


def analyse(tree: ast.Module, lines: list[str]) -> Analysis:
    """Run the rules over one parsed text."""
    return Analysis(tree, lines)


def blocks(code: str) -> Iterator[tuple[int, int]]:
    """Top-level blocks of ``code`` as (first, last) 1-based lines: a statement with its indented body."""
    lines = code.splitlines()
    starts = [
        number
        for number, line in enumerate(lines, 1)
        if line.strip() and not line[0].isspace() and not line.lstrip().startswith(("#", ")", "]", "}"))
    ]
    # a fragment indented throughout (an Edit of a function body that does not parse) has no blocks
    for start, after in zip(starts, [*starts[1:], len(lines) + 1][: len(starts)], strict=True):
        last = after - 1
        while last > start and not lines[last - 1].strip():
            last -= 1  # blank lines between blocks belong to neither
        yield start, last
