"""Python code as the guard's rules read it: what each expression is known to hold, written where
it is read.

The rules read code as text (``_readable``), and text cannot follow a value through Python's
statements. This reads the code's syntax tree once and writes it back with the values it can know
in place: a path built in steps (``root = Path.home(); target = root / 'x'``), a module's constant
read in a function, an option's ``argparse`` or ``click`` default, ``os.environ.get(NAME,
default)``'s default, a loop over a literal list once per value, a loop over a folder's entries as
``'folder/*'`` (unless its body picks some), and an attribute an object is given
(``self.paths``). A call of one of the file's own functions with known arguments is written out
again below the code with them in place, so what the function does with those values is in the
text (``purge(args.root)``, ``self._rm(p)`` for each ``p`` of a literal list).

Nothing is run: only string, path and small-number operations are computed, within bounds (a
string of 4 KB, a list of 64 items, a number of 256 bits); a value read from a file, a command's
output or the network stays unknown and the code is left as written there. Code that is not
Python, or too large, is returned as ``None``."""

from __future__ import annotations

import ast
import copy
import functools
import posixpath
import re
import shlex
import stat
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["python_readable"]

_MAX_CODE = 64_000
_MAX_STR = 4096
_MAX_ITEMS = 64
_MAX_UNROLL = 16  # a loop over a literal list is written once per value up to this many
_MAX_COPIES = 24  # calls of the file's own functions written out again
_MAX_WRITTEN_VALUE = 512  # the longest value written in place of its name
_MAX_WRITTEN = 8_000  # the nodes the copies and the loops written out again may add, in all
_MAX_DEPTH = 3  # a copy's calls are copied too, to this depth
_UNKNOWN: Any = object()


class _Path(str):
    """A path object's value (``Path(...)``): a string the rules read as the path."""


class _Names(str):
    """The names a folder listing gives (``os.listdir(folder)``): unknown alone, ``folder/*`` once
    joined to the folder."""


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
            del _WRITTEN[next(iter(_WRITTEN))]
    return out


_WRITTEN: dict[str, None] = {}  # the texts written last, oldest first


