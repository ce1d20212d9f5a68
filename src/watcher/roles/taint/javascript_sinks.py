"""Where a JavaScript/TypeScript value does harm: the sinks the JavaScript spec reports to the engine.

By class: command execution (``child_process``), SQL text run by a driver or ORM, code evaluation
(``eval``, ``Function``, ``vm``, string timers, template compilers, ``require``), file paths
(``fs``, ``res.sendFile``/``download`` without a ``root``), HTML sent to a browser
(``res.send``/``write`` of markup, Koa's ``ctx.body``, ``innerHTML``, ``document.write``, React's
``dangerouslySetInnerHTML``, Angular's ``bypassSecurityTrust*``), redirects (``res.redirect``,
``Location`` headers, ``location.href``) and MongoDB filters and updates: an object from the
request carries operators (``$ne``, ``$gt``) that change what a query matches, and ``$where``
runs code. The response sinks, ``nosql`` filters and stores are in ``javascript_stores.py``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from watcher.roles._security_sql import is_sql
from watcher.roles.taint.javascript_stores import JS_SINKS, nosql, response
from watcher.roles.taint.spec import Call
from watcher.roles.taint.values import NO_CONST, Value, union

if TYPE_CHECKING:
    from ast_grep_py import SgNode

__all__ = ["JS_SINKS", "call_sinks", "owner_of"]

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
_LOCATIONS = frozenset({"location", "location.href", "window.location", "window.location.href", "document.location"})
_GLOBAL = ("", "window", "globalThis", "global")


def owner_of(call: Call) -> str:
    """The dotted object a method is called on (``cp`` of ``cp.exec``); "" for a chain with calls."""
    owner = call.name.rsplit(".", 1)[0] if "." in call.name else ""
    return "" if "(" in owner or "[" in owner else owner


def root_of(node: SgNode | None) -> str:
    """The name a chain of calls and members starts from: ``res.status(400).send`` → res."""
    while node is not None and node.kind() in ("member_expression", "call_expression", "subscript_expression"):
        node = node.field("object") if node.kind() != "call_expression" else node.field("function")
    return node.text() if node is not None and node.kind() in ("identifier", "this") else ""


def call_sinks(call: Call, modules: frozenset[str]) -> None:
    """Report what ``call`` does with its arguments, if it is a sink."""
    site, name, owner = call.site, call.method, owner_of(call)
    nodes, args = call.arg_nodes, call.args
    first = args[0] if args else Value()
    callee = site.node.field("function") or site.node.field("constructor")
    member = callee is not None and callee.kind() == "member_expression"
    process = bool(_PROCESS.search(owner)) or not owner or owner in modules
    if name in _RUNNERS and process:
        site.report(JS_SINKS["command"], first, f"{name}()")
    elif name in _PROGRAMS and process:
        shell = any(n.kind() == "object" and re.search(r"\bshell\s*:\s*(?!false)", n.text()) for n in nodes)
        site.report(JS_SINKS["command"], union(args) if shell else first, f"{name}()")
    elif name == "eval" and owner in _GLOBAL:
        site.report(JS_SINKS["code"], first, "eval()")
    elif name == "Function" and owner in _GLOBAL:
        site.report(JS_SINKS["code"], union(args), "Function()")
    elif name in _VM and owner == "vm":
        site.report(JS_SINKS["code"], first, f"vm.{name}()")
    elif name in ("setTimeout", "setInterval") and nodes:
        if nodes[0].kind() in ("string", "template_string", "binary_expression"):
            site.report(JS_SINKS["code"], first, f"{name}()")
    elif name in _TEMPLATE_CALLS and owner.rsplit(".", 1)[-1] in _TEMPLATE_ENGINES:
        site.report(JS_SINKS["code"], first, f"{owner}.{name}()")
    elif name == "require" and not owner and nodes and nodes[0].kind() != "string":
        site.report(JS_SINKS["code"], first, "require()")
    elif member and (name in _SQL_CALLS or _SQL_RAW.search(name)) and args:
        query = first
        if nodes[0].kind() == "object":
            query = next((first.part(k) for k in ("sql", "text", "query") if first.parts and k in first.parts), Value())
        if _SQL_RAW.search(name) or "text:sql" in query.tags or (isinstance(query.const, str) and is_sql(query.const)):
            site.report(JS_SINKS["sql"], query, f"{name}()")
    if member and args:
        nosql(call, name)
    if name in _FS_CALLS and (_FS.search(owner) or not owner):
        for value in args[: 2 if name.startswith(("rename", "copyFile")) else 1]:
            site.report(JS_SINKS["path"], value, f"{owner + '.' if owner else ''}{name}()")
    if root_of(callee) in _RESPONSES:
        response(call, name)
    if (name in ("assign", "replace") and owner in _LOCATIONS) or (name == "open" and owner == "window"):
        site.report(JS_SINKS["redirect"], first, f"{owner}.{name}()")
    if (name in ("write", "writeln") and owner == "document") or name == "insertAdjacentHTML":
        site.report(JS_SINKS["xss"], args[-1] if args else Value(), f"{owner}.{name}()")
    if name.startswith("bypassSecurityTrust") and args:
        labels = ("input",) if site.constant(nodes[0]) is not NO_CONST else ("input", "unknown")
        site.report(JS_SINKS["xss"], first, f"{name}()", labels)
