"""Python code as the guard's rules read it: what each expression is known to hold, written where
it is read.

The rules read code as text (``_readable``), and text cannot follow a value through Python's
statements. This reads the code's syntax tree and writes it back with the values it can know in
place: a path built in steps (``root = Path.home(); target = root / 'x'``), a module's constant
read in a function, an option's ``argparse`` or ``click`` default, ``os.environ.get(NAME,
default)``'s default, what one of the file's functions returns (or yields), an object of one of
its classes (a dataclass's or NamedTuple's fields from their defaults and the call, the attributes
a constructor sets such as ``self.paths``, a property's value, ``cls.x``), a mapping's entries
(``CONFIG["root"]``), ``functools.partial`` and lambdas given a name, a loop over a literal list
once per value, and a loop over a folder's entries as ``'folder/*'`` unless its body picks some
(``_python_loops``). A call of one of the file's
functions with known arguments is written out again below the code with them in place, so what
the function does with those values is in the text (``purge(args.root)``, ``self._rm(p)`` for each
``p`` of a literal list).

The code is read as it runs with no arguments. Nothing is run: the values are computed as
``_python_values`` says, and the writing out is bounded (16 values a loop, 24 copied calls, 8,000
nodes in all), so code built to multiply it is read no further than that. Code that is not Python,
or too large, is returned as ``None`` and left to the text readers."""

from __future__ import annotations

import ast
import copy
import functools
import posixpath
import re
import stat
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from watcher.guard._python_loops import MUTATORS, changed, counted, kind_test, picks
from watcher.guard._python_values import (
    CANONICAL,
    FUNCTIONS,
    MAX_ITEMS,
    RESULTS,
    UNKNOWN,
    Entries,
    Instance,
    Names,
    Partial,
    PathValue,
    Spread,
    Yielded,
    binary,
    command_output,
    dotted,
    holed,
    joined_str,
    literal,
    method,
    pure,
    scalar,
    spread,
    subscript,
    target_name,
    words,
)

__all__ = ["python_readable"]

_MAX_CODE = 64_000
_MAX_UNROLL = 16  # a loop over a literal list is written once per value up to this many
_MAX_COPIES = 24  # calls of the file's own functions written out again
_MAX_WRITTEN = 8_000  # the nodes the copies and the loops written out again may add, in all
_MAX_DEPTH = 3  # a copy's calls are copied too, to this depth


def python_readable(code: str) -> str | None:
    """``code`` written back with the values its expressions are known to hold, and the file's own
    functions written out again for each call with known arguments; None when it is not Python (or
    larger than the reader takes). Text this wrote is returned as it is."""
    if code in _WRITTEN:
        return code
    out = _read(code)
    if out is not None:
        _WRITTEN[out] = None
        while len(_WRITTEN) > 16:
            _WRITTEN.popitem(last=False)  # one call: safe beside another thread's judgement
    return out


_WRITTEN: OrderedDict[str, None] = OrderedDict()  # the texts written last, oldest first


@functools.lru_cache(maxsize=16)
def _read(code: str) -> str | None:
    if len(code) > _MAX_CODE or not re.search(r"^\s*(?:import|from|def|class)\s", code, re.M):
        return None
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # not Python, or nested too deep to parse: the text readers take it
    try:
        reader = _Reader(tree)
        out = reader.read()
        if reader.learned:  # an attribute set by a copied constructor: the methods read again with it
            out = _Reader(tree, reader.learned).read()
        return out
    except Exception:  # noqa: BLE001 - a fault of this reading leaves the code to the text readers, still judged
        return None


