"""What a JavaScript/TypeScript call returns, for the taint engine: sources, casts, sanitisers, carriers.

A cast to a number, a hash or an id parser ends every flow; a sanitiser ends the classes it
protects (``escapeHtml`` HTML, ``path.basename`` paths, ``shell-quote`` commands, ``String()``
operator objects in a NoSQL filter); a string method on a value keeps its data (a string now);
``path``/``util``/``Buffer``/``JSON`` functions and functions of other files carry their
arguments' data; a method of an object of our own given a value (``names.slice(a, b)``,
``db.find(…)``) returns data of our own. express-validator chains (``body("email").isEmail()``)
leave the request field they check validated for the rest of the path.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from watcher.roles.taint.javascript_sinks import owner_of
from watcher.roles.taint.javascript_sources import call_source
from watcher.roles.taint.spec import Call
from watcher.roles.taint.values import Origin, Value, union

if TYPE_CHECKING:
    from ast_grep_py import SgNode

__all__ = ["call_value", "validator_chain"]

_ALL = frozenset({"*"})
_OBJECT = frozenset({"object"})
_CASTS = frozenset(
    {"parseInt", "parseFloat", "Number", "Boolean", "isNaN", "isFinite", "BigInt", "ObjectId", "ObjectID", "uuid"}
)
_CLEAN_OWNERS = frozenset({"Math", "Number", "Date", "crypto", "bcrypt", "argon2", "uuid", "Types", "Array"})
_BOOLEANS = frozenset(
    {
        "includes", "startsWith", "endsWith", "indexOf", "lastIndexOf", "test", "has", "some", "every",
        "search", "localeCompare", "isValid", "hasOwnProperty", "isArray", "charCodeAt", "codePointAt",
    }
)  # fmt: skip
_STRING_METHODS = frozenset(
    {
        "trim", "trimStart", "trimEnd", "toLowerCase", "toUpperCase", "toLocaleLowerCase", "toLocaleUpperCase",
        "slice", "substring", "substr", "replace", "replaceAll", "split", "padStart", "padEnd", "normalize",
        "toString", "charAt", "at", "repeat", "concat",
    }
)  # fmt: skip
_CARRIERS = frozenset(
    {"path", "util", "Buffer", "JSON", "querystring", "qs", "url", "Object", "String", "_", "lodash", "Array"}
)
_CONSTRUCTED = frozenset({"URL", "URLSearchParams", "String", "Buffer", "Array", "Set", "Map"})
# sanitisers by name (lower case, owner.name or name) and the sink classes each ends
_SANITIZERS: list[tuple[re.Pattern[str], frozenset[str]]] = [
    (re.compile(r"(?:^|\.)(?:md5|sha\d*|hash\w*|createhash|digest|hmac|bcrypt\w*|argon2\w*|scrypt\w*)$"), _ALL),
    (re.compile(r"shell.?(?:escape|quote)|escapeshell|(?:^|\.)quote$"), frozenset({"command", "object"})),
    (re.compile(r"(?:^|\.)basename$|sanitize.?filename"), frozenset({"path", "object"})),
    (
        re.compile(r"encodeuri(?:component)?$|querystring\.escape$"),
        frozenset({"command", "path", "xss", "redirect", "nosql", "object"}),
    ),
    (re.compile(r"mongo.?sanitize|(?:^|\.)sanitize$"), frozenset({"object", "xss", "path", "nosql"})),
    (re.compile(r"escape|encode|sanitiz|purif|xss|entities"), frozenset({"xss", "sql", "nosql", "object"})),
]
_PATHS = frozenset({"resolve", "join", "normalize", "relative"})
_META = {
    "command": ";|&$`<> \n",
    "sql": "'\"\\-;",
    "path": "./\\",
    "xss": "<>\"'&",
    "redirect": "/:\\",
    "code": "();'\"`",
    "nosql": "'\";$",
}
_CHECKERS = frozenset({"check", "body", "query", "param", "cookie", "header", "checkBody", "checkQuery"})
_WHOLE_CHECKS = frozenset(
    {"isInt", "isNumeric", "isUUID", "isMongoId", "isAlphanumeric", "isIn", "isBoolean", "toInt", "toFloat", "isAlpha"}
)


@functools.lru_cache(maxsize=4096)
def _sanitises(name: str, owner: str) -> frozenset[str]:
    full = f"{owner}.{name}".lower() if owner else name.lower()
    if name in _CASTS or owner in _CLEAN_OWNERS:
        return _ALL
    return next((kinds for pattern, kinds in _SANITIZERS if pattern.search(full)), frozenset())


def _kept_only(nodes: tuple[SgNode, ...]) -> frozenset[str]:
    """``s.replace(/[^a-z0-9]/gi, '')``: the classes a global replace keeping only some characters protects."""
    if len(nodes) < 2 or nodes[0].kind() != "regex" or nodes[1].kind() != "string" or nodes[1].text()[1:-1]:
        return frozenset()
    text = nodes[0].text()
    body, flags = text[1 : text.rfind("/")], text[text.rfind("/") + 1 :]
    match = re.fullmatch(r"\[\^((?:\\.|[^\]])*)\][+*]?", body)
    if match is None or "g" not in flags:
        return frozenset()
    kept = match.group(1).replace("\\w", "").replace("\\d", "")
    if "\\s" in kept:
        kept += " \n"
    return frozenset(k for k, chars in _META.items() if not any(c in kept for c in chars)) | _OBJECT


def _carries(value: Value) -> bool:
    return bool(value.all_origins())


def call_value(call: Call, describe: Callable[[str], frozenset[str]]) -> Value:
    """The value ``call`` returns (see the module docstring); ``describe`` tags literal text."""
    site, name, owner, receiver = call.site, call.method, owner_of(call), call.receiver
    source = call_source(name, owner, site, receiver)
    if source is not None:
        return source
    arguments = union(call.args)
    callee = site.node.field("function")
    if site.node.kind() == "new_expression":
        return union([arguments, receiver or Value()]) if name in _CONSTRUCTED else Value()
    if name == "require" and not owner:
        return Value()
    if re.match(r"[\w.]+\.(?:compile|compileFile|template)\(", site.node.text()):
        return Value(tags=frozenset({"text:renderer"}))  # a compiled template: what it renders is escaped
    if callee is not None and callee.kind() == "identifier" and "text:renderer" in site.value(callee).tags:
        return Value()
    kinds = _sanitises(name, owner)
    if name in ("replace", "replaceAll") and receiver is not None:
        kinds = kinds | _kept_only(call.arg_nodes)
    if kinds:
        base = receiver if receiver is not None and _carries(receiver) and not _carries(arguments) else arguments
        return base.cleared(kinds)
    if owner == "JSON" and name == "parse":
        return Value(
            origins=frozenset(Origin(o.label, o.name, o.line, o.via, o.cleared - _OBJECT) for o in arguments.origins)
        )
    if (owner == "JSON" and name == "stringify") or (name == "String" and not owner):
        return arguments.cleared(_OBJECT)
    if receiver is not None and _carries(receiver):
        if name in _BOOLEANS:
            return Value()
        if name in _STRING_METHODS:
            return union([receiver.flat(), arguments if name == "concat" else Value()]).cleared(_OBJECT)
        return receiver.flat()
    if _carries(arguments) and (name == "concat" or owner in _CARRIERS or owner.rsplit(".", 1)[-1] in _CARRIERS):
        if name in _BOOLEANS:
            return Value()
        literals = [a.const for a in (*call.args, receiver or Value()) if isinstance(a.const, str)]
        tags = describe(" ".join(literals)) if literals else frozenset()
        if owner == "path" and name in _PATHS:
            tags = tags | {"resolved"}
        return Value(origins=arguments.origins, tags=arguments.tags | tags)
    if callee is not None and callee.kind() == "identifier":
        return arguments  # a function this file does not define: its result carries its input
    return Value()


def validator_chain(call: Call) -> None:
    """express-validator: ``body("email").isEmail()`` leaves ``req.body.email`` a checked string."""
    name = call.method
    if not (name.startswith("is") or name in ("matches", "toInt", "toFloat", "toBoolean")):
        return
    node: SgNode | None = call.site.node
    while node is not None and node.kind() == "call_expression":
        callee = node.field("function")
        if callee is None or callee.kind() == "identifier":
            break
        node = callee.field("object") if callee.kind() == "member_expression" else None
    callee = node.field("function") if node is not None and node.kind() == "call_expression" else None
    if node is None or callee is None or callee.text() not in _CHECKERS:
        return
    args = [a for a in (node.field("arguments") or node).named_children() if a.kind() != "comment"]
    if not args or args[0].kind() != "string":
        return
    field = args[0].text()[1:-1]
    kinds = _ALL if name in _WHOLE_CHECKS else _OBJECT
    for where in ("body", "query", "params", "cookies"):
        value = call.site.source("input", f"the `{field}` request field (`req.{where}.{field}`)")
        call.site.bind(f"req.{where}.{field}", value.cleared(kinds))