@functools.lru_cache(maxsize=16)
def _read(code: str) -> str | None:
    if len(code) > _MAX_CODE or not re.search(r"^\s*(?:import|from|def|class)\s", code, re.M):
        return None
    try:
        tree = ast.parse(code)
        reader = _Reader(tree)
        out = reader.read()
        if reader.learned:  # an attribute set by a copied constructor: the methods read again with it
            out = _Reader(tree, reader.learned).read()
        return out
    except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError, AttributeError):
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
        self.writing = False  # True once the module's names are known: loops and calls written out
        self.options: dict[str, Any] = {}
        in_class = {id(n) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for n in c.body}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                (self.methods if id(node) in in_class else self.functions).setdefault(node.name, []).append(node)
            elif isinstance(node, ast.ClassDef):
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
        self.writing, self.written, self.results = True, 0, {}  # read again with every name known
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
            name = _target_name(s.target)
            if name is not None:
                env[name] = _binary(s.op, env.get(name, _UNKNOWN), value)
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            return self._loop(s, env)
        elif isinstance(s, (ast.While, ast.If)):
            if isinstance(s, ast.While):
                _counted(s.body, env)
            s.test = self._expr(s.test, env)[0]
            s.body, s.orelse = self._block(s.body, env), self._block(s.orelse, env) if s.orelse else []
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            s.items = [copy.copy(i) for i in s.items]
            for item in s.items:
                item.context_expr = self._expr(item.context_expr, env)[0]
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, _UNKNOWN, None, env)
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
                _changed(s.value, env)
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
                self._bind(t, items[i] if items is not None else _UNKNOWN, nodes[i] if nodes else None, env)
            return
        name = _target_name(target)
        if name is None:
            return
        env[name] = value
        if name.startswith("self.") and value is not _UNKNOWN and name not in self.attributes:
            self.learned[name] = value

    def _loop(self, s: ast.For | ast.AsyncFor, env: dict[str, Any]) -> list[ast.stmt]:
        """A loop over a literal list, once per value; over a folder's entries, with them as
        ``folder/*`` (unless its body picks some)."""
        s = copy.copy(s)
        s.iter, over = self._expr(s.iter, env)
        _counted(s.body, env)
        listed = isinstance(over, (list, tuple)) and 0 < len(over) <= _MAX_UNROLL
        if listed and self.writing and self._afford(s.body, len(over) - 1):
            out: list[ast.stmt] = []
            for value in over:
                self._bind(s.target, value, None, env)
                once = copy.copy(s)
                once.iter = ast.List(elts=[_literal(value) or ast.Constant(...)], ctx=ast.Load())
                once.body, once.orelse = self._block(s.body, env), []
                out.append(once)
            return out
        if isinstance(over, _Entries) and not _picks(s.body):
            self._bind(s.target, over.value, None, env)
        else:
            self._bind(s.target, _UNKNOWN, None, env)
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
        decorated = dict(self._decorated(d) for d in f.decorator_list)  # @click.option('--root', default='~')
        for p in [*params, *f.args.kwonlyargs, f.args.vararg, f.args.kwarg]:
            if p is None:
                continue
            if p.arg in given:
                inside[p.arg] = given[p.arg]
            elif p.arg in defaults:
                inside[p.arg] = self._expr(defaults[p.arg], self.globals)[1]
            else:
                inside[p.arg] = decorated.get(p.arg, _UNKNOWN)
        return inside

    def _fields(self, c: ast.ClassDef) -> Iterable[tuple[str, Any]]:
        """A class's own values, as its objects hold them unless given others: ``disk: str =
        "/dev/sda"``, ``field(default=...)`` (a dataclass's), ``ROOT = Path.home()``."""
        for s in c.body:
            target = s.targets[0] if isinstance(s, ast.Assign) and len(s.targets) == 1 else getattr(s, "target", None)
            value = getattr(s, "value", None)
            if not isinstance(target, ast.Name) or value is None or not isinstance(s, (ast.Assign, ast.AnnAssign)):
                continue
            if isinstance(value, ast.Call) and _dotted(value.func, self.aliases).endswith("field"):
                value = next((k.value for k in value.keywords if k.arg == "default"), None)
                if value is None:
                    continue
            known = self._expr(value, self.globals)[1]
            if known is not _UNKNOWN:
                yield target.id, known

    def _decorated(self, d: ast.expr) -> tuple[str, Any]:
        if not (isinstance(d, ast.Call) and _dotted(d.func, self.aliases).endswith((".option", ".argument"))):
            return "", _UNKNOWN
        default = next((k.value for k in d.keywords if k.arg == "default"), None)
        words = [a.value for a in d.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if default is None or not words:
            return "", _UNKNOWN
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
            if value is not _UNKNOWN and isinstance(name, str):
                out[name.replace("-", "_")] = value
        return out

    # --- expressions -----------------------------------------------------------------------------

    def _expr(self, node: ast.expr, env: dict[str, Any]) -> tuple[ast.expr, Any]:
        """The expression written with what is known in place, and its value (or ``_UNKNOWN``)."""
        if isinstance(node, ast.Constant):
            return node, node.value
        if isinstance(node, ast.Name):
            value = env.get(node.id, _UNKNOWN) if isinstance(node.ctx, ast.Load) else _UNKNOWN
            return _literal(value) or node, value
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return self._comprehension(node, env)
        if isinstance(node, ast.Lambda):
            return node, _UNKNOWN  # its parameters: known only when called
        node = copy.copy(node)
        values: dict[str, Any] = {}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            bound = env.get(node.func.id)
            if isinstance(bound, _Partial):  # wipe = partial(shutil.rmtree, ...); wipe(root): shutil.rmtree(root, ...)
                node.func, node.args, node.keywords = (
                    bound.func,
                    [*bound.args, *node.args],
                    [*bound.keywords, *node.keywords],
                )
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):  # the value it is called on
            node.func = copy.copy(node.func)
            folded, values["receiver"] = self._expr(node.func.value, env)
            if node.func.attr not in _MUTATORS:  # cmd.insert(0, 'sudo'): the list changed keeps its name
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
            self.returns.append(_Yielded(values.get("value", _UNKNOWN)))
        if isinstance(node, ast.Call):
            self._copy_call(node, values)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _AS_OS:
            receiver = values.get("receiver")  # Path('/x').unlink(): os.unlink('/x'), as the rules read deletes
            if isinstance(receiver, str) and not isinstance(receiver, _Names):
                node.func = ast.parse(_AS_OS[node.func.attr], mode="eval").body
                node.args = [ast.Constant(str(receiver)), *node.args]
        return (_literal(value) or node) if not isinstance(node, ast.Call) or _pure(node) else node, value

    def _comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp, env: dict[str, Any]
    ) -> tuple[ast.expr, Any]:
        """``[shutil.rmtree(os.path.join(h, d)) for d in os.listdir(h)]``: a folder's entries taken
        without a condition are every entry, as in a loop."""
        node, inner = copy.copy(node), dict(env)
        if len(node.generators) == 1 and not node.generators[0].ifs and not isinstance(node, ast.DictComp):
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
                whole = all(v is not _UNKNOWN for v in known) and not isinstance(node, ast.SetComp)
                return ast.List(elts=elts, ctx=ast.Load()), known if whole else _UNKNOWN
        node.generators = [copy.copy(g) for g in node.generators]
        for g in node.generators:
            g.iter, over = self._expr(g.iter, inner)
            chosen = isinstance(over, _Entries) and not g.ifs
            self._bind(g.target, over.value if chosen else _UNKNOWN, None, inner)
            g.ifs = [self._expr(test, inner)[0] for test in g.ifs]
        if isinstance(node, ast.DictComp):
            node.key, node.value = self._expr(node.key, inner)[0], self._expr(node.value, inner)[0]
        else:
            node.elt = self._expr(node.elt, inner)[0]
        return node, _UNKNOWN

    def _value(self, node: ast.expr, values: dict[str, Any], env: dict[str, Any]) -> Any:
        if isinstance(node, ast.BinOp):
            return _binary(node.op, values["left"], values["right"])
        if isinstance(node, ast.BoolOp):
            given = values.get("values", [])  # `dest or Path.cwd()`: the first that holds something, else the last
            first = next((v for v in given[:-1] if v is not _UNKNOWN and v), None)
            return (first if first is not None else given[-1]) if isinstance(node.op, ast.Or) and given else _UNKNOWN
        if isinstance(node, ast.IfExp):
            return values["body"] if values["body"] is not _UNKNOWN else values["orelse"]
        if isinstance(node, ast.JoinedStr):
            return _joined_str(node)
        if isinstance(node, ast.FormattedValue):
            v = values["value"]
            return (
                _UNKNOWN
                if node.format_spec is not None or not _scalar(v)
                else (repr(v) if node.conversion == 114 else str(v))
            )
        if isinstance(node, ast.Starred):  # *cfg["extra_args"]: its items, spread where it stands
            spread = values.get("value", _UNKNOWN)
            return _Spread(spread) if isinstance(spread, (list, tuple)) else _UNKNOWN
        if isinstance(node, ast.Dict):  # CONFIG = {"root": "/etc", ...}: what its known keys hold
            keys, items = values.get("keys", []), values.get("values", [])
            whole = len(keys) <= _MAX_ITEMS and all(isinstance(k, str) for k in keys)
            return dict(zip(keys, items, strict=False)) if whole else _UNKNOWN
        if isinstance(node, (ast.List, ast.Tuple)):
            items = _spread(values.get("elts", []))
            whole = len(items) <= _MAX_ITEMS and all(v is not _UNKNOWN and not isinstance(v, _Entries) for v in items)
            return (list(items) if isinstance(node, ast.List) else tuple(items)) if whole else _UNKNOWN
        if isinstance(node, ast.Attribute):
            return self._attribute(node, values.get("value", _UNKNOWN), env)
        if isinstance(node, ast.Subscript):
            return _subscript(
                _dotted(node.value, self.aliases), values.get("value", _UNKNOWN), values.get("slice", _UNKNOWN)
            )
        if isinstance(node, ast.Call):
            return self._call(node, values)
        return _UNKNOWN

    def _attribute(self, node: ast.Attribute, receiver: Any, env: dict[str, Any]) -> Any:
        dotted = _dotted(node, self.aliases)
        if dotted in env:  # self.paths
            return env[dotted]
        if isinstance(receiver, str) and not isinstance(receiver, _Names):
            if node.attr == "parent":
                return _Path(posixpath.dirname(receiver.rstrip("/")) or ("/" if receiver.startswith("/") else "."))
            if node.attr == "name":
                return posixpath.basename(receiver.rstrip("/"))
            if node.attr == "parents":  # Path(__file__).parents[1]: the folder's folder
                up, folders = receiver.rstrip("/"), list[_Path]()
                while len(folders) < 8 and up not in ("", "/", ".", "~"):
                    up = posixpath.dirname(up) or "."
                    folders.append(_Path(up))
                return tuple(folders)
            if node.attr in ("path", "stdout"):  # a folder entry's path; a run's output
                return receiver
        if dotted.startswith("stat.S_") and isinstance(getattr(stat, dotted[5:], None), int):
            return getattr(stat, dotted[5:])
        if dotted == "os.sep":
            return "/"
        head = dotted.split(".", 1)[0]
        parsed = isinstance(node.value, ast.Call) or (
            isinstance(node.value, ast.Name) and head not in ("self", "os", "sys")
        )
        if parsed and node.attr in self.options:
            return self.options[node.attr]  # args.root, options().root: the option's default
        return _UNKNOWN

    def _call(self, node: ast.Call, values: dict[str, Any]) -> Any:
        args: list[Any] = _spread(values.get("args", []))
        keywords = dict(values.get("keywords", []))
        name = _dotted(node.func, self.aliases)
        name = _CANONICAL.get(name, name)
        if name in _RESULTS:
            return _result(args)
        if name == "functools.partial" and node.args and not isinstance(node.args[0], ast.Starred):
            return _Partial(node.args[0], node.args[1:], node.keywords)
        own = self._returned(node, values)
        if own is not _UNKNOWN:
            return own
        if any(v is _UNKNOWN for v in args):
            return _UNKNOWN
        handler = _FUNCTIONS.get(name)
        if handler is not None:
            return handler(args, keywords)
        receiver = values.get("receiver", _UNKNOWN)
        return _method(receiver, node.func.attr, args, keywords) if isinstance(node.func, ast.Attribute) else _UNKNOWN

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
            isinstance(a, ast.Starred) and not isinstance(v, _Spread)
            for a, v in zip(node.args, given_args, strict=False)
        ):
            return None  # a spread of unknown items: which parameter takes what is not known
        f, args = found[0], _spread(given_args)
        params = [p.arg for p in [*f.args.posonlyargs, *f.args.args]]
        if params[:1] in (["self"], ["cls"]) and (isinstance(node.func, ast.Attribute) or f.name == "__init__"):
            params = params[1:]
        given = {p: v for p, v in zip(params, args, strict=False)}
        if f.args.vararg is not None and len(args) > len(params):
            rest = args[len(params) :]
            given[f.args.vararg.arg] = tuple(rest) if all(v is not _UNKNOWN for v in rest) else _UNKNOWN
        given.update({k: v for k, v in values.get("keywords", []) if k})
        return f, given

    def _copy_call(self, node: ast.Call, values: dict[str, Any]) -> None:
        """A call of one of the file's functions with a known argument, written out again below the
        code with its parameters bound."""
        if not self.writing or self.depth >= _MAX_DEPTH or len(self.copied) >= _MAX_COPIES:
            return
        target = self._target(node, values)
        if target is None or all(v is _UNKNOWN for v in target[1].values()):
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
        if target is None or self.depth >= _MAX_DEPTH:
            return _UNKNOWN
        f, given = target
        key = f"{id(f)}{sorted((k, repr(v)) for k, v in given.items())}"
        if key not in self.results:
            self.results[key] = _UNKNOWN  # a function returning its own call: unknown
            if not self._afford(f.body, 1):
                return _UNKNOWN
            returns, self.returns = self.returns, []
            writing, self.writing = self.writing, False
            self.depth += 1
            try:
                self._block(f.body, self._called(f, {}, given))
            finally:
                self.depth -= 1
                self.writing, (returns, self.returns) = writing, (self.returns, returns)
            yielded = [v.value for v in returns if isinstance(v, _Yielded)]
            returns = [v for v in returns if not isinstance(v, _Yielded)] if not yielded else yielded
            known = {repr(v): v for v in returns if v is not _UNKNOWN}
            if len(known) == 1 and len(returns) == len([v for v in returns if v is not _UNKNOWN]):
                value = next(iter(known.values()))  # a generator: the entries it yields, as a listing
                self.results[key] = _Entries(value) if yielded and isinstance(value, str) else value
        return self.results[key]


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


