"""Where untrusted values enter JavaScript/TypeScript code, for the taint engine's JavaScript spec.

Server sources are member chains of a request: ``req.query``, ``req.body``, ``req.params``,
``req.cookies``, ``req.headers`` in Express (``request`` in Fastify and Next.js, ``ctx`` and
``ctx.request`` in Koa, ``event`` in a Lambda), and calls: ``req.get()``, ``request.json()``.
Browser sources: ``location``, ``document.URL``/``referrer``/``cookie``, ``window.name``, a
route's parameters (Angular ``ActivatedRoute``, React Router hooks, Vue, Next.js
``router.query``) and responses of ``fetch``/``axios``/``HttpClient``.

A field that a query-string parser or a JSON body can fill with an object (``query``, ``body``)
reaches every class, NoSQL operator injection (``"object"``) included; one that is always a
string (a header, a route parameter, the URL) is cleared of ``"object"``. A ``Referer`` is set by
the visitor's own browser: a way back, not a lure, so it is no open redirect.
"""

from __future__ import annotations

import functools
import re
from typing import Protocol

from watcher.roles.taint.spec import Site
from watcher.roles.taint.values import Value

__all__ = ["REQUEST_NAMES", "call_source", "member_source", "request_value"]

_STRINGS = frozenset({"object"})  # what a string-only source is cleared of
REQUEST_NAMES = frozenset({"req", "request", "ctx", "context", "event"})
# request fields: how a finding names them, and whether each may hold an object
_FIELDS = {
    "query": ("query parameter", True),
    "body": ("request body field", True),
    "params": ("route parameter", False),
    "cookies": ("cookie", False),
    "signedCookies": ("cookie", False),
    "headers": ("request header", False),
    "files": ("uploaded file", True),
    "file": ("uploaded file", True),
    "querystring": ("query string", False),
    "search": ("query string", False),
    "url": ("request URL", False),
    "originalUrl": ("request URL", False),
    "path": ("request path", False),
    "searchParams": ("query parameter", False),
    "nextUrl": ("request URL", False),
    "payload": ("request body field", True),
    "rawBody": ("request body", False),
    "queryStringParameters": ("query parameter", False),
    "pathParameters": ("route parameter", False),
}
_REQUEST_CALLS = {"get": "request header", "header": "request header", "param": "request parameter"}
_BODY_READERS = frozenset({"json", "formData", "text", "arrayBuffer", "blob"})
_PAGE = {
    "location": "the page URL",
    "document.URL": "the page URL",
    "document.documentURI": "the page URL",
    "document.baseURI": "the page URL",
    "document.location": "the page URL",
    "document.referrer": "the referring page",
    "document.cookie": "a cookie",
    "window.name": "the window name",
}
_ROUTE_OBJECTS = re.compile(r"(?:^|\.)(?:route|activatedRoute|\$route|router|_route|currentRoute)$", re.I)
_ROUTE_FIELDS = frozenset({"params", "queryParams", "paramMap", "queryParamMap", "fragment", "query", "url"})
_ROUTE_HOOKS = frozenset({"useParams", "useSearchParams", "useLocation", "useSearchParam", "useQuery"})
_HTTP_OWNERS = re.compile(r"(?:^|\.)(?:http|httpClient|axios|\$http|api|client|\$)$", re.I)
_HTTP_METHODS = frozenset({"get", "post", "put", "patch", "delete", "request", "getJSON", "ajax"})


class Reader(Protocol):
    """Where a source is read: a ``Site``, or a handler's parameter list."""

    def source(self, label: str, name: str) -> Value: ...


def _source(site: Reader, name: str, cleared: frozenset[str] = frozenset()) -> Value:
    value = site.source("input", name)
    return value.cleared(cleared) if cleared else value


