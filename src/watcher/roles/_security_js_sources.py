"""Where untrusted values enter JavaScript/TypeScript code, and what a value still reaches.

A ``Taint`` is what the flow analysis knows of a value: where it came from (a request field, the
page URL, a route parameter, an API response; or nowhere known, a *weak* taint such as a
parameter of a plain function) and the sink classes it can still harm. A sanitizer removes the
classes it protects (``escapeHtml`` the HTML class, ``String()`` the operator objects a NoSQL
filter would accept); a cast to a number removes them all.

Server sources are read off the syntax: ``req.query``, ``req.body``, ``req.params``,
``req.cookies``, ``req.headers`` and ``req.get()`` in Express (``request`` in Fastify and
Next.js, ``ctx`` and ``ctx.request`` in Koa, ``request.json()`` and ``request.url`` in route
handlers). Browser sources: ``location``, ``document.URL``/``referrer``, ``window.name``, a
route's parameters (Angular ``ActivatedRoute``, React Router, Vue, Next.js ``router.query``)
and responses of ``fetch``/``axios``/``HttpClient``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ALL_KINDS", "Taint", "call_source", "keyed", "member_source", "sanitized", "union"]

# sink classes a value may reach; "object" is a value that may be a structured object (JSON body,
# qs-parsed query) and so carry MongoDB operators, which a string never does
ALL_KINDS = frozenset({"cmd", "sql", "code", "path", "xss", "redirect", "nosql", "object"})
_STRINGS = ALL_KINDS - {"object"}


@dataclass(frozen=True, slots=True)
class Taint:
    """An untrusted value: its origin, the line it entered on, and the sink classes it still reaches."""

    origin: str  # "the `next` query parameter (`req.query.next`)"
    line: int  # 1-based
    kinds: frozenset[str] = ALL_KINDS
    strong: bool = True  # False: nothing known of the value (a plain parameter, an unknown global)
    via: tuple[str, ...] = ()  # variables it went through, first to last
    text: str = ""  # literal text spliced around it (tells SQL or HTML from other strings)
    resolved: bool = field(default=False)  # a path made absolute (path.resolve/join/normalize)

    def but(self, **changes: Any) -> Taint:
        """A copy with some fields changed (``dataclasses.replace`` without its introspection)."""
        fields: dict[str, Any] = {
            "origin": self.origin, "line": self.line, "kinds": self.kinds, "strong": self.strong,
            "via": self.via, "text": self.text, "resolved": self.resolved,
        }  # fmt: skip
        fields.update(changes)
        return Taint(**fields)

    def through(self, name: str) -> Taint:
        return self if name in self.via else self.but(via=(*self.via, name)[-4:])

    def without(self, kinds: frozenset[str]) -> Taint | None:
        if not kinds & self.kinds:
            return self
        left = self.kinds - kinds
        return self.but(kinds=left) if left else None


def union(*taints: Taint | None, text: str = "") -> Taint | None:
    """One value made of several: strong origins win, classes add up, literal text joins."""
    found = [t for t in taints if t is not None]
    if not found:
        return None
    if len(found) == 1 and not text:
        return found[0]
    first = next((t for t in found if t.strong), found[0])
    kinds = frozenset().union(*(t.kinds for t in found))
    joined = (text + " " + " ".join(t.text for t in found)).strip()[:400]
    return first.but(kinds=kinds, text=joined, resolved=any(t.resolved for t in found))


_PLURAL = re.compile(r"^the (.+)s \(`(.+)`\)$")


def keyed(taint: Taint | None, key: str) -> Taint | None:
    """The taint of ``value.key``: a field of the request named by its key."""
    if taint is None or not taint.strong:
        return taint
    if taint.origin.startswith("the request (`") and key in _FIELDS:
        what, objects = _FIELDS[key]
        name = taint.origin[len("the request (`") : -2]
        return taint.but(origin=f"the {what}s (`{name}.{key}`)", kinds=ALL_KINDS if objects else _STRINGS)
    plural = _PLURAL.match(taint.origin)
    if plural is not None:
        return taint.but(origin=f"the `{key}` {plural.group(1)} (`{plural.group(2)}.{key}`)")
    return taint


def sanitized(taint: Taint | None, kinds: frozenset[str]) -> Taint | None:
    return taint.without(kinds) if taint is not None else None


# -------------------------------------------------------------------------------- server

_REQUEST = frozenset({"req", "request", "ctx", "context", "event"})
# request fields and whether each may hold an object (JSON body, qs-parsed query) or only strings
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

# -------------------------------------------------------------------------------- browser

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


def _chain(node: Any) -> list[str]:
    """``req.query.next`` → ["req", "query", "next"]; [] when the chain has calls or brackets."""
    parts: list[str] = []
    while node is not None:
        kind = node.kind()
        if kind == "member_expression":
            prop = node.field("property")
            parts.append(prop.text() if prop is not None else "")
            node = node.field("object")
        elif kind == "subscript_expression":
            index = node.field("index")
            if index is None or index.kind() != "string":
                return []
            parts.append(index.text()[1:-1])
            node = node.field("object")
        elif kind in ("identifier", "this"):
            parts.append(node.text())
            return parts[::-1]
        elif kind in ("non_null_expression", "parenthesized_expression", "as_expression"):
            node = next((c for c in node.children() if c.is_named()), None)
        else:
            return []
    return []


def _line(node: Any) -> int:
    return int(node.range().start.line) + 1


def member_source(node: Any) -> Taint | None:
    """The taint a member expression reads straight from a request, the page or a route, or None."""
    parts = _chain(node)
    if len(parts) < 2:
        return None
    text = ".".join(parts)
    if parts[0] in _REQUEST or (parts[0] == "this" and len(parts) > 2 and parts[1] in _REQUEST):
        at = parts.index(next(p for p in parts if p in _REQUEST))
        rest = parts[at + 1 :]
        if rest[:1] == ["request"]:  # ctx.request.body (Koa)
            rest = rest[1:]
        if not rest or rest[0] not in _FIELDS:
            return None
        what, objects = _FIELDS[rest[0]]
        key = rest[1] if len(rest) > 1 else ""
        origin = f"the `{key}` {what} (`{text}`)" if key else f"the {what}s (`{text}`)"
        kinds = ALL_KINDS if objects else _STRINGS
        if key.lower() in ("referer", "referrer"):  # set by the visitor's browser: a way back, not a lure
            kinds = kinds - {"redirect"}
        return Taint(origin, _line(node), kinds)
    for page, what in _PAGE.items():
        if text == page or text.startswith(page + ".") or text in ("window." + page, "globalThis." + page):
            return Taint(f"{what} (`{text}`)", _line(node), _STRINGS)
    for i in range(1, len(parts)):
        if _ROUTE_OBJECTS.search(".".join(parts[:i])) and parts[i] in _ROUTE_FIELDS | {"snapshot"}:
            if parts[i] == "snapshot" and (i + 1 >= len(parts) or parts[i + 1] not in _ROUTE_FIELDS):
                return None
            return Taint(f"the route (`{text}`)", _line(node), _STRINGS)
    return None


def call_source(name: str, owner: str, node: Any, receiver: Taint | None) -> Taint | None:
    """The taint a call returns as a source: ``req.get('x')``, ``fetch()``, ``useParams()``…"""
    line = _line(node)
    owner_last = owner.rsplit(".", 1)[-1]
    if owner_last in _REQUEST and name in _REQUEST_CALLS:
        referer = re.search(r"(?i)\(\s*['\"]referr?er['\"]", node.text())
        return Taint(
            f"a {_REQUEST_CALLS[name]} (`{owner}.{name}()`)", line, _STRINGS - {"redirect"} if referer else _STRINGS
        )
    if owner_last in _REQUEST and name in _BODY_READERS:
        return Taint(f"the request body (`{owner}.{name}()`)", line, ALL_KINDS)
    if owner.endswith("cookies") and name == "get" and owner.split(".")[0] in _REQUEST:
        return Taint(f"a cookie (`{owner}.get()`)", line, _STRINGS)
    if not owner and name == "fetch":
        return Taint("an API response (`fetch()`)", line, _STRINGS)
    if (not owner and name == "axios") or (name in _HTTP_METHODS and _HTTP_OWNERS.search(owner or "")):
        return Taint(f"an API response (`{owner + '.' if owner else ''}{name}()`)", line, _STRINGS)
    if not owner and name in _ROUTE_HOOKS:
        return Taint(f"the route (`{name}()`)", line, _STRINGS)
    if receiver is None and name in ("get", "getAll") and owner.endswith(("searchParams", "paramMap")):
        return Taint(f"a URL parameter (`{owner}.{name}()`)", line, _STRINGS)
    return None
