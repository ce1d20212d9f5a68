"""Constant folding and literal text of JavaScript/TypeScript expressions, over ast-grep nodes.

``fold`` gives the value of an expression made of literals, names constant on the path and
arithmetic or comparisons of them (``7 * 42 - n > 200`` with ``n = 86``), or ``UNKNOWN``; the
walk uses it to select the branch a constant condition takes. ``literal`` gives the literal text
a string is built around, the values left out, which tells SQL or HTML from other strings.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["UNKNOWN", "fold", "literal", "named"]

UNKNOWN: Any = object()  # a value constant folding cannot decide
_ARITH: dict[str, Any] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
    "%": lambda a, b: a % b, "**": lambda a, b: a**b, "==": lambda a, b: a == b, "===": lambda a, b: a == b,
    "!=": lambda a, b: a != b, "!==": lambda a, b: a != b, "<": lambda a, b: a < b, ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b,
}  # fmt: skip


@functools.lru_cache(maxsize=8192)
def named(node: Any) -> list[Any]:
    """The named children of a node, comments left out (cached: the walk revisits functions)."""
    return [c for c in node.children() if c.is_named() and c.kind() != "comment"]


def fold(node: Any, consts: dict[str, Any]) -> Any:
    """The constant value of ``node`` (literals, constant names, arithmetic), or UNKNOWN."""
    if node is None:
        return UNKNOWN
    kind = node.kind()
    if kind == "number":
        try:
            return float(node.text().replace("_", ""))
        except ValueError:
            return UNKNOWN
    if kind == "string":
        return node.text()[1:-1]
    if kind in ("true", "false"):
        return kind == "true"
    if kind in ("null", "undefined"):
        return None
    if kind == "template_string" and not any(c.kind() == "template_substitution" for c in node.children()):
        return node.text()[1:-1]
    if kind == "identifier":
        return consts.get(node.text(), UNKNOWN) if node.text() != "undefined" else None
    if kind in ("parenthesized_expression", "as_expression", "non_null_expression"):
        inner = named(node)
        return fold(inner[0], consts) if inner else UNKNOWN
    if kind == "unary_expression":
        op, value = node.field("operator"), fold(node.field("argument"), consts)
        if value is UNKNOWN or op is None:
            return UNKNOWN
        if op.text() == "!":
            return not value
        if op.text() in ("-", "+") and isinstance(value, float):
            return -value if op.text() == "-" else value
        return UNKNOWN
    if kind == "binary_expression":
        op = node.field("operator")
        left = fold(node.field("left"), consts)
        if op is None or left is UNKNOWN:
            return UNKNOWN
        if op.text() in ("&&", "||", "??"):
            decided = {"&&": not left, "||": bool(left), "??": left is not None}[op.text()]
            return left if decided else fold(node.field("right"), consts)
        right = fold(node.field("right"), consts)
        if right is UNKNOWN or op.text() not in _ARITH:
            return UNKNOWN
        try:
            return _ARITH[op.text()](left, right)
        except (TypeError, ZeroDivisionError, OverflowError):
            return UNKNOWN
    if kind == "ternary_expression":
        cond = fold(node.field("condition"), consts)
        if cond is UNKNOWN:
            return UNKNOWN
        return fold(node.field("consequence" if cond else "alternative"), consts)
    return UNKNOWN


def literal(node: Any, consts: dict[str, Any]) -> str:
    """The literal text a string expression is built around (values left out): tells SQL from prose."""
    kind = node.kind() if node is not None else ""
    if kind == "string":
        return str(node.text()[1:-1])
    if kind == "template_string":
        return " ".join(c.text() for c in named(node) if c.kind() == "string_fragment")
    if kind == "binary_expression":
        return f"{literal(node.field('left'), consts)} {literal(node.field('right'), consts)}".strip()
    if kind == "identifier":
        value = consts.get(node.text())
        return value if isinstance(value, str) else ""
    if kind in ("parenthesized_expression", "as_expression", "non_null_expression"):
        inner = named(node)
        return literal(inner[0], consts) if inner else ""
    return ""