def request_value(name: str, site: Reader) -> Value:
    """A request object (a handler's ``req``): its fields are sources, the rest is the server's own."""
    parts = {
        field: _source(site, f"the {what}s (`{name}.{field}`)", frozenset() if objects else _STRINGS)
        for field, (what, objects) in _FIELDS.items()
    }
    return Value(parts=parts, tags=frozenset({"request"}))


def member_source(name: str, site: Site) -> Value | None:
    """The value a member chain (``req.query.next``) reads straight from a request, the page or a route."""
    found = _member_origin(name)
    return _source(site, *found) if found is not None else None


@functools.lru_cache(maxsize=4096)
def _member_origin(name: str) -> tuple[str, frozenset[str]] | None:
    """How the source a member chain reads is named, and the classes it cannot reach (pure: cached)."""
    if "(" in name or "[" in name:
        return None
    parts = name.split(".")
    if len(parts) < 2:
        return None
    if parts[0] in REQUEST_NAMES or (parts[0] == "this" and len(parts) > 2 and parts[1] in REQUEST_NAMES):
        at = parts.index(next(p for p in parts if p in REQUEST_NAMES))
        rest = parts[at + 1 :]
        if rest[:1] == ["request"]:  # ctx.request.body (Koa)
            rest = rest[1:]
        if not rest or rest[0] not in _FIELDS:
            return None
        what, objects = _FIELDS[rest[0]]
        key = rest[1] if len(rest) > 1 else ""
        origin = f"the `{key}` {what} (`{name}`)" if key else f"the {what}s (`{name}`)"
        cleared = frozenset() if objects else _STRINGS
        if key.lower() in ("referer", "referrer"):
            cleared = cleared | {"redirect"}
        return origin, cleared
    for page, what in _PAGE.items():
        if name == page or name.startswith(page + ".") or name in ("window." + page, "globalThis." + page):
            return f"{what} (`{name}`)", _STRINGS
    for i in range(1, len(parts)):
        if _ROUTE_OBJECTS.search(".".join(parts[:i])) and parts[i] in _ROUTE_FIELDS | {"snapshot"}:
            if parts[i] == "snapshot" and (i + 1 >= len(parts) or parts[i + 1] not in _ROUTE_FIELDS):
                return None
            return f"the route (`{name}`)", _STRINGS
    return None


def call_source(name: str, owner: str, site: Site, receiver: Value | None) -> Value | None:
    """The value a call returns as a source: ``req.get('x')``, ``fetch()``, ``useParams()``…"""
    owner_last = owner.rsplit(".", 1)[-1]
    if owner_last in REQUEST_NAMES and name in _REQUEST_CALLS:
        referer = re.search(r"(?i)\(\s*['\"]referr?er['\"]", site.node.text())
        what = f"a {_REQUEST_CALLS[name]} (`{owner}.{name}()`)"
        return _source(site, what, _STRINGS | {"redirect"} if referer else _STRINGS)
    if owner_last in REQUEST_NAMES and name in _BODY_READERS:
        return _source(site, f"the request body (`{owner}.{name}()`)")
    if owner.endswith("cookies") and name == "get" and owner.split(".")[0] in REQUEST_NAMES:
        return _source(site, f"a cookie (`{owner}.get()`)", _STRINGS)
    if not owner and name == "fetch":
        return _source(site, "an API response (`fetch()`)", _STRINGS)
    if (not owner and name == "axios") or (name in _HTTP_METHODS and _HTTP_OWNERS.search(owner or "")):
        return _source(site, f"an API response (`{owner + '.' if owner else ''}{name}()`)", _STRINGS)
    if not owner and name in _ROUTE_HOOKS:
        return _source(site, f"the route (`{name}()`)", _STRINGS)
    url_params = name in ("get", "getAll") and owner.endswith(("searchParams", "paramMap"))
    if url_params and not (receiver is not None and receiver.all_origins()):
        return _source(site, f"a URL parameter (`{owner}.{name}()`)", _STRINGS)
    return None
