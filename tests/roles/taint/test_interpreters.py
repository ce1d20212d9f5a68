"""The Python scan does not depend on the interpreter: the newest Python finds what this one finds.

Scanning reads code with tree-sitter, not with the running ``ast``; the labelled vectors (among
them handlers in Python 3.12 and 3.13 syntax) are scanned here and in a subprocess on the newest
Python the machine has (``.venv-newest``, set up by ``make``), and the findings must be the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from watcher.roles._security_python import python_findings

ROOT = Path(__file__).resolve().parents[3]
NEWEST = ROOT / ".venv-newest" / "bin" / "python"
VECTORS = sorted((ROOT / "tests" / "roles" / "vectors" / "taint_python").glob("*.py"))
_SCAN = (
    "import json, sys\n"
    "from watcher.roles._security_python import python_findings\n"
    "print(json.dumps({'version': list(sys.version_info[:2]), 'found': {p: [[f.rule, f.start_line, f.last_line, "
    "f.severity, f.explanation] for f in python_findings(open(p).read())] for p in sys.argv[1:]}}))\n"
)


def _here() -> dict[str, list[list[object]]]:
    return {
        str(p): [[f.rule, f.start_line, f.last_line, f.severity, f.explanation] for f in python_findings(p.read_text())]
        for p in VECTORS
    }


def test_the_newest_python_finds_the_same_as_this_one() -> None:
    if not NEWEST.exists():
        pytest.skip("no .venv-newest: `make` sets it up where Python 3.13 is installed")
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT / "src"), "HOME": os.environ.get("HOME", "/")}
    done = subprocess.run(
        [str(NEWEST), "-c", _SCAN, *map(str, VECTORS)], capture_output=True, text=True, timeout=90, env=env, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    there = json.loads(done.stdout)
    assert tuple(there["version"]) >= (3, 12) and tuple(there["version"]) != sys.version_info[:2]
    assert there["found"] == _here()


def test_syntax_no_grammar_reads_is_a_notice_and_the_rest_is_scanned() -> None:
    found = python_findings((ROOT / "tests/roles/vectors/taint_python/syntax_313.py").read_text())
    notices = [f for f in found if f.rule == "py:not-scanned"]
    assert [(f.start_line, f.last_line) for f in notices] == [(8, 8)]  # PEP 696 defaults: not yet in the grammar
    assert {f.rule for f in found} >= {"taint:command", "taint:xss"}
