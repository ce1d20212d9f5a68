"""Which sink classes a validating regular expression makes safe: the characters it can let through.

A pattern validates only when it is anchored at both ends (or used with ``fullmatch``) and has no
wildcard (``.``, ``\\S``, ``\\W``, ``\\D``, a negated class): then the characters it admits are
known, and a sink class is safe when none of its metacharacters is among them.
"""

from __future__ import annotations

import string

__all__ = ["META", "admitted", "safe_classes"]

META: dict[str, str] = {
    "command": ";&|$`<>\n\r(){}*?!\\'\"",
    "sql": "'\";\\ =-#*/()",
    "code": "()[]{}.;=+-*/%<>!&|^~@:,\\\n`",
    "path": "/\\.",
    "xss": "<>\"'&`",
    "redirect": "/\\:.@",
    "ldap": "*()\\\x00|&=!<>~",
    "xpath": "'\"[]()/=@*|:<>",
    "nosql": "$.{}[]'\"\\",
    "trust-boundary": "",
    "header": "\r\n",
}
_CLASSES = {"w": string.ascii_letters + string.digits + "_", "d": string.digits, "s": " \t\n\r\f\v"}
_SYNTAX = set("()|?*+{},")  # outside a class, quantifiers and groups admit no character themselves


def admitted(pattern: str, whole: bool) -> set[str] | None:
    """The characters ``pattern`` admits, or None when it admits anything (or is not anchored)."""
    body = pattern
    starts = body.startswith("^") or body.startswith("\\A")
    ends = body.endswith("$") or body.endswith("\\Z") or body.endswith("\\z")
    if not whole and not (starts and ends):
        return None
    out: set[str] = set()
    i, n = 0, len(body)
    in_class = False
    previous = ""
    while i < n:
        c = body[i]
        if c == "\\" and i + 1 < n:
            e = body[i + 1]
            i += 2
            if e in "SWDbB" or (e in "AZz" and not in_class):
                if e in "SWD":
                    return None
                continue
            chars = _CLASSES.get(e, "\n" if e == "n" else "\t" if e == "t" else e)
            out.update(chars)
            previous = e if len(chars) == 1 else ""
            continue
        if in_class:
            if c == "]":
                in_class = False
            elif c == "-" and previous and i + 1 < n and body[i + 1] != "]":
                end = body[i + 1]
                if end == "\\" and i + 2 < n:
                    end = body[i + 2]
                    i += 1
                out.update(chr(x) for x in range(ord(previous), ord(end) + 1) if x < 0x110000)
                i += 2
                previous = ""
                continue
            else:
                out.add(c)
                previous = c
            i += 1
            continue
        if c == "[":
            if i + 1 < n and body[i + 1] == "^":
                return None
            in_class = True
            previous = ""
        elif c == ".":
            return None
        elif c in "^$" or c in _SYNTAX:
            if c == "{":  # a repetition count: skip to its end
                close = body.find("}", i)
                i = close if close > 0 else i
        else:
            out.add(c)
        i += 1
    return out


def safe_classes(pattern: str, whole: bool) -> frozenset[str]:
    """The sink classes for which a value matching ``pattern`` (all of it, when ``whole``) is safe."""
    chars = admitted(pattern, whole)
    if chars is None:
        return frozenset()
    return frozenset(name for name, meta in META.items() if not chars & set(meta))
