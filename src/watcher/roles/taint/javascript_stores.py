"""JavaScript/TypeScript sinks that look inside their values: responses, MongoDB filters, stores, JSX.

A response method sends HTML (``res.send``), redirects (``res.redirect`` to a target whose
constant start does not fix the site), sets a ``Location`` header or sends a file by a path. A
MongoDB filter or update is an object: an object from the request in it (a whole filter, or a
field's value) carries operators; a string value never does, and a field's new value in an
update is stored, not interpreted. Stores: ``el.innerHTML =``, ``location.href =``, Koa's
``ctx.body =`` of markup, and React's ``dangerouslySetInnerHTML={{__html: …}}``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from watcher.roles.taint.sinks import SINKS
from watcher.roles.taint.spec import Call, Sink, Site
from watcher.roles.taint.values import NO_CONST, Origin, Value

if TYPE_CHECKING:
    from ast_grep_py import SgNode

__all__ = ["JS_SINKS", "nosql", "response", "store_sinks"]

_JS_FIX = {
    "command": "Run a fixed program with `execFile`/`spawn` and pass the value as one argument of the array "
    "(no `shell: true`)",
    "sql": "Use placeholders and pass the values separately (`?`/`$1` with a parameter array, "
    "`replacements`/`bind` in Sequelize)",
    "code": "Parse data with JSON.parse or choose a function from a fixed table instead of evaluating text",
    "path": "Keep `path.basename()` of it, or resolve it under a base directory and refuse a result outside "
    "it (or pass `root`)",
    "xss": "Escape it for HTML (a template engine that escapes, `escape-html`, DOMPurify) or set text "
    "(`textContent`, JSON)",
    "redirect": "Compare the whole target with an allow-list (or only accept a local path), not with "
    "`includes`/`startsWith`",
}
JS_SINKS: dict[str, Sink] = {
    **{name: Sink(name, SINKS[name].cwe, SINKS[name].title, fix) for name, fix in _JS_FIX.items()},
    "nosql": Sink(
        "nosql",
        943,
        "NoSQL injection",
        "Cast the value (`String(x)`), check `typeof x === 'string'`, or sanitize it (mongo-sanitize)",
    ),
}

_MONGO_FILTER = frozenset(
    {
        "find", "findOne", "findOneAndUpdate", "findOneAndDelete", "findOneAndRemove", "findOneAndReplace",
        "updateOne", "updateMany", "update", "deleteOne", "deleteMany", "remove", "countDocuments", "count",
        "exists", "replaceOne", "where",
    }
)  # fmt: skip
_MONGO_UPDATE = frozenset({"findOneAndUpdate", "updateOne", "updateMany", "update", "findByIdAndUpdate"})
_HTML_PROPS = frozenset({"innerHTML", "outerHTML"})
_LOCATIONS = frozenset({"location", "location.href", "window.location", "window.location.href", "document.location"})


def _sink(name: str) -> Sink:
    return JS_SINKS[name]


def as_operators(value: Value) -> Value:
    """``value`` as a filter reads it: only data that may be an object (not a string) carries operators."""
    return Value(
        origins=frozenset(
            Origin(o.label, o.name, o.line, o.via, o.cleared | {"nosql"}) if o.safe_for("object") else o
            for o in value.all_origins()
        )
    )


def nosql(call: Call, name: str) -> None:
    """A MongoDB filter (or update) that is, or holds under a field, an object from the request."""
    if name not in _MONGO_FILTER and name not in _MONGO_UPDATE:
        return
    at = 1 if name == "findByIdAndUpdate" else 0
    if name != "findByIdAndUpdate" and call.args:
        _operators(call.site, name, call.arg_nodes[0], call.args[0], update=False)
    if name in _MONGO_UPDATE and len(call.args) > at + 1:
        _operators(call.site, name, call.arg_nodes[at + 1], call.args[at + 1], update=True)


def _operators(site: Site, name: str, node: SgNode, value: Value, *, update: bool) -> None:
    kind = node.kind()
    if kind in ("arrow_function", "function_expression", "string", "number"):
        return
    if kind != "object":
        site.report(_sink("nosql"), as_operators(value), f"{name}()")
        return
    for child in node.named_children():
        if child.kind() == "pair":
            key_node, inner = child.field("key"), child.field("value")
            key = key_node.text().strip("'\"") if key_node is not None else ""
        elif child.kind() == "shorthand_property_identifier":
            key, inner = child.text(), child
        else:
            continue
        member = value.part(key) if value.parts is not None else Value(origins=value.all_origins())
        if key == "$where":
            site.report(_sink("nosql"), member, f"{name}() with $where")
        elif update and (not key.startswith("$") or (inner is not None and inner.kind() == "object")):
            continue  # a field's new value: stored, not interpreted
        elif inner is not None and inner.kind() == "object" and key != "$eq":
            _operators(site, name, inner, member, update=False)
        elif key != "$eq":
            site.report(_sink("nosql"), as_operators(member), f"{name}()")


def _local_target(node: SgNode | None, site: Site) -> bool:
    """A target whose constant start fixes the site: ``/path?x=…`` or ``https://host/…``."""
    while node is not None and node.kind() == "binary_expression":
        node = node.field("left")
    if node is None:
        return False
    if node.kind() == "template_string":
        first = next((c for c in node.children() if c.is_named()), None)
        head = first.text() if first is not None and first.kind() == "string_fragment" else ""
    else:
        value = site.constant(node)
        head = value if isinstance(value, str) and value is not NO_CONST else ""
    return bool(re.match(r"/[^/\\]|https?://[^/]+/", head))


