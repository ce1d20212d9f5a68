"""An architecture rule import-linter cannot state, checked on the source with ``ast``.

The environment is read in one place, ``watcher.settings``, at the boundary, and handed down; the
only other readers are the hook's fast path, which must not import the package to stay fast, and
the fake agent CLI (whose environment is an agent's).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import watcher

SRC = Path(watcher.__file__).resolve().parent

#: the modules that may read the process environment, and why
ENV_READERS = {
    Path("settings.py"): "the settings module: Settings.from_env() reads it once at the boundary",
    Path("hooks/client.py"): "the hook client's fast path: a warm hook imports nothing of watcher but itself",
    Path("guard/_policy.py"): "the hook's cold fast path: the guard imports nothing of watcher (guard-stands-alone)",
    Path("testing/fake_cli.py"): "the entry point of a stand-in agent CLI: its environment is the agent's, not ours",
    Path("spawn/_gitproc.py"): "watcher's own git processes inherit its environment less the variables that would "
    "point git at another repository (GIT_DIR, ...): it filters what a child inherits and reads no setting",
}
#: the modules that may set variables for the child processes they start
ENV_WRITERS = {
    Path("demo/notebooks.py"): "the notebook demo: the kernels it starts inherit the journal and JUPYTER_PATH",
}
_FUNCTIONS = {"getenv", "getenvb", "putenv", "unsetenv"}


def _dotted(node: ast.AST) -> str:
    """``os.environ.get`` for the attribute chain ``node`` spells ("" for anything else)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def environment_uses(source: str, filename: str = "<source>") -> list[tuple[int, str, str]]:
    """(line, "read" or "write", what) for each use of the process environment in ``source``.

    A use is ``os.environ`` (or ``os.environb``) in any form, ``os.getenv`` and its kin, and the
    same names imported from ``os``; assigning or deleting ``os.environ[NAME]`` is a write, anything
    else a read. Strings that merely mention ``os.environ`` (a taint rule naming its source) are not uses.
    """
    tree = ast.parse(source, filename=filename)
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "os"
        for alias in node.names
        if alias.name in {"environ", "environb", *_FUNCTIONS}
    }
    written = {
        id(target.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign | ast.AugAssign | ast.Delete)
        for target in (node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target])
        if isinstance(target, ast.Subscript)
    }
    found: list[tuple[int, str, str]] = []
    for node in ast.walk(tree):
        name = _dotted(node)
        if name in ("os.environ", "os.environb") or name in {f"os.{f}" for f in _FUNCTIONS}:
            found.append((node.lineno, "write" if id(node) in written else "read", name))
        elif isinstance(node, ast.Name) and node.id in imported:
            found.append((node.lineno, "write" if id(node) in written else "read", node.id))
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            names = sorted(a.name for a in node.names if a.name in {"environ", "environb", *_FUNCTIONS})
            if names:
                found.append((node.lineno, "read", f"from os import {', '.join(names)}"))
    return found


def test_only_the_settings_module_and_the_hook_fast_path_read_the_environment() -> None:
    offences = []
    for path in sorted(SRC.rglob("*.py")):
        here = path.relative_to(SRC)
        for line, kind, what in environment_uses(path.read_text(encoding="utf-8"), str(path)):
            allowed = set(ENV_READERS) if kind == "read" else ENV_WRITERS
            if here not in allowed:
                offences.append(f"{here}:{line}: {kind}s the environment ({what})")
    assert offences == [], "take the value from watcher.settings.Settings, passed down from the boundary"


def test_every_allowed_reader_still_reads_it() -> None:
    """An exception that is no longer needed is removed, so the list stays the truth."""
    for here in [*ENV_READERS, *ENV_WRITERS]:
        assert environment_uses((SRC / here).read_text(encoding="utf-8")), f"{here} no longer uses the environment"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import os\nx = os.environ.get('A')", [(2, "read", "os.environ")]),
        ("import os\nx = os.environ['A']", [(2, "read", "os.environ")]),
        ("import os\nx = dict(os.environ)", [(2, "read", "os.environ")]),
        ("import os\nx = os.getenv('A', 'b')", [(2, "read", "os.getenv")]),
        ("from os import environ\nx = environ['A']", [(1, "read", "from os import environ"), (2, "read", "environ")]),
        ("from os import getenv as ge\nx = ge('A')", [(1, "read", "from os import getenv"), (2, "read", "ge")]),
        ("import os\nos.environ['A'] = 'b'", [(2, "write", "os.environ")]),
        ("import os\ndel os.environ['A']", [(2, "write", "os.environ")]),
        ("import os\nos.environ.pop('A')", [(2, "read", "os.environ")]),
        ("if name == 'os.environ':\n    pass", []),  # a taint rule naming its source reads nothing
        ("settings.environ.get('PATH')", []),  # the environment handed down in Settings
    ],
)
def test_the_scanner_sees_every_way_of_reading(source: str, expected: list[tuple[int, str, str]]) -> None:
    assert sorted(environment_uses(source)) == sorted(expected)
