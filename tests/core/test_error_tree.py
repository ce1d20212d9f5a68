"""The error tree: every deliberate failure is a ``WatcherError`` that says what to do."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from watcher.core import errors
from watcher.core.errors import WatcherError

SRC = Path(errors.__file__).resolve().parents[1]
#: built-in exceptions our code must not raise on purpose (a ``WatcherError`` subclass says more)
BUILTINS = {"Exception", "ValueError", "KeyError", "LookupError", "RuntimeError", "TypeError"}
#: scripts that run by path, without the package (``python -I -S client.py``), so cannot import the tree
STANDALONE = {
    Path("hooks/client.py"),
    Path(
        "guard/_policy.py"
    ),  # the guard imports nothing from watcher (contract guard-stands-alone): the cold hook path loads it alone
}


def _deliberate_builtin_raises(path: Path) -> list[str]:
    """``raise ValueError(...)`` and the like, except inside a ``try`` that handles them on the spot."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[str] = []

    def visit(node: ast.AST, guarded: bool) -> None:
        if isinstance(node, ast.Try):
            for child in node.body:
                visit(child, guarded or bool(node.handlers))
            for child in [*node.handlers, *node.orelse, *node.finalbody]:
                visit(child, guarded)
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            guarded = False
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and not guarded:
            func = node.exc.func
            if isinstance(func, ast.Name) and func.id in BUILTINS:
                found.append(f"{path.relative_to(SRC)}:{node.lineno}: raise {func.id}")
        for child in ast.iter_child_nodes(node):
            visit(child, guarded)

    visit(tree, False)
    return found


def test_no_deliberate_raise_of_a_builtin_exception() -> None:
    scanned = [path for path in sorted(SRC.rglob("*.py")) if path.relative_to(SRC) not in STANDALONE]
    found = [hit for path in scanned for hit in _deliberate_builtin_raises(path)]
    assert found == []


@pytest.mark.parametrize("name", errors.__all__)
def test_every_error_is_in_the_tree_and_drawn_in_the_docstring(name: str) -> None:
    cls = getattr(errors, name)
    assert inspect.isclass(cls) and issubclass(cls, WatcherError)
    assert name in (errors.__doc__ or ""), f"{name} is missing from the tree in the errors module docstring"
