"""Constant folding: the result of an operator on constants, when it is cheap and certain.

Only plain values (numbers, strings, bytes, booleans, None, tuples and lists of them) are
folded, and results that would be huge (``"a" * 10**9``) are not: folding is there to decide
conditions such as ``7 * 42 - num > 200`` and to tell a constant string from a built one.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from watcher.roles.taint.values import NO_CONST

__all__ = ["binary", "compare", "method", "plain", "truth"]

_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "<<": operator.lshift,
    ">>": operator.rshift,
}
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "===": operator.eq,
    "!=": operator.ne,
    "!==": operator.ne,
    "<>": operator.ne,
    "in": lambda a, b: a in b,
    "not in": lambda a, b: a not in b,
    "is": lambda a, b: a is b if a is None or b is None else a == b,
    "is not": lambda a, b: a is not b if a is None or b is None else a != b,
}
# methods of str/bytes/list/tuple/dict that return a value and change nothing
_PURE = frozenset(
    [
        "upper",
        "lower",
        "strip",
        "lstrip",
        "rstrip",
        "replace",
        "split",
        "rsplit",
        "join",
        "format",
        "encode",
        "decode",
        "startswith",
        "endswith",
        "title",
        "capitalize",
        "casefold",
        "center",
        "ljust",
        "rjust",
        "zfill",
        "count",
        "find",
        "rfind",
        "index",
        "rindex",
        "isdigit",
        "isalpha",
        "isalnum",
        "isdecimal",
        "isnumeric",
        "isspace",
        "isupper",
        "islower",
        "partition",
        "rpartition",
        "removeprefix",
        "removesuffix",
        "swapcase",
        "splitlines",
        "expandtabs",
        "get",
        "keys",
        "values",
        "items",
        "copy",
        "hex",
    ]
)
_MAX = 100_000


def plain(value: Any) -> bool:
    """Whether ``value`` is a constant the folder works with."""
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return True
    if isinstance(value, (tuple, list, frozenset, set)):
        return len(value) <= 1000 and all(plain(v) for v in value)
    if isinstance(value, dict):
        return len(value) <= 1000 and all(plain(k) and plain(v) for k, v in value.items())
    return False


def _small(value: Any) -> Any:
    if isinstance(value, (str, bytes, tuple, list)) and len(value) > _MAX:
        return NO_CONST
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4096:
        return NO_CONST
    return value if plain(value) else NO_CONST


def binary(op: str, left: Any, right: Any) -> Any:
    """``left op right``, or ``NO_CONST``."""
    fn = _BINARY.get(op)
    if fn is None or left is NO_CONST or right is NO_CONST:
        return NO_CONST
    if op == "**" and isinstance(right, (int, float)) and abs(right) > 64:
        return NO_CONST
    if op == "*" and isinstance(right, int) and abs(right) > _MAX:
        return NO_CONST
    if op in ("<<",) and isinstance(right, int) and right > 4096:
        return NO_CONST
    try:
        return _small(fn(left, right))
    except Exception:  # noqa: BLE001 - 1/0, "a" - 1: not a constant we know
        return NO_CONST


def compare(op: str, left: Any, right: Any) -> Any:
    """``left op right`` for a comparison, or ``NO_CONST``."""
    fn = _COMPARE.get(" ".join(op.split()))
    if fn is None or left is NO_CONST or right is NO_CONST:
        return NO_CONST
    try:
        return bool(fn(left, right))
    except Exception:  # noqa: BLE001 - "a" < 1
        return NO_CONST


def truth(value: Any) -> Any:
    """``bool(value)`` for a constant, or ``NO_CONST``."""
    if value is NO_CONST:
        return NO_CONST
    try:
        return bool(value)
    except Exception:  # noqa: BLE001
        return NO_CONST


def method(receiver: Any, name: str, args: list[Any]) -> Any:
    """``receiver.name(*args)`` for a pure method of a plain constant, or ``NO_CONST``."""
    if name not in _PURE or receiver is NO_CONST or any(a is NO_CONST for a in args) or not plain(receiver):
        return NO_CONST
    try:
        result = getattr(receiver, name)(*args)
    except Exception:  # noqa: BLE001 - wrong arguments: not a constant we know
        return NO_CONST
    if isinstance(result, dict) or type(result).__name__ in ("dict_keys", "dict_values", "dict_items"):
        result = list(result) if not isinstance(result, dict) else result
    return _small(result)
