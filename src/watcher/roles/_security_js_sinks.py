"""Where a tainted JavaScript/TypeScript value does harm, and the finding that tells its story.

Sinks by class: command execution (``child_process``), SQL text run by a driver or ORM, code
evaluation (``eval``, ``Function``, ``vm``, string timers, ``require``), file paths (``fs``,
``res.sendFile``/``download`` without a ``root``), HTML sent to a browser (``res.send``/``write``
of a string, Koa's ``ctx.body``, ``innerHTML``/``outerHTML``/``document.write``, React's
``dangerouslySetInnerHTML``, Angular's ``bypassSecurityTrust*``), redirects (``res.redirect``,
``Location`` headers, ``location.href``) and MongoDB filters and updates (an object from the
request carries operators; ``$where`` runs code). Each sink visit is recorded: a strong taint
becomes a finding naming class, CWE, the source and its line and the variable it went through;
a sink whose every visit was clean is remembered, so the structural rules can stand down.
"""

from __future__ import annotations

import re
from typing import Any

from watcher.roles._security_js_sources import Taint
from watcher.roles._security_js_values import UNKNOWN, dotted, fold, named
from watcher.roles._security_model import Finding
from watcher.roles._security_sql import is_sql

__all__ = ["CLASSES", "Sinks"]

# class → (rule, what it is, CWE, the risk and the fix)
CLASSES: dict[str, tuple[str, str, str, str]] = {
    "cmd": ("js:command-injection", "Command injection", "CWE-78",
            "a value holding `;`, `|` or `$(...)` runs commands of its own. Run a fixed program with "
            "`execFile`/`spawn` and pass the value as one argument of the array (no `shell: true`)."),
    "sql": ("js:sql-injection", "SQL injection", "CWE-89",
            "input containing quotes rewrites the query. Use placeholders and pass the values separately "
            "(`?`/`$1` with a parameter array, `replacements`/`bind` in Sequelize)."),
    "code": ("js:code-exec", "Code injection", "CWE-94",
             "the value runs as JavaScript with the server's or the page's rights. Parse data with "
             "JSON.parse or choose a function from a fixed table instead of evaluating text."),
    "path": ("js:path-traversal", "Path traversal", "CWE-22",
             "`../` in the value reaches files outside the intended directory. Keep `path.basename()` of "
             "it, or resolve it under a base directory and refuse a result outside it (or pass `root`)."),
    "xss": ("js:xss", "Cross-site scripting", "CWE-79",
            "markup in the value runs as script in the visitor's browser. Escape it for HTML (a "
            "template engine that escapes, `escape-html`, DOMPurify) or set text (`textContent`, JSON)."),
    "redirect": ("js:open-redirect", "Open redirect", "CWE-601",
                 "a link can send visitors to any site under this site's name. Compare the whole target "
                 "with an allow-list (or only accept a local path), not with `includes`/`startsWith`."),
    "nosql": ("js:nosql-injection", "NoSQL injection", "CWE-943",
              "an object from the request carries operators such as `$ne` or `$gt` (or code in `$where`) "
              "and changes what the query matches or updates. Cast the value (`String(x)`), check "
              "`typeof x === 'string'`, or sanitize it (mongo-sanitize)."),
}  # fmt: skip
_RUNNERS = frozenset({"exec", "execSync"})
_PROGRAMS = frozenset({"spawn", "spawnSync", "execFile", "execFileSync", "fork"})
_PROCESS = re.compile(r"(?i)child_?process|^cp$|^shell(?:js)?$|^proc$|^execa$")
_SQL_CALLS = frozenset({"query", "execute", "raw", "prepare", "run", "all", "get", "exec", "each", "unsafe"})
_SQL_RAW = re.compile(r"Raw(?:Unsafe)?$|Unsafe$|^raw$|^unsafe$")
_VM = frozenset({"runInNewContext", "runInThisContext", "runInContext", "compileFunction", "Script"})
_FS = re.compile(r"(?:^|\.)(?:fs|fsp|fse|fsExtra|fsPromises|promises|fs\.promises)$")
_FS_CALLS = frozenset(
    {
        "readFile", "readFileSync", "writeFile", "writeFileSync", "appendFile", "appendFileSync",
        "createReadStream", "createWriteStream", "unlink", "unlinkSync", "rm", "rmSync", "rmdir",
        "rmdirSync", "readdir", "readdirSync", "open", "openSync", "copyFile", "copyFileSync", "rename",
        "renameSync", "mkdir", "mkdirSync", "readJson", "readJSON", "outputFile", "remove", "writeJson",
    }
)  # fmt: skip
_TEMPLATE_ENGINES = frozenset(
    {"pug", "jade", "ejs", "handlebars", "Handlebars", "hbs", "nunjucks", "_", "lodash", "doT", "dot", "Mustache"}
)
_TEMPLATE_CALLS = frozenset({"compile", "render", "renderString", "template", "precompile"})
_RESPONSES = frozenset({"res", "response", "reply", "resp", "ctx", "h"})
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


