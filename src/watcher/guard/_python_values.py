"""The values the Python reader (``_python``) computes, and how: strings, paths, small numbers,
lists and mappings of them, a folder's entries, a spread of items, a partial call. Only string,
path and small-number operations are done, within bounds (a string of 4 KB, a list of 64 items, a
number of 256 bits); a sequence is never repeated, as that is what a memory bomb does. What is not
known is ``UNKNOWN``."""

from __future__ import annotations

import ast
import posixpath
import re
import shlex
from collections.abc import Callable
from typing import Any

__all__ = [
    "CANONICAL",
    "FUNCTIONS",
    "MAX_ITEMS",
    "MAX_STR",
    "MAX_WRITTEN_VALUE",
    "RESULTS",
    "UNKNOWN",
    "Entries",
    "Holed",
    "Instance",
    "Names",
    "Partial",
    "PathValue",
    "Placeholder",
    "Spread",
    "Yielded",
    "binary",
    "called",
    "command_output",
    "dotted",
    "holed",
    "join_path",
    "joined_str",
    "literal",
    "method",
    "pure",
    "scalar",
    "spread",
    "subscript",
    "target_name",
    "words",
]

MAX_STR = 4096
MAX_ITEMS = 64
MAX_WRITTEN_VALUE = 512  # the longest value written in place of its name
UNKNOWN: Any = object()


class PathValue(str):
    """A path object's value (``Path(...)``): a string the rules read as the path."""


class Names(str):
    """The names a folder listing gives (``os.listdir(folder)``): unknown alone, ``folder/*`` once
    joined to the folder."""


class Partial:
    """``functools.partial(f, *args, **keywords)``: a call of ``f`` with these first."""

    def __init__(self, func: ast.expr, args: list[ast.expr], keywords: list[ast.keyword]) -> None:
        self.func, self.args, self.keywords = func, args, keywords


class Instance:
    """An object of one of the file's classes, with the values of its fields that are known."""

    def __init__(self, name: str, fields: dict[str, Any]) -> None:
        self.name, self.fields = name, fields

    def __repr__(self) -> str:  # a copy's key: which object's fields it was read with
        return f"{self.name}{sorted(self.fields.items(), key=lambda kv: kv[0])!r}"


class Spread:
    """A starred list's items (``*args``), spread where it stands."""

    def __init__(self, items: list[Any] | tuple[Any, ...]) -> None:
        self.items = items


def words(items: list[Any]) -> list[Any] | None:
    """A list's items as a command's words: each known, or ``'{value}'`` for one known only when it
    runs (``["sudo", "chown", "-R", owner, path]``), as long as some word is a known string; None when
    none is, or when an item is a folder's entries."""
    if len(items) > MAX_ITEMS or any(isinstance(v, (Entries, Spread)) for v in items):
        return None
    if all(v is not UNKNOWN for v in items):
        return items
    if not any(isinstance(v, str) and not isinstance(v, Names) for v in items):
        return None
    return [Placeholder() if v is UNKNOWN else v for v in items]


class Placeholder(str):
    """A word of a command known only when it runs: written ``{value}``, as the text readers write one."""

    def __new__(cls) -> Placeholder:
        return super().__new__(cls, "{value}")


def spread(values: list[Any]) -> list[Any]:
    """``values`` with each known spread's items in its place; an unknown spread stays unknown."""
    out: list[Any] = []
    for v in values:
        out += list(v.items) if isinstance(v, Spread) else [v]
    return out


class Yielded:
    """A value a generator yields (``yield candidate``), among what the function being read returns."""

    def __init__(self, value: Any) -> None:
        self.value: Any = value


class Entries:
    """A folder's entries, as a listing (``os.scandir``, ``Path.iterdir``, ``glob``) gives them."""

    def __init__(self, value: Any) -> None:
        self.value = value


