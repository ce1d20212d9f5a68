"""A shell ``case`` on a value known as the script runs, read as the branch it takes:
``MODE=${1:-stats}; case "$MODE" in flush) redis-cli FLUSHALL ;; stats) redis-cli INFO ;; esac`` run
with no arguments is ``redis-cli INFO``; run as ``flush.sh flush``, the flush. A value not known
here (read from a file, a command's output) keeps every branch, each judged as before.

The value is the script's own argument (``$1``), a default for one not given (``${1:-stats}``), a
default for a variable the environment would set (unset as the script is read: ``${MODE:-stats}``)
or a word, given to a name once outside the script's functions. A ``case`` in a function is left
to the calls written out (its ``$1`` is the caller's). Read with tree-sitter, on short scripts
only (see ``_loops``)."""

from __future__ import annotations

import fnmatch

from ast_grep_py import SgNode, SgRoot

from watcher.guard._lazy import lazy
from watcher.guard._probe import PROBED_CHARS
from watcher.guard._shell import within

__all__ = ["cases_chosen"]

_MAX_CASES = 16
# a value set once: $1, ${1:-word}, ${VAR:-word}, a word (quoted or not)
_VALUE = lazy(
    r"""^(["']?)(?:\$(\d)|\$\{(\d)\}|\$\{(\d):?-([\w./@:+-]*)\}|\$\{[A-Za-z_]\w*:?-([\w./@:+-]*)\}|([\w./@:+-]+))\1$"""
)
_SUBJECT = lazy(r"""^(["']?)(?:\$(\d)|\$\{(\d)\}|\$([A-Za-z_]\w*)|\$\{([A-Za-z_]\w*)\}|([\w./@:+-]+))\1$""")


def cases_chosen(script: str, given: tuple[str, ...]) -> str:
    """``script`` (run with the arguments ``given``) with each ``case`` on a known value written as the
    branch it takes."""
    if "case" not in script or "esac" not in script or len(script) > max(PROBED_CHARS, 8192):
        return script
    root = SgRoot(script, "bash").root()
    if root.find(kind="ERROR") is not None:
        return script
    values = _values(root, given)
    out, pos = [], 0
    cases = [
        n
        for n in root.find_all(kind="case_statement")
        if not within(n, "case_statement") and not within(n, "function_definition")
    ]
    for node in cases[:_MAX_CASES]:
        subject = next((c for c in node.children() if c.is_named()), None)
        value = _value_of(subject.text(), values, given) if subject is not None else None
        if value is None:
            continue
        r = node.range()
        out += [script[pos : r.start.index], _taken(node, value, script)]
        pos = r.end.index
    return "".join([*out, script[pos:]])


def _values(root: SgNode, given: tuple[str, ...]) -> dict[str, str]:
    """The names given one known value in the script, outside its functions (whose ``$1`` is their
    caller's)."""
    found: dict[str, list[str | None]] = {}
    for a in root.find_all(kind="variable_assignment"):
        name = a.field("name")
        value_node = a.field("value")
        if name is None:
            continue
        v = _VALUE.match(value_node.text()) if value_node is not None and not within(a, "function_definition") else None
        value: str | None = None
        if v is not None:
            number = v.group(2) or v.group(3) or v.group(4)
            if number is not None:
                at = int(number) - 1
                value = given[at] if at < len(given) else (v.group(5) or "") if v.group(4) else ""
            else:
                value = v.group(6) if v.group(6) is not None else v.group(7)
        found.setdefault(name.text(), []).append(value)
    return {name: vs[0] for name, vs in found.items() if len(vs) == 1 and vs[0] is not None}


def _value_of(subject: str, values: dict[str, str], given: tuple[str, ...]) -> str | None:
    m = _SUBJECT.match(subject.strip())
    if m is None:
        return None
    number = m.group(2) or m.group(3)
    if number is not None:
        at = int(number) - 1
        return given[at] if at < len(given) else ""
    name = m.group(4) or m.group(5)
    return values.get(name) if name is not None else m.group(6)


def _taken(node: SgNode, value: str, script: str) -> str:
    """The body of the first branch whose pattern the value matches ("" when none does)."""
    for item in (c for c in node.children() if c.kind() == "case_item"):
        patterns, body = [], []
        closed = False
        for part in item.children():
            if not closed and part.kind() == ")":
                closed = True
            elif not closed and part.is_named():
                patterns.append(part.text())
            elif closed and part.is_named():
                body.append(part)
        if any(_matches(value, p) for p in patterns):
            if not body:
                return ""
            return script[body[0].range().start.index : body[-1].range().end.index]
    return ""


def _matches(value: str, pattern: str) -> bool:
    if len(pattern) >= 2 and pattern[0] == pattern[-1] and pattern[0] in "\"'":
        return value == pattern[1:-1]
    return fnmatch.fnmatchcase(value, pattern)