class _Partial:
    """``functools.partial(f, *args, **keywords)``: a call of ``f`` with these first."""

    def __init__(self, func: ast.expr, args: list[ast.expr], keywords: list[ast.keyword]) -> None:
        self.func, self.args, self.keywords = func, args, keywords


class _Spread:
    """A starred list's items (``*args``), spread where it stands."""

    def __init__(self, items: list[Any] | tuple[Any, ...]) -> None:
        self.items = items


def _spread(values: list[Any]) -> list[Any]:
    """``values`` with each known spread's items in its place; an unknown spread stays unknown."""
    out: list[Any] = []
    for v in values:
        out += list(v.items) if isinstance(v, _Spread) else [v]
    return out


class _Yielded:
    """A value a generator yields (``yield candidate``), among what the function being read returns."""

    def __init__(self, value: Any) -> None:
        self.value: Any = value


class _Entries:
    """A folder's entries, as a listing (``os.scandir``, ``Path.iterdir``, ``glob``) gives them."""

    def __init__(self, value: Any) -> None:
        self.value = value


_NO_ARGS = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
# a path object's methods that change the disk, as the os calls the rules read
_AS_OS = {"unlink": "os.unlink", "rmdir": "os.rmdir", "chmod": "os.chmod", "lchmod": "os.chmod"}
_CANONICAL = {
    "Path": "pathlib.Path",
    "PurePath": "pathlib.Path",
    "PosixPath": "pathlib.Path",
    "pathlib.PurePath": "pathlib.Path",
    "pathlib.PosixPath": "pathlib.Path",
    "pathlib.PurePosixPath": "pathlib.Path",
    "Path.home": "pathlib.Path.home",
    "Path.cwd": "pathlib.Path.cwd",
    "posixpath.join": "os.path.join",
    "posixpath.expanduser": "os.path.expanduser",
    "posixpath.dirname": "os.path.dirname",
}


