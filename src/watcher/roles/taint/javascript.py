"""The JavaScript/TypeScript spec: Express, Koa, Fastify, Next.js, NestJS and pages, for the taint engine.

Handler parameters: a parameter named ``req``/``request``/``ctx``/``context`` is the request
(its ``query``, ``body``, ``params``, … are sources), ``res``/``reply``/``next`` are the server's
own, ``({ query, body }, res) =>`` destructures the request, the second parameter of a Next.js
route handler (``export async function GET(request, { params })``) holds the route's parameters,
and NestJS fills ``@Query('q')``, ``@Body()``, ``@Param('id')`` parameters from the request.
Callbacks: ``.then``/``.map``/``.forEach``… of input receive it, ``subscribe`` an API response,
a ``message`` listener a posted message. Sources are in ``javascript_sources.py``, what calls
return in ``javascript_calls.py``, sinks in ``javascript_sinks.py``/``javascript_stores.py`` and
what conditions prove in ``javascript_guards.py``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from watcher.roles._security_sql import is_sql
from watcher.roles.taint import javascript_guards
from watcher.roles.taint.javascript_calls import call_value, validator_chain
from watcher.roles.taint.javascript_facts import FileFacts
from watcher.roles.taint.javascript_grammar import JAVASCRIPT_GRAMMAR
from watcher.roles.taint.javascript_sinks import call_sinks
from watcher.roles.taint.javascript_sources import member_source, request_value
from watcher.roles.taint.javascript_stores import store_sinks
from watcher.roles.taint.spec import Call, Function, Refinement, Site
from watcher.roles.taint.values import FUNCTION, Origin, Value, merge

if TYPE_CHECKING:
    from ast_grep_py import SgNode

__all__ = ["JavaScriptSpec"]

_STRINGS = frozenset({"object"})
_CLEAN_PARAMS = frozenset({"res", "response", "reply", "next"})
_HANDLER_NAMES = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "handler", "loader", "action"})
_CALLBACK_CARRIERS = frozenset(
    {"then", "subscribe", "forEach", "map", "filter", "flatMap", "reduce", "find", "pipe", "tap", "on", "once"}
)
_SUBSTRING_CHECKS = frozenset({"includes", "startsWith", "indexOf", "endsWith"})
_NEST_SOURCES = {
    "Query": ("query parameter", True),
    "Body": ("request body field", True),
    "Param": ("route parameter", False),
    "Headers": ("request header", False),
    "Req": ("request", True),
}
_JS_GLOBALS = frozenset(
    {
        "undefined", "NaN", "Infinity", "JSON", "Math", "Object", "Array", "String", "Number", "Boolean", "Date",
        "console", "process", "require", "module", "exports", "Promise", "Buffer", "Error", "RegExp", "Symbol",
        "Map", "Set", "URL", "URLSearchParams", "window", "document", "globalThis", "__dirname", "__filename",
    }
)  # fmt: skip


class JavaScriptSpec:
    """The ``Spec`` for JavaScript and TypeScript (see the module docstring); one per analysis."""

    grammar = JAVASCRIPT_GRAMMAR
    builtins = _JS_GLOBALS
    exits = frozenset({"process.exit"})
    mutators: Mapping[str, str] = {
        "push": "append", "unshift": "prepend", "pop": "pop", "shift": "shift", "add": "append",
        "set": "put", "delete": "absorb", "clear": "clear",
    }  # fmt: skip
    constructor = "constructor"
    text_clears = frozenset({"object"})  # a template literal is a string: it carries no operator objects

    def __init__(self, modules: frozenset[str] = frozenset()) -> None:
        self.facts = FileFacts()
        self.modules = modules  # names this text binds to the child_process module
        self.notes: list[tuple[int, str, str]] = []  # (line, check, what): a URL allow-list checked by substring

    def imports(self, root: SgNode) -> Mapping[str, str]:
        self.facts.read(root)
        return {name: name for name in self.facts.imported}

    def entry(self, function: Function, name_of: Callable[[SgNode], str]) -> Mapping[str, Value]:
        out: dict[str, Value] = {}
        params = function.node.field("parameters")
        single = function.node.field("parameter")
        listed = [single] if single is not None else [p for p in params.named_children()] if params is not None else []
        route = function.node.kind() == "function_declaration" and function.name in _HANDLER_NAMES
        for i, (param, name) in enumerate(zip(listed, function.parameters, strict=False)):
            target = param.field("pattern") or param
            site = _At(param)
            decorator = next((d for d in param.named_children() if d.kind() == "decorator"), None)
            nest = _decorated(decorator, target, param, site) if decorator is not None else None
            if nest is not None:
                out[name] = nest.through(name)
            elif name in ("req", "request", "ctx", "context"):
                out[name] = request_value(name, site)
            elif name in _CLEAN_PARAMS:
                out[name] = Value()
            elif target.kind() == "object_pattern" and re.search(r"\b(?:query|body|params|cookies|headers)\b", name):
                out[name] = request_value("req", site)  # ({ query }: Request, res) => …
            elif route and i == 1 and target.kind() == "object_pattern":  # Next.js: { params }
                out[name] = site.source("input", f"the route parameters (`{name}`)").cleared(_STRINGS)
        return out

    def call(self, call: Call) -> Value | None:
        call_sinks(call, self.modules)
        validator_chain(call)
        if call.method in _SUBSTRING_CHECKS and call.arg_nodes:
            receiver = call.site.node.field("function")
            checked = (
                receiver.field("object") if receiver is not None and receiver.kind() == "member_expression" else None
            )
            if checked is not None and self.facts.url_entry(call.arg_nodes[0]):
                self.notes.append((call.site.line, call.method, " ".join(checked.text().split())[:60]))
        if call.method == "useState":  # React: [body, setBody] — a read of body sees what the setter stored
            state = self.facts.states.get(call.site.node.range().start.index, "")
            return Value(seq=(Value(tags=frozenset({f"text:state:{state}"})), FUNCTION))
        setter = self.facts.setters.get(call.name)
        if setter is not None and call.args:  # React: setBody(value) — what `body` holds from now on
            stored = self.facts.stored
            stored[setter] = merge(stored[setter], call.args[0]) if setter in stored else call.args[0]
        return call_value(call, self.describe)

    def attribute(self, name: str, obj: Value, site: Site) -> Value | None:
        found = member_source(name, site)
        if found is not None:
            return found
        if "request" in obj.tags:
            return Value()  # req.session, req.user, req.app: the server's own state
        return None

    def store(self, target: str, key: Any, value: Value, site: Site) -> None:
        if target == "jsx_attribute" and key == "dangerouslySetInnerHTML" and value.parts:
            html = value.parts.get("__html")
            state = next((t[11:] for t in (html.tags if html else ()) if t.startswith("text:state:")), None)
            if html is not None and state in self.facts.stored:
                value = Value(parts={**value.parts, "__html": merge(html, self.facts.stored[state])})
        store_sinks(target, key, value, site)

    def returned(self, function: Function, value: Value, site: Site) -> None:
        return None  # a handler's return value is not sent as HTML by any framework followed here

    def guard(self, condition: SgNode, site: Site) -> Sequence[Refinement]:
        return javascript_guards.guard(condition, site, self.facts)

    def callback(self, call: Call, index: int) -> Sequence[Value] | None:
        nodes = call.arg_nodes
        site = call.site
        if (
            call.method == "addEventListener"
            and nodes
            and nodes[0].kind() == "string"
            and nodes[0].text()[1:-1] == "message"
        ):
            return [site.source("input", "a posted message (`event.data`)").cleared(_STRINGS)]
        receiver = call.receiver
        if call.method in _CALLBACK_CARRIERS and receiver is not None and receiver.flat().labelled("input"):
            return [receiver.flat(), Value(), Value()]
        if call.method == "subscribe" and nodes:
            return [site.source("input", "an API response (the value `subscribe()` receives)").cleared(_STRINGS)]
        return None

    def describe(self, text: str) -> frozenset[str]:
        return _described(text)


@functools.lru_cache(maxsize=4096)
def _described(text: str) -> frozenset[str]:
    """``text:sql`` for SQL text, ``text:html`` for markup (pure: cached, the same literals recur)."""
    tags = set()
    if is_sql(text + " x"):
        tags.add("text:sql")
    if "<" in text:
        tags.add("text:html")
    return frozenset(tags)


class _At:
    """A ``Site`` for a parameter: sources read at its line (parameters are read before any path runs)."""

    def __init__(self, node: SgNode) -> None:
        self.node = node
        self.line = node.range().start.line + 1

    def source(self, label: str, name: str) -> Value:
        return Value(origins=frozenset({Origin(label, name, self.line)}))


def _decorated(decorator: SgNode, target: SgNode, param: SgNode, site: _At) -> Value | None:
    """A NestJS handler parameter its decorator fills from the request; a DTO-typed body is validated."""
    match = re.match(r"@(\w+)\(\s*(?:['\"]([^'\"]*)['\"])?", decorator.text())
    if match is None or match.group(1) not in _NEST_SOURCES:
        return None
    what, objects = _NEST_SOURCES[match.group(1)]
    key = match.group(2)
    origin = f"the `{key}` {what} (`@{match.group(1)}`)" if key else f"the {what} (`{target.text()}`)"
    typed = re.search(r":\s*[A-Z]\w*\s*$", param.text()) is not None
    value = site.source("input", origin)
    return value if objects and not typed else value.cleared(_STRINGS)