def _root(node: Any) -> str:
    """The name a chain of calls and members starts from: ``res.status(400).send`` → res."""
    while node is not None and node.kind() in ("member_expression", "call_expression", "subscript_expression"):
        node = node.field("object") if node.kind() != "call_expression" else node.field("function")
    return str(node.text()) if node is not None and node.kind() in ("identifier", "this") else ""


def _local_target(node: Any, consts: dict[str, Any]) -> bool:
    """A target whose constant start fixes the site: ``/path?x=…`` or ``https://host/…``."""
    while node is not None and node.kind() == "binary_expression":
        node = node.field("left")
    if node is None:
        return False
    if node.kind() == "template_string":
        first = next((c for c in node.children() if c.is_named()), None)
        head = first.text() if first is not None and first.kind() == "string_fragment" else ""
    else:
        value = fold(node, consts)
        head = value if isinstance(value, str) else ""
    return bool(re.match(r"/[^/\\]|https?://[^/]+/", head))


class Sinks:
    """Sink visits of one text: the findings of strong taints, and the sinks proved clean."""

    def __init__(self, modules: frozenset[str] = frozenset()) -> None:
        self.modules = modules  # names this text binds to the child_process module
        self.findings: dict[tuple[str, int], Finding] = {}
        self.clean: dict[tuple[str, int], bool] = {}
        self.sources: dict[
            tuple[str, int], int
        ] = {}  # finding → the line its value entered on  # (rule, line) → every visit was clean

    def hit(self, cls: str, node: Any, taint: Taint | None, sink: str, *, weak: bool = False) -> None:
        rule, label, cwe, risk = CLASSES[cls]
        line = int(node.range().start.line) + 1
        key = (rule, line)
        reaches = taint is not None and (cls in taint.kinds or (cls == "nosql" and "object" in taint.kinds))
        self.clean[key] = self.clean.get(key, True) and not reaches
        if not reaches or taint is None or (not taint.strong and not weak) or key in self.findings:
            return
        through = f" through `{taint.via[-1]}`" if taint.via else ""
        origin = taint.origin if taint.strong else f"a value not known to be safe ({taint.origin})"
        origin = f"{origin[:-1]}, line {taint.line})" if origin.endswith(")") else f"{origin} (line {taint.line})"
        text = f"{origin[0].upper()}{origin[1:]} reaches `{sink}` (line {line}){through}: {risk}"
        end = int(node.range().end.line) + 1
        snippet = " ".join(node.text().split())[:200]
        self.sources[key] = taint.line
        self.findings[key] = Finding(
            rule, f"{label} ({cwe})", "warning", text, line, end, fingerprint=f"{rule}:{snippet}"
        )

    def built(self, node: Any, taint: Taint | None) -> None:
        """SQL text built here: remembered as clean when no value can change the statement."""
        line = int(node.range().start.line) + 1
        safe = taint is None or "sql" not in taint.kinds
        self.clean[("js:sql-built", line)] = self.clean.get(("js:sql-built", line), True) and safe

    def substring_allow_list(self, node: Any, name: str, checked: Any) -> None:
        """A URL compared with an allow-list entry by ``includes``/``startsWith``: any URL holding it passes."""
        rule, label, cwe, _risk = CLASSES["redirect"]
        line = int(node.range().start.line) + 1
        what = " ".join(checked.text().split())[:60]
        text = (
            f"`{what}` is checked against an allow-list of URLs with `{name}()` (line {line}): a URL that merely "
            f"contains or starts with an allowed one (`https://evil.example/?https://allowed…`, "
            f"`https://allowed.example.evil.example`) passes, so the check lets redirects and requests go anywhere. "
            "Compare the whole URL with each entry (`===`), or parse it and compare its origin."
        )
        snippet = " ".join(node.text().split())[:200]
        self.findings.setdefault(
            (rule, line),
            Finding(rule, f"{label} ({cwe})", "warning", text, line, line, fingerprint=f"{rule}:{snippet}"),
        )
        self.sources.setdefault((rule, line), line)

    # ------------------------------------------------------------------ calls

    def call(
        self, flow: Any, node: Any, name: str, owner: str, args: list[Any], taints: list[Any], receiver: Any, st: Any
    ) -> None:
        first = taints[0] if taints else None
        root = _root(node.field("function"))
        member = node.field("function") is not None and node.field("function").kind() == "member_expression"
        if name in _RUNNERS and (_PROCESS.search(owner) or not owner or owner in self.modules):
            self.hit("cmd", node, first, f"{name}()")
        elif name in _PROGRAMS and (_PROCESS.search(owner) or not owner or owner in self.modules):
            shell = any(a.kind() == "object" and re.search(r"\bshell\s*:\s*(?!false)", a.text()) for a in args)
            self.hit("cmd", node, _first(taints) if shell else first, f"{name}()")
        elif name == "eval" and owner in ("", "window", "globalThis", "global"):
            self.hit("code", node, first, "eval()")
        elif name == "Function" and owner in ("", "window", "globalThis"):
            self.hit("code", node, _first(taints), "Function()")
        elif name in _VM and owner == "vm":
            self.hit("code", node, first, f"vm.{name}()")
        elif (
            name in ("setTimeout", "setInterval")
            and args
            and args[0].kind() in ("string", "template_string", "binary_expression")
        ):
            self.hit("code", node, first, f"{name}()")
        elif name in _TEMPLATE_CALLS and owner.rsplit(".", 1)[-1] in _TEMPLATE_ENGINES:
            self.hit("code", node, first, f"{owner}.{name}()")
        elif name == "require" and not owner and args and args[0].kind() != "string":
            self.hit("code", node, first, "require()")
        elif member and (name in _SQL_CALLS or _SQL_RAW.search(name)):
            self.sql(flow, node, name, args, taints)
        if member and (name in _MONGO_FILTER or name in _MONGO_UPDATE) and args:
            self.nosql(flow, node, name, args, taints)
        if name in _FS_CALLS and (_FS.search(owner) or not owner):
            for taint in taints[: 2 if name.startswith(("rename", "copyFile")) else 1]:
                self.hit("path", node, taint, f"{owner + '.' if owner else ''}{name}()")
        if root in _RESPONSES:
            self.response(flow, node, name, args, taints, st)
        if (name in ("assign", "replace") and owner in _LOCATIONS) or (name == "open" and owner == "window"):
            self.hit("redirect", node, first, f"{owner}.{name}()")
        if (name in ("write", "writeln") and owner == "document") or name == "insertAdjacentHTML":
            self.hit("xss", node, taints[-1] if taints else None, f"{owner}.{name}()")
        if name.startswith("bypassSecurityTrust") and args:
            self.hit("xss", node, first, f"{name}()", weak=fold(args[0], st.consts) is UNKNOWN)

    def sql(self, flow: Any, node: Any, name: str, args: list[Any], taints: list[Any]) -> None:
        if not args:
            return
        value, taint = args[0], taints[0]
        if value.kind() == "object":
            keys = flow.objects.get(int(value.range().start.index), {})
            taint = (keys.get("sql") or keys.get("text") or keys.get("query") or (None, None))[0]
        text = taint.text if taint is not None else ""
        if _SQL_RAW.search(name) or is_sql(text + " x"):
            self.hit("sql", node, taint, f"{name}()")

    def nosql(self, flow: Any, node: Any, name: str, args: list[Any], taints: list[Any]) -> None:
        filter_at = 1 if name == "findByIdAndUpdate" else 0
        if name != "findByIdAndUpdate":
            self.operators(flow, node, name, args[0], taints[0], update=False)
        if name in _MONGO_UPDATE and len(args) > filter_at + 1:
            self.operators(flow, node, name, args[filter_at + 1], taints[filter_at + 1], update=True)

    def operators(self, flow: Any, node: Any, name: str, value: Any, taint: Any, *, update: bool) -> None:
        """A filter (or update) that is, or holds under a field, an object from the request."""
        if value.kind() in ("arrow_function", "function_expression", "string", "number"):
            return
        if value.kind() != "object":
            if taint is not None and "object" in taint.kinds:
                self.hit("nosql", node, taint, f"{name}()")
            return
        for key, (inner, inner_node) in flow.objects.get(int(value.range().start.index), {}).items():
            if key == "$where":
                self.hit("nosql", node, inner, f"{name}() with $where")
            elif update and (not key.startswith("$") or (inner_node is not None and inner_node.kind() == "object")):
                continue  # a field's new value: stored, not interpreted
            elif inner_node is not None and inner_node.kind() == "object" and key != "$eq":
                self.operators(flow, node, name, inner_node, inner, update=False)
            elif key != "$eq" and inner is not None and "object" in inner.kinds:
                self.hit("nosql", node, inner, f"{name}()")

    def response(self, flow: Any, node: Any, name: str, args: list[Any], taints: list[Any], st: Any) -> None:
        if name in ("redirect", "location") and args:
            if not _local_target(args[-1], st.consts):
                self.hit("redirect", node, taints[-1], f"res.{name}()")
        elif name in ("setHeader", "set", "header", "writeHead") and len(args) >= 2:
            if args[0].kind() == "string" and args[0].text()[1:-1].lower() == "location":
                self.hit("redirect", node, taints[1], f"res.{name}('Location')")
            elif args[-1].kind() == "object":
                keys = flow.objects.get(int(args[-1].range().start.index), {})
                hit = keys.get("Location") or keys.get("location") or keys.get("'Location'")
                if hit is not None:
                    self.hit("redirect", node, hit[0], f"res.{name}() Location")
        elif name in ("sendFile", "download", "sendfile", "attachment") and args:
            rooted = any(a.kind() == "object" and re.search(r"\broot\s*:", a.text()) for a in args[1:])
            if not rooted:
                self.hit("path", node, taints[0], f"res.{name}()")
        elif name in ("send", "write", "end") and args and args[0].kind() not in ("object", "array"):
            taint = taints[0]
            html = taint is not None and ("<" in taint.text or name == "send")
            if html and not (name == "send" and _root(node.field("function")) == "reply" and "<" not in taint.text):
                self.hit("xss", node, taint, f"res.{name}()")

    # ------------------------------------------------------------------ stores and JSX

    def assigned(self, flow: Any, node: Any, left: Any, taint: Taint | None, st: Any) -> None:
        target = dotted(left)
        prop = left.field("property") if left.kind() == "member_expression" else None
        if prop is not None and prop.text() in _HTML_PROPS:
            self.hit("xss", node, taint, f".{prop.text()} =")
        elif target in _LOCATIONS:
            self.hit("redirect", node, taint, f"{target} =")
        elif target in ("ctx.body", "this.body") and taint is not None and "<" in taint.text:
            self.hit("xss", node, taint, "ctx.body =")

    def jsx(self, flow: Any, attr: Any, st: Any) -> None:
        parts = named(attr)
        if not parts or parts[0].text() != "dangerouslySetInnerHTML" or len(parts) < 2:
            return
        inner = [n for n in named(parts[1]) if n.kind() == "object"]
        for obj in inner:
            flow.ev(obj, st)
            keys = flow.objects.get(int(obj.range().start.index), {})
            if "__html" in keys:
                taint, value = keys["__html"]
                self.hit("xss", attr, taint, "dangerouslySetInnerHTML", weak=fold(value, st.consts) is UNKNOWN)


def _first(taints: list[Any]) -> Any:
    return next((t for t in taints if t is not None and t.strong), next((t for t in taints if t is not None), None))