class _Reader:
    """One reading of a module: its functions, options and names, then its statements in order."""

    def __init__(self, tree: ast.Module, attributes: dict[str, Any] | None = None) -> None:
        self.tree = tree
        self.attributes = dict(attributes or {})  # self.x -> value, from every method
        self.learned: dict[str, Any] = {}
        self.aliases: dict[str, str] = {}
        self.imported: set[str] = set()  # the names imports bind: modules and what is taken from them
        # the file's functions by the name a call gives: a function's own, a class's (its __init__),
        # and, for calls of an object's attribute, its methods'
        self.functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        self.methods: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        self.copies: list[ast.stmt] = []
        self.copied: set[str] = set()
        self.results: dict[str, Any] = {}  # what a function returns, by its parameters' values
        self.returns: list[Any] | None = None  # the values the function being read returns
        self.depth = 0
        self.written = 0
        self.writing = False  # True once the module's names are known: calls written out again
        self.unrolling = False  # True once the module's names are known: loops over lists, once per value
        self.options: dict[str, Any] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.properties: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        in_class = {id(n) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for n in c.body}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                (self.methods if id(node) in in_class else self.functions).setdefault(node.name, []).append(node)
                if id(node) in in_class and any(dotted(d, {}).endswith("property") for d in node.decorator_list):
                    self.properties.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):  # run = lambda *a: …
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.functions.setdefault(t.id, []).append(_as_function(t.id, node.value))
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
                init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
                if init is not None:
                    self.functions.setdefault(node.name, []).append(init)
            elif isinstance(node, ast.Import):
                self.aliases.update({a.asname: a.name for a in node.names if a.asname})
                self.imported.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                self.aliases.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
                self.imported.update(a.asname or a.name for a in node.names)
        self.globals: dict[str, Any] = {}
        self._block(tree.body, self.globals, top=True)  # the module's names, as its functions see them
        self.options = self._options()
        for c in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for name, value in self._fields(c):
                self.attributes.setdefault("self." + name, value)

    def read(self) -> str:
        self.writing, self.unrolling, self.written, self.results = True, True, 0, {}  # every name known
        body = self._block(self.tree.body, {})
        return _unparse(ast.Module(body=body + self.copies, type_ignores=[]))

    # --- statements ------------------------------------------------------------------------------

    def _block(self, stmts: Iterable[ast.stmt], env: dict[str, Any], top: bool = False) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in stmts:
            if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
                continue  # a docstring: a note, not code
            if top and isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue  # the module's names alone: its functions are read with them
            out += self._statement(s, env)
        return out or [ast.Pass()]

    def _statement(self, s: ast.stmt, env: dict[str, Any]) -> list[ast.stmt]:
        s = copy.copy(s)
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            returns, self.returns = self.returns, None  # a function defined inside: its returns are its own
            s.body = self._block(s.body, self._called(s, env, {}))
            self.returns = returns
        elif isinstance(s, ast.ClassDef):
            s.body = self._block(s.body, dict(env))
        elif isinstance(s, ast.Assign):
            s.value, value = self._expr(s.value, env)
            for target in s.targets:
                self._bind(target, value, s.value, env)
        elif isinstance(s, ast.AnnAssign) and s.value is not None:
            s.value, value = self._expr(s.value, env)
            self._bind(s.target, value, s.value, env)
        elif isinstance(s, ast.AugAssign):
            s.value, value = self._expr(s.value, env)
            name = target_name(s.target)
            if name is not None:
                env[name] = binary(s.op, env.get(name, UNKNOWN), value)
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            return self._loop(s, env)
        elif isinstance(s, (ast.While, ast.If)):
            if isinstance(s, ast.While):
                counted(s.body, env)
            s.test = self._expr(s.test, env)[0]
            s.body, s.orelse = self._block(s.body, env), self._block(s.orelse, env) if s.orelse else []
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            s.items = [copy.copy(i) for i in s.items]
            for item in s.items:
                item.context_expr = self._expr(item.context_expr, env)[0]
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, UNKNOWN, None, env)
            s.body = self._block(s.body, env)
        elif isinstance(s, ast.Try):
            s.body = self._block(s.body, env)
            s.handlers = [copy.copy(h) for h in s.handlers]
            for h in s.handlers:
                h.body = self._block(h.body, env)
            s.orelse = self._block(s.orelse, env) if s.orelse else []
            s.finalbody = self._block(s.finalbody, env) if s.finalbody else []
        elif isinstance(s, (ast.Return, ast.Expr)) and s.value is not None:
            if isinstance(s, ast.Expr):
                changed(s.value, env)
            s.value, value = self._expr(s.value, env)
            if isinstance(s, ast.Return) and self.returns is not None:
                self.returns.append(value)
        return [s]

    def _bind(self, target: ast.expr, value: Any, node: ast.expr | None, env: dict[str, Any]) -> None:
        """The value a target is given (a name, ``self.x``, a tuple of them); unknown when it is."""
        if isinstance(target, (ast.Tuple, ast.List)):
            items = value if isinstance(value, (list, tuple)) and len(value) == len(target.elts) else None
            nodes = (
                node.elts if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) == len(target.elts) else None
            )
            for i, t in enumerate(target.elts):
                self._bind(t, items[i] if items is not None else UNKNOWN, nodes[i] if nodes else None, env)
            return
        name = target_name(target)
        if name is None:
            return
        env[name] = value
        if name.startswith("self.") and value is not UNKNOWN and name not in self.attributes:
            self.learned[name] = value

    def _loop(self, s: ast.For | ast.AsyncFor, env: dict[str, Any]) -> list[ast.stmt]:
        """A loop over a literal list, once per value; over a folder's entries, with them as
        ``folder/*`` (unless its body picks some)."""
        s = copy.copy(s)
        s.iter, over = self._expr(s.iter, env)
        if isinstance(over, Names):  # for name in files, files from os.walk(folder): the folder's entries
            over = Entries(over)
        counted(s.body, env)
        listed = isinstance(over, (list, tuple)) and 0 < len(over) <= _MAX_UNROLL
        if listed and self.unrolling and self._afford(s.body, len(over) - 1):
            out: list[ast.stmt] = []
            for value in over:
                self._bind(s.target, value, None, env)
                once = copy.copy(s)
                once.iter = ast.List(elts=[literal(value) or ast.Constant(...)], ctx=ast.Load())
                once.body, once.orelse = self._block(s.body, env), []
                out.append(once)
            return out
        if isinstance(over, Entries) and not picks(s.body):
            self._bind(s.target, over.value, None, env)
        else:
            self._bind(s.target, UNKNOWN, None, env)
        s.body = self._block(s.body, env)
        s.orelse = self._block(s.orelse, env) if s.orelse else []
        return [s]

    def _afford(self, body: list[ast.stmt], times: int) -> bool:
        """Whether ``body`` may be written out ``times`` more times within what the reading may add
        (loops in loops and copies in copies would multiply without end)."""
        size = sum(1 for s in body for _ in ast.walk(s)) * times
        if self.written + size > _MAX_WRITTEN:
            return False
        self.written += size
        return True

    def _called(
        self, f: ast.FunctionDef | ast.AsyncFunctionDef, env: dict[str, Any], given: dict[str, Any]
    ) -> dict[str, Any]:
        """The names a function's body sees: the module's, the object's attributes, and its parameters
        as given (or as their defaults, ``click``'s included)."""
        inside = {**self.globals, **self.attributes, **{k: v for k, v in env.items() if k.startswith("self.")}}
        params = [*f.args.posonlyargs, *f.args.args]
        defaults = dict(
            zip([p.arg for p in params[len(params) - len(f.args.defaults) :]], f.args.defaults, strict=False)
        )
        defaults.update(
            {p.arg: d for p, d in zip(f.args.kwonlyargs, f.args.kw_defaults, strict=False) if d is not None}
        )
        inside.update({k: v for k, v in given.items() if k.startswith("self.")})
        decorated = dict(self._decorated(d) for d in f.decorator_list)  # @click.option('--root', default='~')
        for p in [*params, *f.args.kwonlyargs, f.args.vararg, f.args.kwarg]:
            if p is None:
                continue
            if p.arg in given:
                inside[p.arg] = given[p.arg]
            elif p.arg in defaults:
                inside[p.arg] = self._expr(defaults[p.arg], self.globals)[1]
            else:
                inside[p.arg] = decorated.get(p.arg, UNKNOWN)
        return inside

    def _instance(self, c: ast.ClassDef, args: list[Any], values: dict[str, Any]) -> Any:
        """An object of one of the file's classes: its own values, and for a class without an
        ``__init__`` (a dataclass, a NamedTuple) the call's arguments in the order of its fields."""
        fields = dict(self._fields(c))
        if not any(isinstance(n, ast.FunctionDef) and n.name == "__init__" for n in c.body):
            order = [s.target.id for s in c.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
            given = {**dict(zip(order, args, strict=False)), **{k: v for k, v in values.get("keywords", []) if k}}
            fields.update(given)
        return Instance(c.name, {k: v for k, v in fields.items() if v is not UNKNOWN})

    def _fields(self, c: ast.ClassDef) -> Iterable[tuple[str, Any]]:
        """A class's own values, as its objects hold them unless given others: ``disk: str =
        "/dev/sda"``, ``field(default=...)`` (a dataclass's), ``ROOT = Path.home()``."""
        for s in c.body:
            target = s.targets[0] if isinstance(s, ast.Assign) and len(s.targets) == 1 else getattr(s, "target", None)
            value = getattr(s, "value", None)
            if not isinstance(target, ast.Name) or value is None or not isinstance(s, (ast.Assign, ast.AnnAssign)):
                continue
            if isinstance(value, ast.Call) and dotted(value.func, self.aliases).endswith("field"):
                value = next((k.value for k in value.keywords if k.arg == "default"), None)
                if value is None:
                    continue
            known = self._expr(value, self.globals)[1]
            if known is not UNKNOWN:
                yield target.id, known

    def _decorated(self, d: ast.expr) -> tuple[str, Any]:
        if not (isinstance(d, ast.Call) and dotted(d.func, self.aliases).endswith((".option", ".argument"))):
            return "", UNKNOWN
        default = next((k.value for k in d.keywords if k.arg == "default"), None)
        words = [a.value for a in d.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if default is None or not words:
            return "", UNKNOWN
        plain = [w for w in words if not w.startswith("-")]
        name = plain[0] if plain else max(words, key=len).lstrip("-")
        return name.replace("-", "_"), self._expr(default, self.globals)[1]

    def _options(self) -> dict[str, Any]:
        """An option's ``argparse`` default, by the name the parsed options give it (``args.root``)."""
        out: dict[str, Any] = {}
        for node in ast.walk(self.tree):
            if not (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
            ):
                continue
            words = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            keywords = {k.arg: k.value for k in node.keywords if k.arg}
            if not words or "default" not in keywords:
                continue
            dest = keywords.get("dest")
            name = dest.value if isinstance(dest, ast.Constant) else max(words, key=len).lstrip("-")
            value = self._expr(keywords["default"], self.globals)[1]
            if value is not UNKNOWN and isinstance(name, str):
                out[name.replace("-", "_")] = value
        return out

    # --- expressions -----------------------------------------------------------------------------

    def _expr(self, node: ast.expr, env: dict[str, Any]) -> tuple[ast.expr, Any]:
        """The expression written with what is known in place, and its value (or ``UNKNOWN``)."""
        if isinstance(node, ast.Constant):
            return node, node.value
        if isinstance(node, ast.Name):
            value = env.get(node.id, UNKNOWN) if isinstance(node.ctx, ast.Load) else UNKNOWN
            return literal(value) or node, value
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return self._comprehension(node, env)
        if isinstance(node, ast.Lambda):
            return node, UNKNOWN  # its parameters: known only when called
        node = copy.copy(node)
        values: dict[str, Any] = {}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            bound = env.get(node.func.id)
            if isinstance(bound, Partial):  # wipe = partial(shutil.rmtree, ...); wipe(root): shutil.rmtree(root, ...)
                node.func, node.args, node.keywords = (
                    bound.func,
                    [*bound.args, *node.args],
                    [*bound.keywords, *node.keywords],
                )
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in env:
            full = self.aliases.get(node.func.id, "")  # from shutil import rmtree as r; r(p): shutil.rmtree(p)
            if "." in full and full.rsplit(".", 1)[-1] != node.func.id:
                node.func = ast.parse(full, mode="eval").body
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id not in env
            and (module := self.aliases.get(node.func.value.id, "")) not in ("", node.func.value.id)
        ):  # import subprocess as s; s.call([...]): subprocess.call, as the rules read it
            node.func = ast.Attribute(value=ast.parse(module, mode="eval").body, attr=node.func.attr, ctx=ast.Load())
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):  # the value it is called on
            node.func = copy.copy(node.func)
            folded, values["receiver"] = self._expr(node.func.value, env)
            if node.func.attr not in MUTATORS:  # cmd.insert(0, 'sudo'): the list changed keeps its name
                node.func.value = folded
        for field, old in ast.iter_fields(node):
            if field == "func" and "receiver" in values:
                continue
            if isinstance(old, ast.expr):
                new, values[field] = self._expr(old, env)
                setattr(node, field, new)
            elif isinstance(old, list) and old and isinstance(old[0], (ast.expr, ast.keyword)):
                items = []
                for item in old:
                    if isinstance(item, ast.keyword):
                        item = copy.copy(item)
                        item.value, v = self._expr(item.value, env)
                        values.setdefault("keywords", []).append((item.arg, v))
                    elif isinstance(item, ast.expr):
                        item, v = self._expr(item, env)
                        values.setdefault(field, []).append(v)
                    items.append(item)
                setattr(node, field, items)
        value = self._value(node, values, env)
        if isinstance(node, ast.Yield) and self.returns is not None:
            self.returns.append(Yielded(values.get("value", UNKNOWN)))
        if isinstance(node, ast.Call):
            self._copy_call(node, values)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _AS_OS:
            receiver = values.get("receiver")  # Path('/x').unlink(): os.unlink('/x'), as the rules read deletes
            if isinstance(receiver, str) and not isinstance(receiver, Names):
                node.func = ast.parse(_AS_OS[node.func.attr], mode="eval").body
                node.args = [ast.Constant(str(receiver)), *node.args]
        if isinstance(node, ast.Call) and not pure(node):
            return node, value
        if isinstance(node, ast.Call) and not isinstance(value, (str, list, tuple)):
            return node, value  # sys.exit(main()): a call kept as written unless it names a path or a command
        if (
            isinstance(node, ast.IfExp)
            and values.get("body") is UNKNOWN
            and any(isinstance(n, ast.Call) for n in ast.walk(node.body))
        ):
            return node, value  # p.unlink() if p.is_file() else None: the call stays, whichever branch runs
        if isinstance(node, (ast.List, ast.Tuple)) and holed(value):
            return node, value  # ["sudo", "cp", path, f"/etc/sudoers.d/{user}"]: its own words stay as written
        return literal(value) or node, value

    def _comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp, env: dict[str, Any]
    ) -> tuple[ast.expr, Any]:
        """``[shutil.rmtree(os.path.join(h, d)) for d in os.listdir(h)]``: a folder's entries taken
        without a condition are every entry, as in a loop."""
        node, inner = copy.copy(node), dict(env)
        if len(node.generators) == 1 and not isinstance(node, ast.DictComp):
            g = node.generators[0]  # [run(c.split()) for c in ('ufw disable', 'iptables -F')]: each, written out
            over = self._expr(g.iter, env)[1]
            if (
                isinstance(over, (list, tuple))
                and 0 < len(over) <= _MAX_UNROLL
                and self._afford([ast.Expr(node.elt)], len(over))
            ):
                elts, known = [], []
                for value in over:
                    self._bind(g.target, value, None, inner)
                    elt, v = self._expr(node.elt, inner)
                    elts.append(elt)
                    known.append(v)
                # with a condition, which it keeps is known only when it runs: each is written out
                whole = all(v is not UNKNOWN for v in known) and not isinstance(node, ast.SetComp) and not g.ifs
                return ast.List(elts=elts, ctx=ast.Load()), known if whole else UNKNOWN
        node.generators = [copy.copy(g) for g in node.generators]
        for g in node.generators:
            g.iter, over = self._expr(g.iter, inner)
            over = Entries(over) if isinstance(over, Names) else over
            chosen = isinstance(over, Entries) and all(
                kind_test(test) for test in g.ifs
            )  # `if p.is_file()`: every file
            self._bind(g.target, over.value if chosen else UNKNOWN, None, inner)
            g.ifs = [self._expr(test, inner)[0] for test in g.ifs]
        if isinstance(node, ast.DictComp):
            node.key, node.value = self._expr(node.key, inner)[0], self._expr(node.value, inner)[0]
        else:
            node.elt = self._expr(node.elt, inner)[0]
        return node, UNKNOWN

    def _value(self, node: ast.expr, values: dict[str, Any], env: dict[str, Any]) -> Any:
        if isinstance(node, ast.BinOp):
            return binary(node.op, values["left"], values["right"])
        if isinstance(node, ast.BoolOp):
            given = values.get("values", [])  # `dest or Path.cwd()`: the first that holds something, else the last
            first = next((v for v in given[:-1] if v is not UNKNOWN and v), None)
            return (first if first is not None else given[-1]) if isinstance(node.op, ast.Or) and given else UNKNOWN
        if isinstance(node, ast.IfExp):
            return values["body"] if values["body"] is not UNKNOWN else values["orelse"]
        if isinstance(node, ast.JoinedStr):
            return joined_str(node)
        if isinstance(node, ast.FormattedValue):
            v = values["value"]
            return (
                UNKNOWN
                if node.format_spec is not None or not scalar(v)
                else (repr(v) if node.conversion == 114 else str(v))
            )
        if isinstance(node, ast.Starred):  # *cfg["extra_args"]: its items, spread where it stands
            starred = values.get("value", UNKNOWN)
            return Spread(starred) if isinstance(starred, (list, tuple)) else UNKNOWN
        if isinstance(node, ast.Dict):  # CONFIG = {"root": "/etc", ...}: what its known keys hold
            keys, items = values.get("keys", []), values.get("values", [])
            whole = len(keys) <= MAX_ITEMS and all(isinstance(k, str) for k in keys)
            return dict(zip(keys, items, strict=False)) if whole else UNKNOWN
        if isinstance(node, (ast.List, ast.Tuple)):
            items = words(spread(values.get("elts", [])))
            return (list(items) if isinstance(node, ast.List) else tuple(items)) if items is not None else UNKNOWN
        if isinstance(node, ast.Attribute):
            return self._attribute(node, values.get("value", UNKNOWN), env)
        if isinstance(node, ast.Subscript):
            return subscript(
                dotted(node.value, self.aliases), values.get("value", UNKNOWN), values.get("slice", UNKNOWN)
            )
        if isinstance(node, ast.Call):
            return self._call(node, values)
        return UNKNOWN

    def _attribute(self, node: ast.Attribute, receiver: Any, env: dict[str, Any]) -> Any:
        name = dotted(node, self.aliases)
        if name.startswith("cls.") or (isinstance(node.value, ast.Name) and node.value.id in self.classes):
            name = "self." + node.attr  # cls.post_action, UpdatePolicy.post_action: the class's own value
            if name not in env and name in self.attributes:
                return self.attributes[name]
        if name in env:  # self.paths
            return env[name]
        if isinstance(receiver, Instance) and node.attr in receiver.fields:  # DEFAULT.device
            return receiver.fields[node.attr]
        found = self.properties.get(node.attr, [])
        if len(found) == 1 and (isinstance(receiver, Instance) or name.startswith("self.")):
            selves = (
                {"self." + k: v for k, v in receiver.fields.items()}
                if isinstance(receiver, Instance)
                else {k: v for k, v in env.items() if k.startswith("self.")}
            )
            return self._result_for(found[0], selves)  # a property: what its method returns
        if isinstance(receiver, str) and not isinstance(receiver, Names):
            if node.attr == "parent":
                return PathValue(posixpath.dirname(receiver.rstrip("/")) or ("/" if receiver.startswith("/") else "."))
            if node.attr == "name":
                return posixpath.basename(receiver.rstrip("/"))
            if node.attr == "parents":  # Path(__file__).parents[1]: the folder's folder
                up, folders = receiver.rstrip("/"), list[PathValue]()
                while len(folders) < 8 and up not in ("", "/", ".", "~"):
                    up = posixpath.dirname(up) or "."
                    folders.append(PathValue(up))
                return tuple(folders)
            if node.attr in ("path", "stdout"):  # a folder entry's path; a run's output
                return receiver
        if name.startswith("stat.S_") and isinstance(getattr(stat, name[5:], None), int):
            return getattr(stat, name[5:])
        if name == "os.sep":
            return "/"
        head = name.split(".", 1)[0]
        parsed = isinstance(node.value, ast.Call) or (
            isinstance(node.value, ast.Name) and head not in ("self", "os", "sys")
        )
        if parsed and node.attr in self.options:
            return self.options[node.attr]  # args.root, options().root: the option's default
        return UNKNOWN

    def _call(self, node: ast.Call, values: dict[str, Any]) -> Any:
        args: list[Any] = spread(values.get("args", []))
        keywords = dict(values.get("keywords", []))
        name = dotted(node.func, self.aliases)
        name = CANONICAL.get(name, name)
        if name in RESULTS:
            return command_output(args)
        if name == "functools.partial" and node.args and not isinstance(node.args[0], ast.Starred):
            return Partial(node.args[0], node.args[1:], node.keywords)
        if isinstance(node.func, ast.Name) and node.func.id in self.classes:
            return self._instance(self.classes[node.func.id], spread(values.get("args", [])), values)
        own = self._returned(node, values)
        if own is not UNKNOWN:
            return own
        if any(v is UNKNOWN for v in args):
            return UNKNOWN
        handler = FUNCTIONS.get(name)
        if handler is not None:
            return handler(args, keywords)
        receiver = values.get("receiver", UNKNOWN)
        return method(receiver, node.func.attr, args, keywords) if isinstance(node.func, ast.Attribute) else UNKNOWN

    def _target(self, node: ast.Call, values: dict[str, Any]) -> tuple[Any, dict[str, Any]] | None:
        """The file's own function a call runs (a class's call: its ``__init__``; an attribute's: the
        method of that name, when one class has it) and its parameters as the call gives them."""
        if isinstance(node.func, ast.Attribute):
            receiver = node.func.value  # self.m(), Job().m(), job.m(); not a module's requests.get()
            ours = not isinstance(receiver, ast.Name) or receiver.id not in self.imported
            found = self.methods.get(node.func.attr, []) if ours else []
        else:
            found = self.functions.get(node.func.id, []) if isinstance(node.func, ast.Name) else []
        given_args = values.get("args", [])
        if len(found) != 1 or any(
            isinstance(a, ast.Starred) and not isinstance(v, Spread)
            for a, v in zip(node.args, given_args, strict=False)
        ):
            return None  # a spread of unknown items: which parameter takes what is not known
        f, args = found[0], spread(given_args)
        params = [p.arg for p in [*f.args.posonlyargs, *f.args.args]]
        if params[:1] in (["self"], ["cls"]) and (isinstance(node.func, ast.Attribute) or f.name == "__init__"):
            params = params[1:]
        given = {p: v for p, v in zip(params, args, strict=False)}
        if f.args.vararg is not None and len(args) > len(params):
            rest = args[len(params) :]
            given[f.args.vararg.arg] = tuple(known) if (known := words(rest)) is not None else UNKNOWN
        given.update({k: v for k, v in values.get("keywords", []) if k})
        instance = values.get("receiver")
        if isinstance(instance, Instance):  # target.copy_image(): its fields are self's
            given.update({"self." + k: v for k, v in instance.fields.items()})
        return f, given

    def _copy_call(self, node: ast.Call, values: dict[str, Any]) -> None:
        """A call of one of the file's functions with a known argument, written out again below the
        code with its parameters bound."""
        if not self.writing or self.depth >= _MAX_DEPTH or len(self.copied) >= _MAX_COPIES:
            return
        target = self._target(node, values)
        if target is None or all(v is UNKNOWN for v in target[1].values()):
            return
        f, given = target
        key = f"{f.name}:{id(f)}{sorted((k, repr(v)) for k, v in given.items())}"
        if key in self.copied or not self._afford(f.body, 1):
            return
        self.copied.add(key)
        self.depth += 1
        try:
            body = self._block(f.body, self._called(f, {}, given))
        finally:
            self.depth -= 1
        written = copy.copy(f)
        written.args, written.body, written.decorator_list, written.returns = _NO_ARGS, body, [], None
        self.copies.append(written)

    def _returned(self, node: ast.Call, values: dict[str, Any]) -> Any:
        """What one of the file's functions returns for the call (``def targets(): return
        Path.home() / 'Downloads'``): its one known return value, read with its parameters bound."""
        target = self._target(node, values)
        return UNKNOWN if target is None else self._result_for(*target)

    def _result_for(self, f: ast.FunctionDef | ast.AsyncFunctionDef, given: dict[str, Any]) -> Any:
        if self.depth >= _MAX_DEPTH:
            return UNKNOWN
        key = f"{id(f)}{sorted((k, repr(v)) for k, v in given.items())}"
        if key not in self.results:
            self.results[key] = UNKNOWN  # a function returning its own call: unknown
            if not self._afford(f.body, 1):
                return UNKNOWN
            returns, self.returns = self.returns, []
            writing, self.writing = self.writing, False
            self.depth += 1
            try:
                self._block(f.body, self._called(f, {}, given))
            finally:
                self.depth -= 1
                self.writing, (returns, self.returns) = writing, (self.returns, returns)
            self.results[key] = _result_of(returns)
        return self.results[key]