def _join(parts: list[Any], path: bool = False) -> Any:
    if not parts or not all(isinstance(p, str) and not isinstance(p, _Names) for p in parts[:1]):
        return _UNKNOWN
    out = str(parts[0])
    for p in parts[1:]:
        if not isinstance(p, str):
            return _UNKNOWN
        if isinstance(p, _Names):
            p = "*"
        out = p if p.startswith("/") else (out.rstrip("/") + "/" + p if out else p)
    return _Path(out) if path else out


def _home(args: list[Any], keywords: dict[str, Any]) -> Any:
    return _Path("~")


def _environ(args: list[Any], keywords: dict[str, Any]) -> Any:
    """``os.environ.get(NAME, default)``: the home for ``HOME``, else the default (the variable unset)."""
    if args[:1] == ["HOME"]:
        return "~"
    if args[:1] == ["TMPDIR"]:
        return "/tmp"
    return args[1] if len(args) > 1 else keywords.get("default", _UNKNOWN)


def _listing(names: bool) -> Any:
    def listing(args: list[Any], keywords: dict[str, Any]) -> Any:
        folder = args[0] if args else "."
        if not isinstance(folder, str):
            return _UNKNOWN
        return _Entries(_Names(folder) if names else _Path(folder.rstrip("/") + "/*" if "*" not in folder else folder))

    return listing