def response(call: Call, name: str) -> None:
    """``res.redirect``, ``res.set('Location', …)``, ``res.sendFile``, ``res.send`` of HTML."""
    site, nodes, args = call.site, call.arg_nodes, call.args
    if not args:
        return
    if name in ("redirect", "location"):
        if not _local_target(nodes[-1], site):
            site.report(_sink("redirect"), args[-1], f"res.{name}()")
    elif name in ("setHeader", "set", "header", "writeHead") and len(args) >= 2:
        if nodes[0].kind() == "string" and nodes[0].text()[1:-1].lower() == "location":
            site.report(_sink("redirect"), args[1], f"res.{name}('Location')")
        elif nodes[-1].kind() == "object" and args[-1].parts:
            for key in ("Location", "location"):
                if key in args[-1].parts:
                    site.report(_sink("redirect"), args[-1].parts[key], f"res.{name}() Location")
    elif name in ("sendFile", "download", "sendfile", "attachment"):
        if not any(n.kind() == "object" and re.search(r"\broot\s*:", n.text()) for n in nodes[1:]):
            site.report(_sink("path"), args[0], f"res.{name}()")
    elif name in ("send", "write", "end") and nodes[0].kind() not in ("object", "array"):
        html = "text:html" in args[0].tags
        callee = site.node.field("function")
        reply = callee is not None and callee.text().startswith("reply")
        if html or (name == "send" and not reply):
            site.report(_sink("xss"), args[0], f"res.{name}()")


def store_sinks(target: str, key: Any, value: Value, site: Site) -> None:
    """``el.innerHTML = v``, ``location.href = v``, ``ctx.body = html``, ``dangerouslySetInnerHTML``."""
    if target == "jsx_attribute":
        if key == "dangerouslySetInnerHTML":
            html = value.part("__html") if value.parts is not None else value
            constant = html.constant or not html.all_origins()
            site.report(_sink("xss"), html, "dangerouslySetInnerHTML", ("input",) if constant else ("input", "unknown"))
        return
    if not isinstance(key, str):
        return
    full = f"{target}.{key}" if target else key
    if key in _HTML_PROPS and target:
        site.report(_sink("xss"), value, f".{key} =")
    elif full in _LOCATIONS:
        site.report(_sink("redirect"), value, f"{full} =")
    elif full in ("ctx.body", "this.body") and "text:html" in value.tags:
        site.report(_sink("xss"), value, "ctx.body =")
