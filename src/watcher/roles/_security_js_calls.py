"""What a call does to taint in JavaScript/TypeScript: sources, casts, sanitizers, propagation.

A cast to a number, a hash or an id parser ends every flow; a sanitizer ends the classes it
protects (``escapeHtml`` HTML, ``path.basename`` paths, ``shell-quote`` commands, ``String()``
operator objects in a NoSQL filter); a string method on a tainted value keeps it (a string now);
``path``/``util``/``Buffer``/``JSON`` functions and unknown functions carry their arguments' taint;
a method of a clean object given a tainted argument (``names.slice(from, to)``, ``db.find(…)``)
returns data of our own. A function of the same file is followed with the arguments' taints.
Callbacks of ``then``/``subscribe``/``forEach``… receive the taint of what they are called on.
"""

from __future__ import annotations

import re
from typing import Any

from watcher.roles._security_js_guards import Guards
from watcher.roles._security_js_sources import ALL_KINDS, Taint, call_source, sanitized, union
from watcher.roles._security_js_values import dotted, literal, named

__all__ = ["Calls"]

_NONE: frozenset[str] = frozenset()
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
_CALLBACK_CARRIERS = frozenset(
    {"then", "subscribe", "forEach", "map", "filter", "flatMap", "reduce", "find", "pipe", "tap", "on", "once"}
)
# sanitizers by name (lower case, owner.name or name) and the classes each ends
_SANITIZERS: list[tuple[re.Pattern[str], frozenset[str]]] = [
    (re.compile(r"(?:^|\.)(?:md5|sha\d*|hash\w*|createhash|digest|hmac|bcrypt\w*|argon2\w*|scrypt\w*)$"), ALL_KINDS),
    (re.compile(r"shell.?(?:escape|quote)|escapeshell|(?:^|\.)quote$"), frozenset({"cmd", "object"})),
    (re.compile(r"(?:^|\.)basename$|sanitize.?filename"), frozenset({"path", "object"})),
    (re.compile(r"encodeuri(?:component)?$|querystring\.escape$"), ALL_KINDS - {"sql", "code"}),
    (re.compile(r"mongo.?sanitize|(?:^|\.)sanitize$"), frozenset({"object", "xss", "path", "nosql"})),
    (re.compile(r"escape|encode|sanitiz|purif|xss|entities"), frozenset({"xss", "sql", "nosql", "object"})),
]
_SUBSTRING_CHECKS = frozenset({"includes", "startsWith", "indexOf", "endsWith"})
_URL_LITERAL = re.compile(r"https?://[\w.-]+")
_CHECKERS = frozenset({"check", "body", "query", "param", "cookie", "header", "checkBody", "checkQuery"})
_WHOLE_CHECKS = frozenset(
    {"isInt", "isNumeric", "isUUID", "isMongoId", "isAlphanumeric", "isIn", "isBoolean", "toInt", "toFloat", "isAlpha"}
)
_PATHS = frozenset({"resolve", "join", "normalize", "relative"})
_META = {
    "cmd": ";|&$`<> \n",
    "sql": "'\"\\-;",
    "path": "./\\",
    "xss": "<>\"'&",
    "redirect": "/:\\",
    "code": "();'\"`",
    "nosql": "'\";$",
}


def sanitizer_kinds(name: str, owner: str) -> frozenset[str]:
    full = f"{owner}.{name}".lower() if owner else name.lower()
    if name in _CASTS or owner in _CLEAN_OWNERS:
        return ALL_KINDS
    for pattern, kinds in _SANITIZERS:
        if pattern.search(full):
            return kinds
    return _NONE


def _allow_list_replace(args: list[Any]) -> frozenset[str]:
    """``s.replace(/[^a-z0-9]/gi, '')``: what a global replace keeping only some characters protects."""
    if len(args) < 2 or args[0].kind() != "regex" or args[1].kind() != "string" or args[1].text()[1:-1]:
        return _NONE
    text = args[0].text()
    body, flags = text[1 : text.rfind("/")], text[text.rfind("/") + 1 :]
    match = re.fullmatch(r"\[\^((?:\\.|[^\]])*)\][+*]?", body)
    if match is None or "g" not in flags:
        return _NONE
    kept = match.group(1)
    kept = kept.replace("\\w", "").replace("\\d", "")
    if "\\s" in kept:
        kept += " \n"
    return frozenset(k for k, chars in _META.items() if not any(c in kept for c in chars)) | {"object"}


