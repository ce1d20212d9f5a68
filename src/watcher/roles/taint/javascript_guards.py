"""Conditions that validate a JavaScript/TypeScript value: what a test proves on the arm where it holds.

Whole-value checks clear a value for every class: membership in a list or set of our own
(``ALLOWED.includes(v)``, ``SET.has(v)``, ``LIST.indexOf(v) !== -1``, ``v in MAP``), equality with
a constant or a clean value, an anchored regex without wildcards (``/^[a-z]+$/.test(v)``),
validators (``validator.isUUID(v)``, ``isValid…``; a check of this file counts unless it looks
at substrings of its input). ``typeof v === "string"`` clears only the operator objects of a
NoSQL filter; the host or origin of a parsed URL compared clears the URL for redirects; a
resolved path checked with ``startsWith`` against its base clears it for paths. A substring test
on a raw value (``url.includes("example.com")``) proves nothing. ``!``, ``&&`` and ``||`` are
combined by the engine.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from watcher.roles.taint.spec import Refinement, Site
from watcher.roles.taint.values import NO_CONST

if TYPE_CHECKING:
    from ast_grep_py import SgNode

__all__ = ["anchored", "dotted", "guard"]

_ALL = frozenset({"*"})
_URL_PARTS = frozenset({"hostname", "host", "origin", "href"})
_VALIDATOR = re.compile(r"^(?:is[A-Z0-9_]\w*|validate\w*|verify\w*|check\w*|assert\w*)$")
_SUBSTRING = ("includes", "startsWith", "endsWith", "indexOf", "search", "match", "lastIndexOf")


def dotted(node: SgNode | None) -> str:
    """``a.b.c`` (``a["b"]`` too) for a chain of names, else ""."""
    if node is None:
        return ""
    kind = node.kind()
    if kind in ("identifier", "this", "shorthand_property_identifier"):
        return node.text()
    if kind in ("non_null_expression", "parenthesized_expression", "as_expression"):
        inner = node.named_children()
        return dotted(inner[0]) if inner else ""
    if kind == "member_expression":
        base, prop = dotted(node.field("object")), node.field("property")
        return f"{base}.{prop.text()}" if base and prop is not None else ""
    if kind == "subscript_expression":
        base, index = dotted(node.field("object")), node.field("index")
        if base and index is not None and index.kind() in ("string", "number"):
            return f"{base}.{index.text().strip(chr(39) + chr(34))}"
    return ""


def anchored(regex: SgNode | None) -> bool:
    """A regex literal that matches whole values only and excludes wildcard characters."""
    text = regex.text() if regex is not None and regex.kind() == "regex" else ""
    pattern = text[1 : text.rfind("/")] if text else ""
    if not (pattern.startswith("^") and pattern.endswith("$") and not pattern.endswith("\\$")):
        return False
    outside = re.sub(r"\[(?:\\.|[^\]])*\]", "", pattern)
    return not re.search(r"(?<!\\)\.|\\S|\\W|(?<!\\)\|", outside)


class Facts(Protocol):
    """What the file declares that guards need: regex constants, parsed URLs, its own functions."""

    @property
    def regexes(self) -> Mapping[str, SgNode]: ...

    @property
    def url_of(self) -> Mapping[str, SgNode]:
        """u → the value ``new URL(value)`` parsed into u."""

    @property
    def functions(self) -> Mapping[str, SgNode]: ...


def _clear(node: SgNode, classes: frozenset[str], when: bool, facts: Facts) -> list[Refinement]:
    name = dotted(node)
    if not name:
        return []
    out = [Refinement(name, classes, when, node)]
    base, _, part = name.rpartition(".")
    if part in _URL_PARTS and base in facts.url_of:  # new URL(v).host === …: v and u are fine for redirects
        parsed = facts.url_of[base]
        if dotted(parsed):
            out.append(Refinement(dotted(parsed), frozenset({"redirect"}), when, parsed))
        out.append(Refinement(base, frozenset({"redirect"}), when))
    return out


def _index_of(node: SgNode) -> bool:
    callee = node.field("function") if node.kind() == "call_expression" else None
    return callee is not None and callee.kind() == "member_expression" and callee.text().endswith(".indexOf")


def guard(cond: SgNode, site: Site, facts: Facts) -> list[Refinement]:
    """What ``cond`` proves (see the module docstring)."""
    kind = cond.kind()
    if kind == "call_expression":
        return _validated(cond, site, facts, True)
    if kind != "binary_expression":
        return []
    op, left, right = cond.field("operator"), cond.field("left"), cond.field("right")
    text = op.text() if op is not None else ""
    if left is None or right is None:
        return []
    if text in ("===", "==", "!==", "!="):
        return _equal(left, right, site, facts, text in ("===", "=="))
    if text in (">", ">=") and _index_of(left):
        return _validated(left, site, facts, True)
    if text == "in":
        return _clear(left, _ALL, True, facts)
    return []


def _equal(left: SgNode, right: SgNode, site: Site, facts: Facts, when: bool) -> list[Refinement]:
    for a, b in ((left, right), (right, left)):
        if a.kind() == "unary_expression" and a.text().startswith("typeof") and b.kind() == "string":
            arg = a.field("argument")
            kinds = frozenset({"object"}) if b.text()[1:-1] == "string" else _ALL
            return _clear(arg, kinds, when, facts) if arg is not None else []
        if _index_of(a) and site.constant(b) == -1:
            return _validated(a, site, facts, not when)
    for a, b in ((left, right), (right, left)):
        if site.constant(b) is not NO_CONST or (not site.value(b).all_origins() and site.value(a).all_origins()):
            return _clear(a, _ALL, when, facts)
    return []


def _validated(call: SgNode, site: Site, facts: Facts, when: bool) -> list[Refinement]:
    callee, args = call.field("function"), call.field("arguments")
    values = [a for a in args.named_children() if a.kind() != "comment"] if args is not None else []
    if callee is None:
        return []
    member = callee.kind() == "member_expression"
    prop = callee.field("property") if member else None
    name = prop.text() if prop is not None else callee.text()
    receiver = callee.field("object") if member else None
    if name == "test" and receiver is not None and values and _regex(receiver, facts):
        return _clear(values[0], _ALL, when, facts)
    if name == "match" and receiver is not None and values and _regex(values[0], facts):
        return _clear(receiver, _ALL, when, facts)
    if name in ("includes", "has", "hasOwnProperty", "indexOf") and receiver is not None and values:
        if dotted(receiver) != dotted(values[0]) and not site.value(receiver).all_origins():
            return _clear(values[0], _ALL, when, facts)
        return []
    if name == "startsWith" and receiver is not None and "resolved" in site.value(receiver).tags:
        return _clear(receiver, frozenset({"path"}), when, facts)  # a resolved path checked against its base
    if _VALIDATOR.match(name) and values and _trusted(name, facts):
        return _clear(values[0], _ALL, when, facts)
    return []


def _regex(node: SgNode, facts: Facts) -> bool:
    if node.kind() == "identifier" and node.text() in facts.regexes:
        node = facts.regexes[node.text()]
    return anchored(node)


def _trusted(name: str, facts: Facts) -> bool:
    """A check of this file counts unless it looks at parts of its input (substring tests)."""
    fn = facts.functions.get(name)
    params = fn.field("parameters") if fn is not None else None
    first = next((p for p in params.named_children() if p.kind() != "comment"), None) if params is not None else None
    if fn is None or first is None:
        return True
    pname = dotted(first.field("pattern") if first.kind().endswith("parameter") else first)
    body = fn.field("body")
    text = body.text() if body is not None else ""
    return not (pname and re.search(rf"\b{re.escape(pname)}\s*\.\s*(?:{'|'.join(_SUBSTRING)})\s*\(", text))
