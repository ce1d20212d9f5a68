"""What a loop does with what it takes, as the Python reader (``_python``) needs to know: whether
its body acts on some entries only (``picks``), the counts it keeps (``counted``), and a list it
changes in place (``changed``)."""

from __future__ import annotations

import ast
from typing import Any

from watcher.guard._python_values import UNKNOWN, called, dotted, target_name

__all__ = ["MUTATORS", "changed", "counted", "kind_test", "picks"]


def counted(body: list[ast.stmt], env: dict[str, Any]) -> None:
    """A count a loop keeps (``n += 1``): unknown in the loop and after it."""
    for node in (n for s in body for n in ast.walk(s)):
        if isinstance(node, ast.AugAssign) and (name := target_name(node.target)) is not None:
            env[name] = UNKNOWN


def changed(call: ast.expr, env: dict[str, Any]) -> None:
    """A list changed in place (``cmd.insert(0, 'sudo')``, ``.append``, ``.extend``): its new value."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return
    name = target_name(call.func.value)
    if name is None or not isinstance(env.get(name), list):
        return
    args = [a.value if isinstance(a, ast.Constant) else UNKNOWN for a in call.args]
    items = list(env[name])
    if call.func.attr == "append" and len(args) == 1 and args[0] is not UNKNOWN:
        items.append(args[0])
    elif call.func.attr == "insert" and len(args) == 2 and type(args[0]) is int and args[1] is not UNKNOWN:
        items.insert(args[0], args[1])
    elif call.func.attr in MUTATORS:
        items = UNKNOWN  # changed by a value not known here
    else:
        return
    env[name] = items


MUTATORS = frozenset({"append", "insert", "extend", "pop", "remove", "clear"})
# a test of an entry's kind (every entry passes one branch or the other) and the calls a loop makes
# that do not act on the entry (what it prints or logs)
_KIND = frozenset(
    {"is_dir", "is_file", "isdir", "isfile", "is_symlink", "islink", "exists", "lexists", "is_mount", "ismount"}
)
_TELLS = frozenset({"print", "echo", "write", "info", "debug", "warning", "warn", "error", "log", "secho", "append"})


def picks(body: list[ast.stmt]) -> bool:
    """Whether a loop's body acts on some entries only: a branch chosen by a condition other than the
    entry's kind, whose branch does more than skip, stop, print or count."""
    for node in (n for s in body for n in ast.walk(s)):
        if isinstance(node, (ast.If, ast.IfExp)) and not kind_test(node.test):
            branches = [node.body, node.orelse] if isinstance(node, ast.IfExp) else [*node.body, *node.orelse]
            if isinstance(node, ast.IfExp) or not all(_idle(s) for s in branches):
                return True
        if isinstance(node, ast.Call) and dotted(node.func, {}) in (
            "filter",
            "fnmatch.fnmatch",
            "re.match",
            "re.search",
        ):
            return True
    return False


def kind_test(test: ast.expr) -> bool:
    """A test of the entry's kind alone: ``p.is_dir()``, ``not os.path.islink(p) and p.is_file()``."""
    if isinstance(test, ast.BoolOp):
        return all(kind_test(v) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return kind_test(test.operand)
    if isinstance(test, ast.Call):
        return called(test) in _KIND
    return False


def _idle(s: ast.AST) -> bool:
    """A statement that neither acts on the entry nor chooses: skip, stop, count, print, log."""
    if isinstance(s, (ast.Continue, ast.Break, ast.Pass, ast.AugAssign, ast.Return)):
        return True
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
        return called(s.value) in _TELLS
    return False
