"""The Python spec: Flask/Werkzeug, Django, FastAPI/Starlette and scripts, for the taint engine.

Sources: Flask's ``request`` (``args``, ``form``, ``values``, ``cookies``, ``headers``, ``json``,
``data``, ``files``, ``get_json()``, …) and route parameters (``<name>``; ``<int:id>`` is not text);
Django's ``request.GET/POST/COOKIES/META/body/headers/FILES`` and URL keyword arguments;
FastAPI/Starlette handler parameters (typed ``int``/``float``/``bool``/``UUID`` ones are casts) and
``Request`` reads; ``sys.argv``, ``input()``, sockets, and ``os.environ`` for scripts. Calls,
sanitisers and sinks are in ``python_calls.py``; conditions that validate in ``python_guards.py``.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from watcher.roles.taint import python_calls, python_guards
from watcher.roles.taint.python_grammar import PYTHON_GRAMMAR
from watcher.roles.taint.sinks import SINKS
from watcher.roles.taint.spec import Call, Function, Refinement, Site
from watcher.roles.taint.values import Value

if TYPE_CHECKING:
    from ast_grep_py import SgNode

__all__ = ["PythonSpec"]

_FLASK_INPUT = frozenset(
    [
        "args",
        "form",
        "values",
        "cookies",
        "headers",
        "json",
        "data",
        "files",
        "query_string",
        "path",
        "full_path",
        "url",
        "base_url",
        "host",
        "environ",
        "view_args",
        "authorization",
        "stream",
        "referrer",
        "user_agent",
        "script_root",
        "url_root",
        "host_url",
        "get_json",
        "get_data",
    ]
)
# what a request object holds that the server, not the client, decided
_REQUEST_SERVER = frozenset(
    [
        "method",
        "session",
        "user",
        "app",
        "state",
        "scope",
        "url_rule",
        "endpoint",
        "blueprint",
        "blueprints",
        "is_secure",
        "is_json",
        "scheme",
        "routing_exception",
        "max_content_length",
        "content_length",
        "mimetype",
        "charset",
        "get_host",
        "resolver_match",
    ]
)
_REQUEST_INPUT = frozenset(
    [
        "GET",
        "POST",
        "COOKIES",
        "META",
        "body",
        "headers",
        "FILES",
        "data",
        "query_params",
        "path_params",
        "cookies",
        "path",
        "path_info",
        "url",
        "content_params",
        "get_full_path",
        "build_absolute_uri",
    ]
)
_REQUEST_NAMES = frozenset({"request", "req"})
_ROUTE = re.compile(r"\.(?:route|get|post|put|patch|delete|head|options|api_route|websocket|add_url_rule)\s*\(")
_VIEW = re.compile(r"@(?:\w+\.)*(?:api_view|require_(?:http_methods|GET|POST|safe)|csrf_exempt|login_required)\b")
_CLEAN_TYPES = frozenset(
    {"int", "float", "bool", "UUID", "uuid.UUID", "datetime", "date", "Decimal", "conint", "PositiveInt"}
)
_HTTP_METHODS = frozenset({"get", "post", "put", "patch", "delete", "head", "options"})
_CREDENTIAL = re.compile(r"(?i)passw|pwd|secret|token|nonce|otp|salt|api_?key|session|remember|csrf|reset|auth|cred")
_HINT_ONLY = re.compile(r"(?i)etag|cache|checksum|digest_of_file|fingerprint")
_MUTATORS = {
    "append": "append",
    "insert": "insert",
    "pop": "pop",
    "popleft": "shift",
    "appendleft": "prepend",
    "remove": "remove",
    "update": "update",
    "extend": "extend",
    "add": "append",
    "setdefault": "absorb",
    "clear": "clear",
    "write": "absorb",
    "writelines": "absorb",
    "feed": "absorb",
    "set": "put",
    "put": "put",
    "__setitem__": "put",
}


class PythonSpec:
    """The ``Spec`` for Python (see the module docstring)."""

    grammar = PYTHON_GRAMMAR
    builtins = frozenset(dir(builtins))
    exits = frozenset({"flask.abort", "werkzeug.exceptions.abort", "sys.exit", "exit", "quit", "os._exit", "abort"})
    mutators: Mapping[str, str] = _MUTATORS
    constructor = "__init__"
    text_clears: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self._imported: frozenset[str] = frozenset()
        self._json_apps: tuple[str, ...] = ()

    def imports(self, root: SgNode) -> Mapping[str, str]:
        out: dict[str, str] = {}
        for node in root.find_all(any=[{"kind": "import_statement"}, {"kind": "import_from_statement"}]):
            module = node.field("module_name")
            base = module.text() if node.kind() == "import_from_statement" and module is not None else ""
            for child in node.named_children():
                if child is module and node.kind() == "import_from_statement":
                    continue
                if child.kind() == "aliased_import":
                    real, alias = child.field("name"), child.field("alias")
                    if real is not None and alias is not None:
                        out[alias.text()] = f"{base}.{real.text()}" if base else real.text()
                elif child.kind() == "dotted_name":
                    text = child.text()
                    if base:
                        out[text] = f"{base}.{text}"
                    else:
                        out[text.split(".", 1)[0]] = text.split(".", 1)[0]
        self._imported = frozenset(v.split(".", 1)[0].lstrip(".") for v in out.values())
        apps = []  # the names of FastAPI/Starlette applications and routers: their handlers return JSON
        for node in root.find_all(kind="assignment"):
            left, right = node.field("left"), node.field("right")
            if left is not None and right is not None and right.kind() == "call":
                called = (right.field("function") or right).text().rsplit(".", 1)[-1]
                if called in ("FastAPI", "APIRouter", "Starlette", "Router"):
                    apps.append(left.text())
        self._json_apps = tuple(f"@{a}." for a in apps)
        return out

    def entry(self, function: Function, name_of: Callable[[SgNode], str]) -> Mapping[str, Value]:
        out: dict[str, Value] = {}
        params = _parameters(function.node)
        route = next((d for d in function.decorators if _ROUTE.search(d)), None)
        view_method = function.owner is not None and len(params) > 1 and function.name in _HTTP_METHODS
        django = bool(params) and (
            params[0][0] in _REQUEST_NAMES or view_method or any(_VIEW.search(d) for d in function.decorators)
        )
        line = function.node.range().start.line + 1
        typed_ints = set(re.findall(r"<(?:int|float|uuid):(\w+)>", route or ""))
        for i, (name, annotation, default) in enumerate(params):
            if name in ("self", "cls") and i == 0:
                continue
            if (
                name in _REQUEST_NAMES
                or annotation.endswith(("Request", "HttpRequest", "WebSocket"))
                or (view_method and i == 1)  # a class-based view's get(self, req, ...)
            ):
                out[name] = Value(tags=frozenset({"request"}))
                continue
            if not (route or django):
                continue
            if name in typed_ints or annotation.split("[")[0].rsplit(".", 1)[-1] in _CLEAN_TYPES:
                out[name] = Value()
                continue
            if "Depends(" in default or annotation.endswith(("Session", "BackgroundTasks", "Response")):
                continue
            what = "route parameter" if route and "<" in route else "URL parameter" if django else "parameter"
            origin = Value().__class__(origins=frozenset({_origin(f"{what} `{name}`", line)}))
            out[name] = origin
        return out

    def call(self, call: Call) -> Value | None:
        return python_calls.call(call, self._imported)

    def attribute(self, name: str, obj: Value, site: Site) -> Value | None:
        parts = name.split(".")
        if name.startswith(("bottle.request.", "sanic.request.")) and len(parts) >= 3:
            return Value() if parts[2] in _REQUEST_SERVER else site.source("input", f"request.{parts[2]}")
        if name.startswith("flask.request.") and len(parts) >= 3:
            if parts[2] in _REQUEST_SERVER:
                return Value()
            return obj.part(parts[2]) if obj.parts else site.source("input", f"request.{parts[2]}")
        if name == "flask.request" or (parts[-1] == "request" and len(parts) == 2 and parts[0] == "self"):
            return Value(tags=frozenset({"request"}))  # Flask's request, or a class-based view's
        if "request" in obj.tags and parts[-1] == "session":
            return Value(tags=frozenset({"session"}))
        if "request" in obj.tags and parts[-1] in _REQUEST_SERVER:
            return Value(tags=frozenset({"request"}))
        if "request" in obj.tags:  # anything else a request carries came from the client
            return site.source("input", f"request.{parts[-1]}")
        if name == "sys.argv":
            return site.source("local", "sys.argv")
        if name == "os.environ":
            return site.source("environment", "os.environ")
        return None

    def store(self, target: str, key: Any, value: Value, site: Site) -> None:
        key_text = key if isinstance(key, str) else ""
        where = f"{target}[{key_text!r}]" if target else key_text
        if (
            target in ("flask.session", "flask.g")
            or target.endswith((".session", "request.state"))
            or target == "session"
        ):
            shown = (target.rsplit(".", 1)[-1] if target != "flask.g" else "g") + (
                f"[{key_text!r}]" if key_text else ""
            )
            site.report(SINKS["trust-boundary"], value, shown, ("input",))
            site.report(SINKS["weak-random"], value, shown, ("weak-random",))
            site.report(SINKS["weak-hash"], value, shown, ("weak-hash",))
            return
        if target.endswith("headers") and key_text.lower() == "location":
            site.report(SINKS["redirect"], value, "the Location header", ("input",))
        if key_text and _CREDENTIAL.search(key_text) and not _HINT_ONLY.search(key_text):
            site.report(SINKS["weak-random"], value, f"`{where}`", ("weak-random",))
            site.report(SINKS["weak-hash"], value, f"`{where}`", ("weak-hash",))

    def returned(self, function: Function, value: Value, site: Site) -> None:
        route = next((d for d in function.decorators if _ROUTE.search(d)), None)
        if route is None or "response" in value.tags:
            return
        if route.startswith(self._json_apps) and "HTMLResponse" not in route:
            return  # FastAPI sends what a handler returns as JSON
        body = value.seq[0] if value.seq else value
        if "response" in body.tags:
            return
        site.report(SINKS["xss"], body, "the response", ("input",))
        site.report(SINKS["weak-hash"], body, "the response", ("weak-hash",))

    def guard(self, condition: SgNode, site: Site) -> Sequence[Refinement]:
        return python_guards.guard(condition, site)

    def callback(self, call: Call, index: int) -> Sequence[Value] | None:
        return None  # a Python lambda is not followed

    def describe(self, text: str) -> frozenset[str]:
        return frozenset()


def _origin(name: str, line: int) -> Any:
    from watcher.roles.taint.values import Origin

    return Origin("input", name, line)


def _parameters(node: SgNode) -> list[tuple[str, str, str]]:
    """(name, annotation, default) of each parameter."""
    params = node.field("parameters")
    out = []
    for p in params.named_children() if params is not None else ():
        if p.kind() == "identifier":
            out.append((p.text(), "", ""))
            continue
        name = p.field("name") or next((c for c in p.named_children() if c.kind() == "identifier"), None)
        if name is None:
            continue
        annotation = p.field("type")
        default = p.field("value")
        out.append(
            (
                name.text(),
                annotation.text() if annotation is not None else "",
                default.text() if default is not None else "",
            )
        )
    return out
