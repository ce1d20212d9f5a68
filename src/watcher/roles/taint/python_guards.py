"""Conditions that validate a Python value: what an ``if`` proves on the arm where it holds.

* allow-lists and equality with constants (``x in ALLOWED``, ``x == "asc"``): clear for every class;
* a regex match that is anchored at both ends (or ``fullmatch``) and admits none of a class's
  metacharacters clears that class (``regex.py``);
* ``x.isdigit()``/``isalnum()``/…, ``isinstance(x, int)``: every class;
* a normalised path (``realpath``/``abspath``/``resolve``) checked with ``startswith``,
  ``is_relative_to`` or ``commonpath`` against a base, and ``".." not in x``: paths;
* ``url_has_allowed_host_and_scheme(x, …)``, and ``urlparse(x).netloc`` compared with constants:
  redirects. ``x.startswith("/")`` on a raw URL is not (``//evil.example`` starts with ``/``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from watcher.roles.taint.regex import safe_classes
from watcher.roles.taint.spec import Refinement, Site
from watcher.roles.taint.values import NO_CONST

if TYPE_CHECKING:
    from ast_grep_py import SgNode

__all__ = ["guard"]

_ALL = frozenset({"*"})
_PREDICATES = frozenset({"isdigit", "isnumeric", "isdecimal", "isalnum", "isalpha", "isidentifier"})
_REGEX = frozenset({"match", "fullmatch", "search"})
_SAFE_URL = frozenset({"url_has_allowed_host_and_scheme", "is_safe_url"})
_URL_PARTS = frozenset({"netloc", "hostname", "scheme"})


def guard(condition: SgNode, site: Site) -> list[Refinement]:
    """What ``condition`` proves (see the module docstring)."""
    kind = condition.kind()
    if kind == "comparison_operator":
        return _comparison(condition, site)
    if kind == "call":
        return _call(condition, site)
    if kind == "identifier":  # ``if m:`` after ``m = re.fullmatch(...)`` is not followed
        return []
    return []


def _comparison(node: SgNode, site: Site) -> list[Refinement]:
    operands = node.named_children()
    ops = " ".join(c.text() for c in node.children() if not c.is_named())
    if len(operands) != 2:
        return []
    left, right = operands
    out: list[Refinement] = []
    positive = ops in ("in", "==", "is")
    negative = ops in ("not in", "!=", "is not")
    if not (positive or negative):
        return out
    # ".." in x / ".." not in x
    if ops in ("in", "not in") and site.constant(left) in ("..", "../", "/..") and _name(right):
        out.append(Refinement(_name(right), frozenset({"path"}), ops == "not in"))
        return out
    for subject, other in ((left, right), (right, left)):
        const = site.constant(other)
        if const is NO_CONST or const is None:
            continue
        if _name(subject):
            out.append(Refinement(_name(subject), _ALL, positive))
        url = _url_part(subject)
        if url:
            out.append(Refinement(url, frozenset({"redirect"}), positive))
        common = _commonpath(subject)
        for name in common:
            out.append(Refinement(name, frozenset({"path"}), positive))
    for subject, other in ((left, right), (right, left)):
        common = _commonpath(subject)
        if common and _name(other):  # commonpath([base, p]) == base
            out.extend(Refinement(name, frozenset({"path"}), positive) for name in common)
    return out


def _call(node: SgNode, site: Site) -> list[Refinement]:
    fn, args = node.field("function"), node.field("arguments")
    if fn is None or args is None:
        return []
    values = [a for a in args.named_children() if a.kind() not in ("keyword_argument", "comment")]
    attr = fn.field("attribute") if fn.kind() == "attribute" else None
    method = attr.text() if attr is not None else fn.text()
    obj = fn.field("object") if fn.kind() == "attribute" else None
    if method in _PREDICATES and obj is not None and _name(obj):
        return [Refinement(_name(obj), _ALL, True)]
    if method == "isinstance" and len(values) == 2 and _name(values[0]):
        if re.fullmatch(
            r"\(?\s*(?:int|float|bool|uuid\.UUID|UUID)(?:\s*,\s*(?:int|float|bool))*\s*\)?", values[1].text()
        ):
            return [Refinement(_name(values[0]), _ALL, True)]
        return []
    if method.rsplit(".", 1)[-1] in _SAFE_URL and values and _name(values[0]):
        return [Refinement(_name(values[0]), frozenset({"redirect"}), True)]
    if method in ("startswith", "is_relative_to") and obj is not None and _name(obj):
        value = site.value(obj)
        if "normalized" in value.tags and values and site.constant(values[0]) != "/":
            return [Refinement(_name(obj), frozenset({"path"}), True)]
        return []
    if method in _REGEX:
        return _regex(method, obj, values, site)
    return []


def _regex(method: str, obj: SgNode | None, values: list[SgNode], site: Site) -> list[Refinement]:
    if obj is not None and obj.text() in ("re", "regex"):  # re.match(pattern, value)
        if len(values) < 2 or not _name(values[1]):
            return []
        pattern, subject = site.constant(values[0]), values[1]
    elif obj is not None:  # compiled.match(value)
        tags = [t for t in site.value(obj).tags if t.startswith("regex:")]
        if not tags or not values or not _name(values[0]):
            return []
        pattern, subject = tags[0][len("regex:") :], values[0]
    else:
        return []
    if not isinstance(pattern, str):
        return []
    if method == "match" and not pattern.startswith("^"):
        pattern = "^" + pattern  # match() is anchored at the start
    classes = safe_classes(pattern, whole=method == "fullmatch")
    return [Refinement(_name(subject), classes, True)] if classes else []


def _name(node: SgNode | None) -> str:
    return node.text() if node is not None and node.kind() == "identifier" else ""


def _url_part(node: SgNode) -> str:
    """``urlparse(x).netloc`` → ``x``."""
    if node.kind() != "attribute":
        return ""
    attr, obj = node.field("attribute"), node.field("object")
    if attr is None or obj is None or attr.text() not in _URL_PARTS or obj.kind() != "call":
        return ""
    args = obj.field("arguments")
    first = args.named_children()[0] if args is not None and args.named_children() else None
    return _name(first) if "urlparse" in (obj.field("function") or obj).text() or "urlsplit" in obj.text() else ""


def _commonpath(node: SgNode) -> list[str]:
    if node.kind() != "call" or "commonpath" not in (node.field("function") or node).text():
        return []
    return [n.text() for n in node.find_all(kind="identifier") if n.text() not in ("os", "path", "commonpath")]