def _walk(args: list[Any], keywords: dict[str, Any]) -> Any:
    folder = args[0] if args else _UNKNOWN
    return _Entries((folder, _Names(folder), _Names(folder))) if isinstance(folder, str) else _UNKNOWN


def _same(args: list[Any], keywords: dict[str, Any]) -> Any:
    return (
        args[0] if len(args) == 1 and isinstance(args[0], (str, int)) and not isinstance(args[0], _Names) else _UNKNOWN
    )


def _text(args: list[Any], keywords: dict[str, Any]) -> Any:
    v = _same(args, keywords)
    return str(v) if v is not _UNKNOWN else _UNKNOWN


_FUNCTIONS: dict[str, Any] = {
    "pathlib.Path": lambda a, k: _join(a, path=True) if a else _Path("."),
    "pathlib.Path.home": _home,
    "pathlib.Path.cwd": lambda a, k: _Path("."),
    "os.getcwd": lambda a, k: ".",
    "os.path.join": lambda a, k: _join(a),
    "os.path.expanduser": _same,
    "os.path.abspath": _same,
    "os.path.realpath": _same,
    "os.path.normpath": _same,
    "os.path.expandvars": _same,
    "os.fspath": _same,
    "str": _text,
    "os.path.dirname": lambda a, k: posixpath.dirname(a[0]) if _same(a, k) is not _UNKNOWN else _UNKNOWN,
    "os.path.basename": lambda a, k: posixpath.basename(a[0]) if _same(a, k) is not _UNKNOWN else _UNKNOWN,
    "os.getenv": _environ,
    "os.environ.get": _environ,
    "tempfile.gettempdir": lambda a, k: "/tmp",
    "list": lambda a, k: list(a[0]) if len(a) == 1 and isinstance(a[0], (list, tuple)) else _UNKNOWN,
    "tuple": lambda a, k: tuple(a[0]) if len(a) == 1 and isinstance(a[0], (list, tuple)) else _UNKNOWN,
    "sorted": lambda a, k: a[0] if len(a) == 1 and isinstance(a[0], (list, tuple, _Entries)) else _UNKNOWN,
    "shlex.split": lambda a, k: shlex.split(a[0]) if len(a) == 1 and isinstance(a[0], str) else _UNKNOWN,
    "shlex.quote": lambda a, k: a[0] if len(a) == 1 and isinstance(a[0], str) else _UNKNOWN,
    "shlex.join": lambda a, k: (
        " ".join(map(str, a[0])) if len(a) == 1 and isinstance(a[0], (list, tuple)) else _UNKNOWN
    ),
    "os.listdir": _listing(names=True),
    "os.scandir": _listing(names=False),
    "glob.glob": _listing(names=False),
    "glob.iglob": _listing(names=False),
    "os.walk": _walk,
}
# what a command prints that the guard knows without running it: the repository's own folders
_RESULTS = frozenset({"subprocess.run", "subprocess.check_output", "subprocess.getoutput"})
_KNOWN_OUTPUT: dict[tuple[str, ...], str] = {
    ("git", "rev-parse", "--git-dir"): ".git",
    ("git", "rev-parse", "--absolute-git-dir"): ".git",
    ("git", "rev-parse", "--git-common-dir"): ".git",
    ("git", "rev-parse", "--show-toplevel"): ".",
}