CANONICAL = {
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


def join_path(parts: list[Any], path: bool = False) -> Any:
    if not parts or not all(isinstance(p, str) and not isinstance(p, Names) for p in parts[:1]):
        return UNKNOWN
    out = str(parts[0])
    for p in parts[1:]:
        if not isinstance(p, str):
            return UNKNOWN
        if isinstance(p, Names):
            p = "*"
        out = p if p.startswith("/") else (out.rstrip("/") + "/" + p if out else p)
    return PathValue(out) if path else out


def _home(args: list[Any], keywords: dict[str, Any]) -> Any:
    return PathValue("~")


def _environ(args: list[Any], keywords: dict[str, Any]) -> Any:
    """``os.environ.get(NAME, default)``: the home for ``HOME``, else the default (the variable unset)."""
    if args[:1] == ["HOME"]:
        return "~"
    if args[:1] == ["TMPDIR"]:
        return "/tmp"
    return args[1] if len(args) > 1 else keywords.get("default", UNKNOWN)


def _listing(names: bool) -> Any:
    def listing(args: list[Any], keywords: dict[str, Any]) -> Any:
        folder = args[0] if args else "."
        if not isinstance(folder, str):
            return UNKNOWN
        return Entries(
            Names(folder) if names else PathValue(folder.rstrip("/") + "/*" if "*" not in folder else folder)
        )

    return listing


def _walk(args: list[Any], keywords: dict[str, Any]) -> Any:
    folder = args[0] if args else UNKNOWN
    return Entries((folder, Names(folder), Names(folder))) if isinstance(folder, str) else UNKNOWN


def _same(args: list[Any], keywords: dict[str, Any]) -> Any:
    return args[0] if len(args) == 1 and isinstance(args[0], (str, int)) and not isinstance(args[0], Names) else UNKNOWN


def _text(args: list[Any], keywords: dict[str, Any]) -> Any:
    v = _same(args, keywords)
    return str(v) if v is not UNKNOWN else UNKNOWN


FUNCTIONS: dict[str, Any] = {
    "pathlib.Path": lambda a, k: join_path(a, path=True) if a else PathValue("."),
    "pathlib.Path.home": _home,
    "pathlib.Path.cwd": lambda a, k: PathValue("."),
    "os.getcwd": lambda a, k: ".",
    "os.path.join": lambda a, k: join_path(a),
    "os.path.expanduser": _same,
    "os.path.abspath": _same,
    "os.path.realpath": _same,
    "os.path.normpath": _same,
    "os.path.expandvars": _same,
    "os.fspath": _same,
    "str": _text,
    "os.path.dirname": lambda a, k: posixpath.dirname(a[0]) if _same(a, k) is not UNKNOWN else UNKNOWN,
    "os.path.basename": lambda a, k: posixpath.basename(a[0]) if _same(a, k) is not UNKNOWN else UNKNOWN,
    "os.getenv": _environ,
    "os.environ.get": _environ,
    "tempfile.gettempdir": lambda a, k: "/tmp",
    "list": lambda a, k: list(a[0]) if len(a) == 1 and isinstance(a[0], (list, tuple)) else UNKNOWN,
    "tuple": lambda a, k: tuple(a[0]) if len(a) == 1 and isinstance(a[0], (list, tuple)) else UNKNOWN,
    "sorted": lambda a, k: a[0] if len(a) == 1 and isinstance(a[0], (list, tuple, Entries)) else UNKNOWN,
    "shlex.split": lambda a, k: shlex.split(a[0]) if len(a) == 1 and isinstance(a[0], str) else UNKNOWN,
    "shlex.quote": lambda a, k: a[0] if len(a) == 1 and isinstance(a[0], str) else UNKNOWN,
    "shlex.join": lambda a, k: " ".join(map(str, a[0])) if len(a) == 1 and isinstance(a[0], (list, tuple)) else UNKNOWN,
    "os.listdir": _listing(names=True),
    "os.scandir": _listing(names=False),
    "glob.glob": _listing(names=False),
    "glob.iglob": _listing(names=False),
    "os.walk": _walk,
}
# what a command prints that the guard knows without running it: the repository's own folders
RESULTS = frozenset({"subprocess.run", "subprocess.check_output", "subprocess.getoutput"})
_KNOWN_OUTPUT: dict[tuple[str, ...], str] = {
    ("git", "rev-parse", "--git-dir"): ".git",
    ("git", "rev-parse", "--absolute-git-dir"): ".git",
    ("git", "rev-parse", "--git-common-dir"): ".git",
    ("git", "rev-parse", "--show-toplevel"): ".",
}


def command_output(args: list[Any]) -> Any:
    command = args[0] if args else UNKNOWN
    words = (
        tuple(shlex.split(command))
        if isinstance(command, str)
        else tuple(command)
        if isinstance(command, (list, tuple))
        else ()
    )
    return _KNOWN_OUTPUT.get(tuple(map(str, words)), UNKNOWN)


def method(receiver: Any, method: str, args: list[Any], keywords: dict[str, Any]) -> Any:
    """A known value's method: a path's (``joinpath``, ``resolve``, ``glob``), a string's (``format``,
    ``join``, ``strip``), a list's copy."""
    if isinstance(receiver, Names):
        return UNKNOWN
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
            return receiver if not args else UNKNOWN
        if method == "joinpath":
            return join_path([receiver, *args], path=True)
        if method in ("iterdir", "glob", "rglob"):
            pattern = args[0] if args and isinstance(args[0], str) else "*"
            return Entries(PathValue(receiver.rstrip("/") + "/" + pattern))
        if (
            method == "join"
            and len(args) == 1
            and isinstance(args[0], (list, tuple))
            and all(isinstance(p, str) for p in args[0])
        ):
            joined = receiver.join(args[0])
            return joined if len(joined) <= MAX_STR else UNKNOWN
        if method == "format" and not re.search(r"\{[^}]*[.\[:!][^}]*\}", receiver):  # plain fields only
            try:
                text = receiver.format(*args, **keywords)
            except (IndexError, KeyError, ValueError):
                return UNKNOWN
            return text if len(text) <= MAX_STR else UNKNOWN
        if method == "replace" and len(args) == 2 and all(isinstance(a, str) for a in args):
            text = receiver.replace(args[0], args[1])
            return text if len(text) <= MAX_STR else UNKNOWN
        if method == "split" and not args:
            return receiver.split()
    if isinstance(receiver, (list, tuple)) and method == "copy":
        return list(receiver)
    if isinstance(receiver, dict):  # CONFIG.get("root", "/"), CONFIG.items()
        if method == "get" and args and isinstance(args[0], str):
            return receiver.get(args[0], args[1] if len(args) > 1 else UNKNOWN)
        if method in ("items", "values", "keys"):
            return list(getattr(receiver, method)())
    return UNKNOWN


def binary(op: ast.operator, left: Any, right: Any) -> Any:
    """``left op right`` for strings, paths and small numbers; a sequence is never repeated (that is
    what a memory bomb does)."""
    if left is UNKNOWN or right is UNKNOWN or isinstance(left, Names):
        return UNKNOWN
    if isinstance(right, Names) and isinstance(op, (ast.Add, ast.Div)):
        right = "*" if isinstance(op, ast.Div) or str(left).endswith("/") else "/*"  # folder + '/' + name
    if isinstance(op, ast.Div) and isinstance(left, PathValue) and isinstance(right, str):
        return join_path([left, right], path=True)
    if isinstance(left, str) and isinstance(right, str) and isinstance(op, ast.Add):
        text = left + right
        return (PathValue(text) if isinstance(left, PathValue) else text) if len(text) <= MAX_STR else UNKNOWN
    if isinstance(left, str) and isinstance(op, ast.Mod) and not re.search(r"%[-+ #0]*(?:\d{3,}|\*)", left):
        try:
            text = left % right
        except (TypeError, ValueError, KeyError):
            return UNKNOWN
        return text if len(text) <= MAX_STR else UNKNOWN
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)) and isinstance(op, ast.Add):
        return [*left, *right] if len(left) + len(right) <= MAX_ITEMS else UNKNOWN
    if type(left) is int and type(right) is int:
        return _number(op, left, right)
    return UNKNOWN


