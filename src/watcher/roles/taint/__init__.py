"""Taint analysis: does untrusted input reach a dangerous sink, and by which path?

The engine is language-neutral: it walks a tree-sitter syntax tree (ast-grep's ``SgNode``), so
what it reads never depends on the running interpreter's own parser, and a per-language
``Spec`` supplies the grammar's node kinds (``Grammar``) and the security knowledge — sources,
sinks by class with their CWE, sanitisers, validating conditions.

The interface::

    from watcher.roles.taint import analyse
    from watcher.roles.taint.python import PythonSpec

    analysis = analyse(SgRoot(code, "python").root(), PythonSpec())  # a spec per analysis
    # JavaScript/TypeScript: analyse(SgRoot(code, "typescript").root(), JavaScriptSpec())
    for flow in analysis.flows:           # list[Flow], by line
        flow.sink.name, flow.sink.cwe     # "command", 78
        flow.line, flow.end_line          # the sink's lines (1-based)
        flow.callee                       # "subprocess.run()" — how the sink reads
        flow.source.name, flow.source.line  # "request.args['cmd']", 12
        flow.path                         # ("cmd", "line") — the variables it went through
        flow.severity                     # "critical", "warning" or "hint"
    analysis.verdicts[line]["command"]    # "tainted", "unknown" (provenance not known) or "safe"
    analysis.dead                         # [(first, last)] lines of branches that never run

What it follows, within one file: assignments and augmented assignments; string building
(f-strings, ``%``, ``format``, ``+``, ``join``), slicing, encoding; containers by key and index
(a read of another key is not the tainted value), attributes, lists mutated by
``append``/``pop``/``insert``; loops, comprehensions, ``try``, ``match`` and both arms of a branch;
calls to functions, methods and constructors defined in the same file (to a depth of four);
function expressions (JavaScript's arrows and callbacks) where they stand, with the names around
them and the parameters the spec gives them (``app.get(path, (req, res) => …)``); destructuring.
Constant folding: a condition that folds to a constant runs only its live arm; a value that
is the same constant on every path carries no input. Conditions the spec knows (an allow-list,
a regex that excludes a sink's metacharacters) clear a variable on the arm where they hold.

What it does not follow: calls into other files and libraries (their result carries the
arguments' data, and an ``"unknown"`` origin), dynamic dispatch (``getattr``, functions held in variables,
methods of objects whose class is not known), global state changed by a callee, aliasing of
mutable containers between names. Those give ``"unknown"`` verdicts, never a flow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher.roles.taint.engine import Engine
from watcher.roles.taint.spec import Analysis, Call, Flow, Function, Grammar, Refinement, Sink, Site, Spec
from watcher.roles.taint.values import ANY_KEY, NO_CONST, Origin, Value

if TYPE_CHECKING:
    from ast_grep_py import SgNode

__all__ = [
    "ANY_KEY",
    "NO_CONST",
    "Analysis",
    "Call",
    "Flow",
    "Function",
    "Grammar",
    "Origin",
    "Refinement",
    "Sink",
    "Site",
    "Spec",
    "Value",
    "analyse",
]


def analyse(root: SgNode, spec: Spec) -> Analysis:
    """Every flow from a source to a sink in the file under ``root``, by the knowledge in ``spec``."""
    return Engine(root, spec).run()