def _result(args: list[Any]) -> Any:
    command = args[0] if args else _UNKNOWN
    words = (
        tuple(shlex.split(command))
        if isinstance(command, str)
        else tuple(command)
        if isinstance(command, (list, tuple))
        else ()
    )
    return _KNOWN_OUTPUT.get(tuple(map(str, words)), _UNKNOWN)


def _method(receiver: Any, method: str, args: list[Any], keywords: dict[str, Any]) -> Any:
    """A known value's method: a path's (``joinpath``, ``resolve``, ``glob``), a string's (``format``,
    ``join``, ``strip``), a list's copy."""
    if isinstance(receiver, _Names):
        return _UNKNOWN
    if isinstance(receiver, str):
        if method in (
            "resolve",
            "absolute",
            "expanduser",
            "as_posix",
            "strip",
            "rstrip",
            "lstrip",
            "decode",
            "lower",
            "upper",
        ):
            if args and method.endswith("strip") and isinstance(args[0], str):
                return getattr(str(receiver), method)(args[0])
            return receiver if not args else _UNKNOWN
        if method == "joinpath":
            return _join([receiver, *args], path=True)
        if method in ("iterdir", "glob", "rglob"):
            pattern = args[0] if args and isinstance(args[0], str) else "*"
            return _Entries(_Path(receiver.rstrip("/") + "/" + pattern))
        if (
            method == "join"
            and len(args) == 1
            and isinstance(args[0], (list, tuple))
            and all(isinstance(p, str) for p in args[0])
        ):
            joined = receiver.join(args[0])
            return joined if len(joined) <= _MAX_STR else _UNKNOWN
        if method == "format" and not re.search(r"\{[^}]*[.\[:!][^}]*\}", receiver):  # plain fields only
            try:
                text = receiver.format(*args, **keywords)
            except (IndexError, KeyError, ValueError):
                return _UNKNOWN
            return text if len(text) <= _MAX_STR else _UNKNOWN
        if method == "replace" and len(args) == 2 and all(isinstance(a, str) for a in args):
            text = receiver.replace(args[0], args[1])
            return text if len(text) <= _MAX_STR else _UNKNOWN
        if method == "split" and not args:
            return receiver.split()
    if isinstance(receiver, (list, tuple)) and method == "copy":
        return list(receiver)
    if isinstance(receiver, dict):  # CONFIG.get("root", "/"), CONFIG.items()
        if method == "get" and args and isinstance(args[0], str):
            return receiver.get(args[0], args[1] if len(args) > 1 else _UNKNOWN)
        if method in ("items", "values", "keys"):
            return list(getattr(receiver, method)())
    return _UNKNOWN