def _number(op: ast.operator, a: int, b: int) -> Any:
    if isinstance(op, ast.Pow) and (b < 0 or b > 256 or abs(a).bit_length() * b > 256):
        return UNKNOWN
    if isinstance(op, ast.LShift) and not 0 <= b <= 256:
        return UNKNOWN
    handlers: dict[type[ast.operator], Callable[[], Any]] = {
        ast.Add: lambda: a + b,
        ast.Sub: lambda: a - b,
        ast.Mult: lambda: a * b,
        ast.Pow: lambda: a**b,
        ast.LShift: lambda: a << b,
        ast.BitOr: lambda: a | b,
        ast.BitAnd: lambda: a & b,
        ast.FloorDiv: lambda: a // b if b else UNKNOWN,
    }
    handler = handlers.get(type(op))
    value = handler() if handler is not None else UNKNOWN
    return value if value is UNKNOWN or abs(value).bit_length() <= 256 else UNKNOWN


def subscript(dotted: str, value: Any, key: Any) -> Any:
    if dotted == "os.environ" and key == "HOME":
        return "~"
    if isinstance(value, (list, tuple)) and type(key) is int and -len(value) <= key < len(value):
        return value[key]
    if isinstance(value, dict) and isinstance(key, str):
        return value.get(key, UNKNOWN)
    return UNKNOWN


