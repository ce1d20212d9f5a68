"""What a JavaScript/TypeScript file declares that its spec needs, read once before the engine runs.

Imported names (a module's names are its own, not input), regex constants (``const RE = /^…$/``)
and URLs parsed with ``new URL(v)`` (for guards), the file's functions by name (a validator of
this file counts unless it tests substrings), lists of URL literals and the names bound to their
entries (``for (const u of ALLOWED)``, ``ALLOWED.some(u => …)``: comparing a URL with them by
substring is an open allow-list), and React state: ``const [body, setBody] = useState()``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from watcher.roles.taint.javascript_guards import dotted
from watcher.roles.taint.values import Value

if TYPE_CHECKING:
    from ast_grep_py import SgNode

__all__ = ["FileFacts"]

_URL_LIST = re.compile(r"""^(?:new\s+Set\(\s*)?\[\s*['"`]https?://""")
_URL_LITERAL = re.compile(r"https?://[\w.-]+")
_CLOSURES = ("arrow_function", "function_expression", "function")


class FileFacts:
    """The declarations of one file (see the module docstring)."""

    def __init__(self) -> None:
        self.imported: set[str] = set()
        self.regexes: dict[str, SgNode] = {}
        self.url_of: dict[str, SgNode] = {}
        self.functions: dict[str, SgNode] = {}
        self.url_lists: set[str] = set()
        self.url_items: set[str] = set()
        self.setters: dict[str, str] = {}  # setBody → body
        self.states: dict[int, str] = {}  # the useState() call (by offset) → its state's name
        self.stored: dict[str, Value] = {}  # what the setters were given, wherever they ran

    def read(self, root: SgNode) -> None:
        """Collect the facts of the file under ``root`` (one walk of the tree, natively)."""
        kinds = ("import_statement", "function_declaration", "variable_declarator", "for_in_statement")
        calls: list[SgNode] = []
        loops: list[SgNode] = []
        for node in root.find_all(any=[{"kind": k} for k in (*kinds, "call_expression")]):
            kind = node.kind()
            if kind == "import_statement":
                self.imported.update(ident.text() for ident in node.find_all(kind="identifier"))
            elif kind == "function_declaration":
                name = node.field("name")
                if name is not None:
                    self.functions.setdefault(name.text(), node)
            elif kind == "variable_declarator":
                self._declared(node)
            elif kind == "for_in_statement":
                loops.append(node)
            else:
                calls.append(node)
        for loop in loops:
            left, right = loop.field("left"), loop.field("right")
            if left is not None and dotted(right) in self.url_lists:
                self.url_items.add(left.text())
        for call in calls:
            callee = call.field("function")
            owner = callee.field("object") if callee is not None and callee.kind() == "member_expression" else None
            if owner is None or dotted(owner) not in self.url_lists:
                continue
            args = call.field("arguments")
            for fn in args.named_children() if args is not None else ():
                if fn.kind() in _CLOSURES:
                    self.url_items.update(_first_parameter(fn))

    def _declared(self, decl: SgNode) -> None:
        target, value = decl.field("name"), decl.field("value")
        if target is None or value is None:
            return
        kind, name = value.kind(), target.text()
        if target.kind() == "identifier":
            if kind in _CLOSURES:
                self.functions.setdefault(name, value)
            elif kind == "regex":
                self.regexes[name] = value
            elif kind in ("array", "new_expression") and _URL_LIST.search(value.text()):
                self.url_lists.add(name)
            if kind == "new_expression":
                ctor, args = value.field("constructor"), value.field("arguments")
                first = next(iter(args.named_children()), None) if args is not None else None
                if ctor is not None and first is not None and ctor.text() == "URL" and dotted(first):
                    self.url_of[name] = first
        elif target.kind() == "array_pattern" and kind == "call_expression":
            items = target.named_children()
            callee = value.field("function")
            if len(items) == 2 and callee is not None and callee.text().rsplit(".", 1)[-1] == "useState":
                self.setters[items[1].text()] = items[0].text()
                self.states[value.range().start.index] = items[0].text()

    def url_entry(self, node: SgNode) -> bool:
        """An entry of a list of URLs: a URL literal, or a name bound to the items of such a list."""
        if node.kind() == "string":
            return bool(_URL_LITERAL.match(node.text()[1:-1]))
        return dotted(node) in self.url_items


def _first_parameter(fn: SgNode) -> list[str]:
    single = fn.field("parameter")
    if single is not None:
        return [single.text()]
    params = fn.field("parameters")
    first = next(iter(params.named_children()), None) if params is not None else None
    if first is None:
        return []
    return [dotted(first.field("pattern") or first)]