def _binary(op: ast.operator, left: Any, right: Any) -> Any:
    """``left op right`` for strings, paths and small numbers; a sequence is never repeated (that is
    what a memory bomb does)."""
    if left is _UNKNOWN or right is _UNKNOWN or isinstance(left, _Names):
        return _UNKNOWN
    if isinstance(right, _Names) and isinstance(op, (ast.Add, ast.Div)):
        right = "*" if isinstance(op, ast.Div) or str(left).endswith("/") else "/*"  # folder + '/' + name
    if isinstance(op, ast.Div) and isinstance(left, _Path) and isinstance(right, str):
        return _join([left, right], path=True)
    if isinstance(left, str) and isinstance(right, str) and isinstance(op, ast.Add):
        text = left + right
        return (_Path(text) if isinstance(left, _Path) else text) if len(text) <= _MAX_STR else _UNKNOWN
    if isinstance(left, str) and isinstance(op, ast.Mod) and not re.search(r"%[-+ #0]*(?:\d{3,}|\*)", left):
        try:
            text = left % right
        except (TypeError, ValueError, KeyError):
            return _UNKNOWN
        return text if len(text) <= _MAX_STR else _UNKNOWN
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)) and isinstance(op, ast.Add):
        return [*left, *right] if len(left) + len(right) <= _MAX_ITEMS else _UNKNOWN
    if type(left) is int and type(right) is int:
        return _number(op, left, right)
    return _UNKNOWN


def _number(op: ast.operator, a: int, b: int) -> Any:
    if isinstance(op, ast.Pow) and (b < 0 or b > 256 or abs(a).bit_length() * b > 256):
        return _UNKNOWN
    if isinstance(op, ast.LShift) and not 0 <= b <= 256:
        return _UNKNOWN
    handlers: dict[type[ast.operator], Callable[[], Any]] = {
        ast.Add: lambda: a + b,
        ast.Sub: lambda: a - b,
        ast.Mult: lambda: a * b,
        ast.Pow: lambda: a**b,
        ast.LShift: lambda: a << b,
        ast.BitOr: lambda: a | b,
        ast.BitAnd: lambda: a & b,
        ast.FloorDiv: lambda: a // b if b else _UNKNOWN,
    }
    handler = handlers.get(type(op))
    value = handler() if handler is not None else _UNKNOWN
    return value if value is _UNKNOWN or abs(value).bit_length() <= 256 else _UNKNOWN


def _subscript(dotted: str, value: Any, key: Any) -> Any:
    if dotted == "os.environ" and key == "HOME":
        return "~"
    if isinstance(value, (list, tuple)) and type(key) is int and -len(value) <= key < len(value):
        return value[key]
    if isinstance(value, dict) and isinstance(key, str):
        return value.get(key, _UNKNOWN)
    return _UNKNOWN


def _joined_str(node: ast.JoinedStr) -> Any:
    parts = []
    for v in node.values:
        if not isinstance(v, ast.Constant):
            return _UNKNOWN
        parts.append(str(v.value))
    text = "".join(parts)
    return text if len(text) <= _MAX_STR else _UNKNOWN


def _scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float)) and not isinstance(v, (bool, _Names))