def joined_str(node: ast.JoinedStr) -> Any:
    """An f-string's text: its parts known (``Constant``), or holes written ``{name}`` where a part is
    known only when it runs (``f"/etc/sudoers.d/99-{user}"``), as the text readers write one."""
    parts, holes = [], False
    for v in node.values:
        known = isinstance(v, ast.Constant)
        holes = holes or not known
        inner = v.value if isinstance(v, ast.FormattedValue) else v
        parts.append(str(v.value) if isinstance(v, ast.Constant) else "{" + ast.unparse(inner)[:40] + "}")
    text = "".join(parts)
    return (Holed(text) if holes else text) if len(text) <= MAX_STR else UNKNOWN


class Holed(str):
    """A string with holes where a value is known only when it runs: read, never written in place."""


def holed(value: Any) -> bool:
    """Whether a list's words hold a hole or a placeholder: its display is kept as written."""
    return isinstance(value, (list, tuple)) and any(isinstance(v, (Holed, Placeholder)) for v in value)


def scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float)) and not isinstance(v, (bool, Names))


def literal(value: Any) -> ast.expr | None:
    """A known value as code: a string, a number, a list of them (a tuple too: an argv is read as a
    list). A value longer than ``MAX_WRITTEN_VALUE`` keeps its name: written at each use, a long
    one would multiply the text the rules read."""
    if value is UNKNOWN or isinstance(value, (Names, Entries, Partial, Instance)):
        return None  # a listing stays the call it is
    if isinstance(value, Holed):
        return None  # its expression is written already, holes and all
    if isinstance(value, str):
        return ast.Constant(str(value)) if len(value) <= MAX_WRITTEN_VALUE else None
    if isinstance(value, (bool, int, float)) or value is None:
        return ast.Constant(value)
    if isinstance(value, (list, tuple)) and sum(len(str(v)) + 4 for v in value) <= MAX_WRITTEN_VALUE:
        items = [literal(v) for v in value]
        known = [i for i in items if i is not None]
        return ast.List(elts=known, ctx=ast.Load()) if len(known) == len(items) else None
    return None


def pure(node: ast.Call) -> bool:
    """A call whose known value may stand for it: a path's or a string's computation, not an action."""
    return not isinstance(node.func, ast.Attribute) or node.func.attr not in ("run", "check_output", "getoutput")


def called(call: ast.Call) -> str:
    """The name a call calls by: ``rmtree`` of ``shutil.rmtree(…)``, ``open`` of ``open(…)``."""
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def dotted(node: ast.expr, aliases: dict[str, str]) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


def target_name(target: ast.expr) -> str | None:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        return "self." + target.attr
    return None
