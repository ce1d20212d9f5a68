"""What a condition proves about JavaScript/TypeScript values on the path where it holds.

``refine`` cleans the values a guard validates as whole values: membership in a list or set of
our own (``ALLOWED.includes(v)``, ``SET.has(v)``, ``indexOf(v) !== -1``, ``v in MAP``), equality
with a constant or a clean value, an anchored regex without wildcards, ``typeof v === "string"``
(no operator objects), validators (``validator.isUUID``, ``isValid…``; a check of this file
counts unless it looks at substrings of its input), the host or origin of a parsed URL compared,
and a resolved path checked against its base directory. ``&&``/``||`` combine as logic does:
what both sides prove when either may hold. A substring test on a raw value proves nothing.
"""

from __future__ import annotations

import re
from typing import Any

from watcher.roles._security_js_sources import ALL_KINDS, sanitized
from watcher.roles._security_js_values import UNKNOWN, Values, dotted, fold, named

__all__ = ["Guards", "anchored"]

_URL_PARTS = frozenset({"hostname", "host", "origin", "href"})
_VALIDATOR = re.compile(r"^(?:is[A-Z0-9_]\w*|validate\w*|verify\w*|check\w*|assert\w*)$")
_SUBSTRING = ("includes", "startsWith", "endsWith", "indexOf", "search", "match", "lastIndexOf")


def anchored(regex: Any) -> bool:
    """A regex literal that matches whole values only and excludes wildcard characters."""
    text = regex.text() if regex is not None and regex.kind() == "regex" else ""
    pattern = text[1 : text.rfind("/")] if text else ""
    if not (pattern.startswith("^") and pattern.endswith("$") and not pattern.endswith("\\$")):
        return False
    outside = re.sub(r"\[(?:\\.|[^\]])*\]", "", pattern)
    return not re.search(r"(?<!\\)\.|\\S|\\W|(?<!\\)\|", outside)


class Guards(Values):
    """Guards on top of expression taints."""

    # ------------------------------------------------------------------ guards

    def refine(self, cond: Any, st: Any, truth: bool) -> None:
        """Clean what ``cond`` validates on the path where it is ``truth``."""
        kind = cond.kind()
        if kind == "parenthesized_expression":
            for inner in named(cond):
                self.refine(inner, st, truth)
        elif kind == "unary_expression":
            op, arg = cond.field("operator"), cond.field("argument")
            if op is not None and op.text() == "!" and arg is not None:
                self.refine(arg, st, not truth)
        elif kind == "binary_expression":
            op = cond.field("operator")
            left, right = cond.field("left"), cond.field("right")
            text = op.text() if op is not None else ""
            if left is None or right is None:
                return
            if (text == "&&" and truth) or (text == "||" and not truth):
                self.refine(left, st, truth)
                self.refine(right, st, truth)
            elif text in ("&&", "||"):  # either side may be what holds: clean what both clean
                one, other = st.copy(), st.copy()
                self.refine(left, one, truth)
                self.refine(right, other, truth)
                one.absorb(other)
                st.vars, st.consts = one.vars, one.consts
            elif text in ("===", "=="):
                self.equal(left, right, st, truth)
            elif text in ("!==", "!="):
                self.equal(left, right, st, not truth)
            elif text in (">", ">=") and _index_of(left):
                self.member_of(left, st, truth)
            elif text == "in" and truth:
                self.clean(left, ALL_KINDS, st)
        elif kind == "call_expression":
            self.validated(cond, st, truth)

    def equal(self, left: Any, right: Any, st: Any, truth: bool) -> None:
        for a, b in ((left, right), (right, left)):
            if a.kind() == "unary_expression" and a.text().startswith("typeof") and b.kind() == "string":
                arg = a.field("argument")
                if truth and arg is not None:
                    kinds = frozenset({"object"}) if b.text()[1:-1] == "string" else ALL_KINDS
                    self.clean(arg, kinds, st)
                return
            if _index_of(a) and fold(b, st.consts) == -1:
                self.member_of(a, st, not truth)
                return
        if not truth:
            return
        for a, b in ((left, right), (right, left)):
            if fold(b, st.consts) is not UNKNOWN or (self.ev(b, st) is None and self.ev(a, st) is not None):
                self.clean(a, ALL_KINDS, st)

    def member_of(self, index_call: Any, st: Any, truth: bool) -> None:
        """``LIST.indexOf(v) !== -1``: v is one of the list when it holds."""
        if truth:
            self.validated(index_call, st, True)

    def validated(self, call: Any, st: Any, truth: bool) -> None:
        if not truth:
            return
        callee, args = call.field("function"), call.field("arguments")
        values = named(args) if args is not None else []
        if callee is None:
            return
        name = callee.field("property").text() if callee.kind() == "member_expression" else callee.text()
        receiver = callee.field("object") if callee.kind() == "member_expression" else None
        if name == "test" and receiver is not None and values and self.regex(receiver):
            self.clean(values[0], ALL_KINDS, st)
        elif name == "match" and receiver is not None and values and self.regex(values[0]):
            self.clean(receiver, ALL_KINDS, st)
        elif name in ("includes", "has", "hasOwnProperty", "indexOf") and receiver is not None and values:
            if dotted(receiver) != dotted(values[0]) and self.ev(receiver, st) is None:
                self.clean(values[-1] if name == "call" else values[0], ALL_KINDS, st)
        elif name == "startsWith" and receiver is not None and (taint := self.ev(receiver, st)) is not None:
            if taint.resolved:  # a resolved path checked against its base directory
                self.clean(receiver, frozenset({"path"}), st)
        elif _VALIDATOR.match(name) and values and self.trusted_check(name):
            self.clean(values[0], ALL_KINDS, st)

    def regex(self, node: Any) -> bool:
        if node.kind() == "identifier" and node.text() in self.regexes:
            node = self.regexes[node.text()]
        return anchored(node)

    def trusted_check(self, name: str) -> bool:
        """A check of this file counts unless it looks at parts of its input (substring tests)."""
        fn = self.functions.get(name)
        if fn is None:
            return True
        params = fn.field("parameters")
        first = named(params)[0] if params is not None and named(params) else None
        if first is None:
            return True
        pname = dotted(first.field("pattern") if first.kind().endswith("parameter") else first)
        body = fn.field("body")
        text = body.text() if body is not None else ""
        return not (pname and re.search(rf"\b{re.escape(pname)}\s*\.\s*(?:{'|'.join(_SUBSTRING)})\s*\(", text))

    def clean(self, node: Any, kinds: frozenset[str], st: Any) -> None:
        key = dotted(node)
        if not key:
            return
        current = st.vars[key] if key in st.vars else self.ev(node, st)
        st.vars[key] = sanitized(current, kinds)
        parts = key.rsplit(".", 1)
        if len(parts) == 2 and parts[1] in _URL_PARTS and parts[0] in self.url_of:  # new URL(v).host === …
            origin = self.url_of[parts[0]]
            parsed = dotted(origin)
            current = st.vars[parsed] if parsed in st.vars else self.ev(origin, st)
            st.vars[parsed] = sanitized(current, frozenset({"redirect"}))
            st.vars[parts[0]] = sanitized(st.vars.get(parts[0]), frozenset({"redirect"}))


def _index_of(node: Any) -> bool:
    if node.kind() != "call_expression":
        return False
    callee = node.field("function")
    return callee is not None and callee.kind() == "member_expression" and callee.text().endswith(".indexOf")
