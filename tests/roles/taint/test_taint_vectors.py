"""The labelled taint vectors: every ``# vulnerable`` sink is found, every ``# safe`` handler is quiet.

The vectors live in ``tests/roles/vectors/taint_python/`` (see its README): one file per sink
class, each line labelled with a comment. They run through the security role's Python scan, so a
safe handler must draw no warning from bandit or the AST rules either.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
from ast_grep_py import SgRoot

from watcher.roles._security_model import Finding
from watcher.roles._security_python import python_findings

VECTORS = Path(__file__).parent.parent / "vectors" / "taint_python"
_LABEL = re.compile(r"#\s*(vulnerable|safe)\b(?::\s*([\w-]+))?")


def _cases() -> list[tuple[str, int, str, str]]:
    out = []
    for path in sorted(VECTORS.glob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = _LABEL.search(line)
            if match:
                out.append((path.name, number, match.group(1), match.group(2) or path.stem))
    return out


CASES = _cases()


def _handler(code: str, line: int) -> tuple[int, int]:
    """The lines of the function holding ``line``."""
    root = SgRoot(code, "python").root()
    best = (line, line)
    for fn in root.find_all(kind="function_definition"):
        r = fn.range()
        if r.start.line + 1 <= line <= r.end.line + 1:
            best = (r.start.line + 1, r.end.line + 1)  # find_all goes outside in: the innermost wins
    return best


@functools.cache
def _findings(name: str) -> list[Finding]:
    return python_findings((VECTORS / name).read_text())


def test_every_class_has_ten_of_each() -> None:
    counts: dict[tuple[str, str], int] = {}
    for _, _, label, cls in CASES:
        counts[(cls, label)] = counts.get((cls, label), 0) + 1
    classes = {cls for _, _, _, cls in CASES if not cls.startswith("syntax")}
    short = {k: v for k, v in counts.items() if v < 10 and k[0] in classes}
    assert not short, short


@pytest.mark.parametrize(("name", "line", "label", "cls"), CASES, ids=[f"{c[0]}:{c[1]}:{c[2]}" for c in CASES])
def test_vector(name: str, line: int, label: str, cls: str) -> None:
    found = _findings(name)
    if label == "vulnerable":
        hits = [f for f in found if f.rule == f"taint:{cls}" and f.start_line <= line <= f.last_line]
        assert hits, [(f.rule, f.start_line) for f in found if abs(f.start_line - line) < 15]
        assert f"line {line})" in hits[0].explanation  # the sink is named with its line
    else:
        first, last = _handler((VECTORS / name).read_text(), line)
        noisy = [
            (f.rule, f.start_line, f.explanation[:120])
            for f in found
            if f.severity != "hint" and first <= f.start_line <= last
        ]
        assert not noisy