def _as_function(name: str, lam: ast.Lambda) -> ast.FunctionDef:
    """A lambda given a name (``run = lambda *a: subprocess.run(a)``), as the function it is."""
    f = ast.FunctionDef(name=name, args=lam.args, body=[ast.Return(lam.body)], decorator_list=[], returns=None)
    setattr(f, "type_params", [])  # noqa: B010 - read by ast.unparse from Python 3.12 on; no field before
    return ast.copy_location(f, lam)


def _result_of(returns: list[Any]) -> Any:
    """What a function gives its caller: its one known return value; a generator, what it yields
    (one path: a listing, like a folder's entries; several known values: the list of them)."""
    yielded = [v.value for v in returns if isinstance(v, Yielded)]
    if yielded:
        known = {repr(v): v for v in yielded if v is not UNKNOWN}
        if len(known) == 1 and isinstance(value := next(iter(known.values())), str) and len(yielded) == 1:
            return Entries(value)  # `for p in root.rglob('*'): yield p`: a listing
        return list(known.values()) if len(known) == len(yielded) and 0 < len(yielded) <= 16 else UNKNOWN
    known = {repr(v): v for v in returns if v is not UNKNOWN}
    return next(iter(known.values())) if len(known) == 1 and len(known) and UNKNOWN not in returns else UNKNOWN


_Unparser: Any = getattr(ast, "_Unparser", None)  # ast.unparse's writer (where this Python has it)


if _Unparser is not None:

    class _Writer(_Unparser):  # type: ignore[misc]
        """``ast.unparse``, with a string of several lines written over its lines, as code writes it:
        a rule that reads a line reads one line of it, not the whole string."""

        def _write_constant(self, value: Any) -> None:
            plain = isinstance(value, str) and "\n" in value and "\\" not in value and "'''" not in value
            if plain and not value.endswith("'") and not self._avoid_backslashes:
                self.write("'''" + value + "'''")
            else:
                super()._write_constant(value)


def _unparse(tree: ast.Module) -> str:
    return _Writer().visit(tree) if _Unparser is not None else ast.unparse(tree)


_NO_ARGS = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
# a path object's methods that change the disk, as the os calls the rules read
_AS_OS = {"unlink": "os.unlink", "rmdir": "os.rmdir", "chmod": "os.chmod", "lchmod": "os.chmod"}
