"""Python that grows without end, read by its syntax tree: a loop with no way out but a failure
(``while True:`` whose only ``break`` is in an ``except``) that each round keeps a block of memory
(``blocks.append(bytearray(512 MiB))``), writes a block to a file (the disk fills), or starts a
thread or a process; and a function that starts threads running itself. Pausing (``time.sleep``)
does not bound it: it only makes the end come later.

A block is an allocation of at least 1 MiB (``bytearray(N)``, ``bytes(N)``, ``os.urandom(N)``,
``b'x' * N``, ``[0] * N``) or a name given one. The code is read as ``python_readable`` writes it,
so a size set once (``CHUNK = 512 * 1024 * 1024``) is a number where it is used."""

from __future__ import annotations

import ast
import re

from watcher.guard._python_values import called

__all__ = ["endless_growth"]

_BLOCK = 1 << 20  # a round that keeps this much, without end, is a bomb
_ALLOCATORS = frozenset({"bytearray", "bytes", "urandom", "zeros", "ones", "empty", "full"})
_SPAWNS = frozenset({"Thread", "Process", "Popen", "fork", "spawn", "start_new_thread"})
_GROWS = frozenset({"append", "extend", "write", "put", "add"})
_MAY_GROW = re.compile(r"\bwhile\s*\(?\s*(?:True|1)\s*\)?\s*:|\bcount\(|\btarget\s*=")
_PACED = frozenset({"sleep", "join", "wait", "communicate", "get"})


def endless_growth(code: str) -> str | None:
    """Why ``code`` (Python, as ``python_readable`` writes it) grows without end; None when it does not."""
    if not _MAY_GROW.search(code):  # no endless loop and no thread target: nothing to parse for
        return None
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    blocks = {
        t.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign) and _block(n.value, set())
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _runs_itself(node):
            return f"starts threads or processes that run {node.name}() again, without end: the machine runs out"
        if not isinstance(node, (ast.While, ast.For)) or not _endless(node):
            continue
        body = [n for s in node.body for n in _walk_round(s)]
        calls = {called(n) for n in body if isinstance(n, ast.Call)}
        if calls & _SPAWNS and not calls & _PACED:  # a pause or a wait each round: a scheduler, not a bomb
            return "starts a thread or process each round of an endless loop: the machine runs out of them"
        for n in body:
            if not isinstance(n, ast.Call):
                continue
            name = called(n)
            if name in _GROWS and any(_block(a, blocks) for a in n.args):
                what = "fills the disk" if name == "write" else "runs out of memory"
                return f"keeps a block of 1 MiB or more each round of an endless loop: the machine {what}"
        for n in body:
            if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add) and _block(n.value, blocks):
                return "keeps a block of 1 MiB or more each round of an endless loop: the machine runs out of memory"
    return None


def _endless(node: ast.AST) -> bool:
    """A loop that only ends by failing: ``while True``/``while 1`` or ``for … in itertools.count()``,
    with no ``break``, ``return`` or exit of its own outside an ``except``."""
    if isinstance(node, ast.While):
        endless = isinstance(node.test, ast.Constant) and bool(node.test.value)
    elif isinstance(node, ast.For):
        endless = isinstance(node.iter, ast.Call) and called(node.iter) == "count"
    else:
        return False
    return endless and not any(_leaves(s) for s in node.body)


def _leaves(s: ast.stmt) -> bool:
    """Whether a statement of a loop's round can leave it other than by a failure."""
    if isinstance(s, (ast.Break, ast.Return)):
        return True
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and called(s.value) in ("exit", "_exit"):
        return True
    if isinstance(s, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False  # an inner loop's break leaves the inner loop; a definition's return is its own
    if isinstance(s, ast.Try):  # the handlers are the failure: a break there ends it only when it fails
        return any(_leaves(b) for b in [*s.body, *s.orelse, *s.finalbody])
    children = [c for field in ("body", "orelse") for c in getattr(s, field, [])]
    return any(_leaves(c) for c in children if isinstance(c, ast.stmt))


def _walk_round(s: ast.stmt) -> list[ast.AST]:
    """The nodes a round runs: not those of a function or class it defines."""
    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
        return []
    out: list[ast.AST] = [s]
    for child in ast.iter_child_nodes(s):
        out += _walk_round(child) if isinstance(child, ast.stmt) else list(ast.walk(child))
    return out


def _block(node: ast.expr, blocks: set[str]) -> bool:
    """An allocation of 1 MiB or more (or a name given one)."""
    if isinstance(node, ast.Name):
        return node.id in blocks
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):  # b'x' * N, [0] * N
        sides = (node.left, node.right)
        return any(_number(s) >= _BLOCK for s in sides) and any(
            isinstance(s, (ast.Constant, ast.List, ast.Name)) and _number(s) < _BLOCK for s in sides
        )
    if isinstance(node, ast.Call):
        if called(node) in _ALLOCATORS and any(_number(a) >= _BLOCK for a in node.args):
            return True
        return called(node) in ("bytearray", "bytes", "list") and any(_block(a, blocks) for a in node.args)
    return False


def _number(node: ast.expr) -> int:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Tuple):  # np.zeros((1024, 1024))
        total = 1
        for e in node.elts:
            total *= _number(e)
        return total
    return 0


def _runs_itself(f: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A function that starts a thread or process whose target is itself: copies without end."""
    for n in ast.walk(f):
        if isinstance(n, ast.Call) and called(n) in _SPAWNS:
            target = next((k.value for k in n.keywords if k.arg == "target"), None)
            if isinstance(target, ast.Name) and target.id == f.name:
                return True
    return False