def _literal(value: Any) -> ast.expr | None:
    """A known value as code: a string, a number, a list of them (a tuple too: an argv is read as a
    list). A value longer than ``_MAX_WRITTEN_VALUE`` keeps its name: written at each use, a long
    one would multiply the text the rules read."""
    if value is _UNKNOWN or isinstance(value, (_Names, _Entries, _Partial)):
        return None  # a listing stays the call it is
    if isinstance(value, str):
        return ast.Constant(str(value)) if len(value) <= _MAX_WRITTEN_VALUE else None
    if isinstance(value, (bool, int, float)) or value is None:
        return ast.Constant(value)
    if isinstance(value, (list, tuple)) and sum(len(str(v)) + 4 for v in value) <= _MAX_WRITTEN_VALUE:
        items = [_literal(v) for v in value]
        known = [i for i in items if i is not None]
        return ast.List(elts=known, ctx=ast.Load()) if len(known) == len(items) else None
    return None


def _pure(node: ast.Call) -> bool:
    """A call whose known value may stand for it: a path's or a string's computation, not an action."""
    return not isinstance(node.func, ast.Attribute) or node.func.attr not in ("run", "check_output", "getoutput")


def _dotted(node: ast.expr, aliases: dict[str, str]) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


def _target_name(target: ast.expr) -> str | None:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        return "self." + target.attr
    return None


def _counted(body: list[ast.stmt], env: dict[str, Any]) -> None:
    """A count a loop keeps (``n += 1``): unknown in the loop and after it."""
    for node in (n for s in body for n in ast.walk(s)):
        if isinstance(node, ast.AugAssign) and (name := _target_name(node.target)) is not None:
            env[name] = _UNKNOWN


def _changed(call: ast.expr, env: dict[str, Any]) -> None:
    """A list changed in place (``cmd.insert(0, 'sudo')``, ``.append``, ``.extend``): its new value."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return
    name = _target_name(call.func.value)
    if name is None or not isinstance(env.get(name), list):
        return
    args = [a.value if isinstance(a, ast.Constant) else _UNKNOWN for a in call.args]
    items = list(env[name])
    if call.func.attr == "append" and len(args) == 1 and args[0] is not _UNKNOWN:
        items.append(args[0])
    elif call.func.attr == "insert" and len(args) == 2 and type(args[0]) is int and args[1] is not _UNKNOWN:
        items.insert(args[0], args[1])
    elif call.func.attr in _MUTATORS:
        items = _UNKNOWN  # changed by a value not known here
    else:
        return
    env[name] = items


_MUTATORS = frozenset({"append", "insert", "extend", "pop", "remove", "clear"})
# a test of an entry's kind (every entry passes one branch or the other) and the calls a loop makes
# that do not act on the entry (what it prints or logs)
_KIND = frozenset(
    {"is_dir", "is_file", "isdir", "isfile", "is_symlink", "islink", "exists", "lexists", "is_mount", "ismount"}
)
_TELLS = frozenset({"print", "echo", "write", "info", "debug", "warning", "warn", "error", "log", "secho", "append"})


def _picks(body: list[ast.stmt]) -> bool:
    """Whether a loop's body acts on some entries only: a branch chosen by a condition other than the
    entry's kind, whose branch does more than skip, stop, print or count."""
    for node in (n for s in body for n in ast.walk(s)):
        if isinstance(node, (ast.If, ast.IfExp)) and not _kind_test(node.test):
            branches = [node.body, node.orelse] if isinstance(node, ast.IfExp) else [*node.body, *node.orelse]
            if isinstance(node, ast.IfExp) or not all(_idle(s) for s in branches):
                return True
        if isinstance(node, ast.Call) and _dotted(node.func, {}) in (
            "filter",
            "fnmatch.fnmatch",
            "re.match",
            "re.search",
        ):
            return True
    return False


def _kind_test(test: ast.expr) -> bool:
    """A test of the entry's kind alone: ``p.is_dir()``, ``not os.path.islink(p) and p.is_file()``."""
    if isinstance(test, ast.BoolOp):
        return all(_kind_test(v) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _kind_test(test.operand)
    if isinstance(test, ast.Call):
        f = test.func
        return (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) in _KIND
    return False


def _idle(s: ast.AST) -> bool:
    """A statement that neither acts on the entry nor chooses: skip, stop, count, print, log."""
    if isinstance(s, (ast.Continue, ast.Break, ast.Pass, ast.AugAssign, ast.Return)):
        return True
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
        f = s.value.func
        return (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) in _TELLS
    return False