class Calls(Guards):
    """Call expressions and constructors."""

    def call_local(self, name: str, args: list[Taint | None], st: Any) -> tuple[bool, Taint | None]:
        raise NotImplementedError

    def call(self, node: Any, st: Any) -> Taint | None:
        new = node.kind() == "new_expression"
        callee = node.field("constructor" if new else "function")
        args_node = node.field("arguments")
        args = named(args_node) if args_node is not None and args_node.kind() == "arguments" else []
        if callee is None:
            return None
        receiver_node = callee.field("object") if callee.kind() == "member_expression" else None
        receiver = self.ev(receiver_node, st) if receiver_node is not None else None
        if callee.kind() == "member_expression":
            prop = callee.field("property")
            name, owner = (prop.text() if prop is not None else ""), dotted(receiver_node)
        elif callee.kind() == "identifier":
            name, owner = callee.text(), ""
        else:
            self.ev(callee, st)
            name, owner = "", ""
        if args_node is not None and args_node.kind() == "template_string":
            self.sinks.built(args_node, None)  # a tagged template (sql`…`, $queryRaw`…`) binds its values
        functions = [a for a in args if a.kind() in ("arrow_function", "function_expression", "function")]
        taints = [None if a in functions else self.ev(a, st) for a in args]
        if not owner and name in self.setters and taints:  # React: setBody(value)
            state = self.setters[name]
            self.stored[state] = union(self.stored.get(state), taints[0])
        result = self.result(node, name, owner, receiver, args, taints, st)
        for fn in functions:
            if receiver_node is not None and dotted(receiver_node) in self.url_lists:  # ALLOWED.some(u => …)
                self.url_items.update(_parameter_names(fn)[:1])
            given = self.callback_taints(name, args, receiver, result)
            self.function(fn, st, given)
        self.sinks.call(self, node, name, owner, args, taints, receiver, st)
        if name in _SUBSTRING_CHECKS and args and receiver_node is not None and self.url_entry(args[0]):
            self.sinks.substring_allow_list(node, name, receiver_node)
        if name.startswith("is") or name in ("matches", "toInt", "toFloat", "toBoolean"):
            self.validator_chain(node, name, st)
        return result

    def validator_chain(self, node: Any, name: str, st: Any) -> None:
        """express-validator: ``body("email").isEmail()`` leaves ``req.body.email`` a checked string."""
        call = node
        while call is not None and call.kind() == "call_expression":
            callee = call.field("function")
            if callee is None:
                return
            if callee.kind() == "identifier":
                break
            call = callee.field("object") if callee.kind() == "member_expression" else None
        if call is None or call.kind() != "call_expression" or call.field("function").text() not in _CHECKERS:
            return
        args = named(call.field("arguments"))
        if not args or args[0].kind() != "string":
            return
        field = args[0].text()[1:-1]
        line = int(call.range().start.line) + 1
        kinds = ALL_KINDS if name in _WHOLE_CHECKS else frozenset({"object"})
        for where in ("body", "query", "params", "cookies"):
            taint = Taint(f"the `{field}` request field (`req.{where}.{field}`)", line)
            st.vars[f"req.{where}.{field}"] = sanitized(st.vars.get(f"req.{where}.{field}", taint), kinds)

    def url_entry(self, node: Any) -> bool:
        """An entry of a list of URLs: a URL literal, or a name bound to the items of such a list."""
        if node.kind() == "string":
            return bool(_URL_LITERAL.match(node.text()[1:-1]))
        return dotted(node) in self.url_items

    def callback_taints(
        self, name: str, args: list[Any], receiver: Taint | None, result: Taint | None
    ) -> list[Taint | None] | None:
        if name == "addEventListener" and args and args[0].kind() == "string" and args[0].text()[1:-1] == "message":
            line = int(args[0].range().start.line) + 1
            return [Taint("a posted message (`event.data`)", line, ALL_KINDS - {"object"})]
        if name in _CALLBACK_CARRIERS and receiver is not None and receiver.strong:
            return [receiver, None, None]
        if name == "subscribe" and args:  # an Observable of a service: what the API answered
            line = int(args[0].range().start.line) + 1
            return [Taint("an API response (the value `subscribe()` receives)", line, ALL_KINDS - {"object"})]
        return None  # parameters as the function declares them (req, res, plain names)

    def result(
        self, node: Any, name: str, owner: str, receiver: Taint | None, args: list[Any], taints: list[Any], st: Any
    ) -> Taint | None:
        callee = node.field("function")
        receiver_node = callee.field("object") if callee is not None and callee.kind() == "member_expression" else None
        source = call_source(name, owner, node, receiver)
        if source is not None:
            return source
        arguments = union(*taints)
        if node.kind() == "new_expression":
            if name in ("URL", "URLSearchParams", "String", "Buffer", "Array", "Set", "Map"):
                return union(arguments, receiver)
            return None
        if (name == "require" and not owner) or name in self.renderers:
            return None  # a module; or HTML from a compiled template, which escapes what it is given
        followed, value = (False, None)
        callee = node.field("function")
        if callee is not None and (callee.kind() == "identifier" or owner == "this"):
            followed, value = self.call_local(name, taints, st)
        if followed:
            return value
        kinds = sanitizer_kinds(name, owner)
        if name in ("replace", "replaceAll") and receiver is not None:
            kinds = kinds | _allow_list_replace(args)
        if kinds:
            return sanitized(receiver if receiver is not None and not arguments else arguments, kinds)
        if owner == "JSON" and name == "parse" and arguments is not None:
            return arguments.but(kinds=arguments.kinds | {"object"})
        if (owner == "JSON" and name == "stringify") or (name == "String" and not owner):
            return sanitized(arguments, frozenset({"object"}))
        if receiver is not None:
            if name in _BOOLEANS:
                return None
            if name in _STRING_METHODS:
                return sanitized(union(receiver, arguments if name == "concat" else None), frozenset({"object"}))
            return receiver
        if arguments is not None and (name == "concat" or owner in _CARRIERS or owner.rsplit(".", 1)[-1] in _CARRIERS):
            if owner == "path" and name in _PATHS:
                return arguments.but(resolved=True)
            around = [receiver_node] if name == "concat" and receiver_node is not None else args
            text = " ".join(literal(a, st.consts) for a in around)
            return union(arguments, text=text) if name not in _BOOLEANS else None
        callee = node.field("function")
        if callee is not None and callee.kind() == "identifier":
            return arguments  # a function this file does not define: its result carries its input
        return None


def _parameter_names(fn: Any) -> list[str]:
    """The names of a function's simple parameters, in order."""
    single = fn.field("parameter")
    if single is not None:
        return [single.text()]
    params = fn.field("parameters")
    out = []
    for param in named(params) if params is not None else []:
        target = param.field("pattern") if param.kind() in ("required_parameter", "optional_parameter") else param
        out.append(dotted(target))
    return out
