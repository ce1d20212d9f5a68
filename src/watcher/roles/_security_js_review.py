"""All JavaScript/TypeScript findings of one text: taint flows, structural rules and SQL fixes.

Three readers look at the text: the taint engine with the JavaScript spec (``taint.javascript``:
a value from a request, the URL or an API response reaching a sink), the structural rules (``_security_jsast``:
dangerous calls with values that are not constants) and the SQL rule that writes the
parameterised fix (``_security_js``). They are merged so each problem is told once: a flow's
finding tells the story (class, CWE, source and line, the variable it went through) and keeps
the mechanical fix of a SQL finding on the same lines; a structural finding on a sink the flow
analysis proved clean on every path (a constant, a sanitized or validated value) is dropped.
"""

from __future__ import annotations

from dataclasses import replace

from watcher.roles._security_js import sql_findings
from watcher.roles._security_jsast import js_ast_findings, parse, process_modules
from watcher.roles._security_model import RANK, Finding
from watcher.roles.taint import Analysis, Flow, analyse
from watcher.roles.taint.javascript import JavaScriptSpec
from watcher.roles.taint.javascript_stores import JS_SINKS

__all__ = ["CLASSES", "javascript_findings"]

_MAX_PARSED = 400_000  # characters of JavaScript the parser reads: past it, a bundle or build output
# class → (rule, the engine's sink, the harm); the title, CWE and fix are the JavaScript spec's
_HARM = {
    "cmd": ("js:command-injection", "command", "a value holding `;`, `|` or `$(...)` runs commands of its own"),
    "sql": ("js:sql-injection", "sql", "input containing quotes rewrites the query"),
    "code": ("js:code-exec", "code", "the value runs as JavaScript with the server's or the page's rights"),
    "path": ("js:path-traversal", "path", "`../` in the value reaches files outside the intended directory"),
    "xss": ("js:xss", "xss", "markup in the value runs as script in the visitor's browser"),
    "redirect": ("js:open-redirect", "redirect", "a link can send visitors to any site under this site's name"),
    "nosql": (
        "js:nosql-injection",
        "nosql",
        "an object from the request carries operators such as `$ne` or `$gt` (or code in `$where`) and changes "
        "what the query matches or updates",
    ),
}
# class → (rule, what it is, CWE, the risk and the fix)
CLASSES: dict[str, tuple[str, str, str, str]] = {
    cls: (rule, JS_SINKS[sink].title, f"CWE-{JS_SINKS[sink].cwe}", f"{harm}. {JS_SINKS[sink].fix}.")
    for cls, (rule, sink, harm) in _HARM.items()
}
_SINK_CLASS = {sink: cls for cls, (_rule, sink, _harm) in _HARM.items()}
_RULE_SINK = {rule: sink for rule, sink, _harm in _HARM.values()}


def javascript_findings(text: str, path: str = "") -> list[Finding]:
    """Every JavaScript/TypeScript finding of ``text``, each problem once."""
    with_fix = sql_findings(text, path=path)
    if len(text) > _MAX_PARSED:
        return with_fix
    try:
        root = parse(text, path)
        structural = js_ast_findings(text, path=path, root=root)
        spec = JavaScriptSpec(process_modules(text))
        analysis = analyse(root, spec)
    except RecursionError:  # an expression nested thousands deep (generated code): the SQL rule still ran
        return with_fix
    source_lines = text.splitlines()
    told = {(f.rule, f.start_line): f for f in (_told(flow, source_lines) for flow in analysis.flows) if f is not None}
    entered = {key: min(flow.source.line, key[1]) for flow in analysis.flows for key in [_key(flow)]}
    for line, check, what in spec.notes:
        told.setdefault(("js:open-redirect", line), _substring_check(line, check, what))
        entered.setdefault(("js:open-redirect", line), line)
    flows = list(told.values())
    spans = [(entered.get((f.rule, f.start_line), f.start_line), f.last_line) for f in flows]
    built = _sql_built(analysis)
    kept: list[Finding] = []
    for finding in [*with_fix, *structural]:
        lines = range(finding.start_line, finding.last_line + 1)
        rule = "js:sql-injection" if finding.rule == "sql-injection-js" else finding.rule
        sink = _RULE_SINK.get(rule, "")
        if any(analysis.verdicts.get(line, {}).get(sink) == "safe" for line in lines) or (
            rule == "js:sql-injection" and all(built.get(n, True) for n in lines) and any(built.get(n) for n in lines)
        ):
            continue  # the sink (or the SQL text) on these lines only ever receives clean values
        at = next((i for i, f in enumerate(flows) if f.rule == rule and _within(finding, spans[i])), None)
        if at is None:
            kept.append(finding)
            continue
        flow = flows[at]  # the flow tells this problem: it takes the lines and the fix
        severity = finding.severity if RANK[finding.severity] < RANK[flow.severity] else flow.severity
        start, end = min(flow.start_line, finding.start_line), max(flow.last_line, finding.last_line)
        if finding.replacement is not None:  # a fix replaces exactly the lines it was written for
            start, end = finding.start_line, finding.last_line
        flows[at] = replace(
            flow, severity=severity, start_line=start, end_line=end, replacement=finding.replacement or flow.replacement
        )
    structural_sql = [f for f in kept if f.rule == "js:sql-injection"]
    kept = [
        f for f in kept if not (f in structural_sql and any(_within(f, (s.start_line, s.last_line)) for s in with_fix))
    ]
    return [*flows, *kept]


def _key(flow: Flow) -> tuple[str, int]:
    cls = _SINK_CLASS.get(flow.sink.name, flow.sink.name)
    return (CLASSES[cls][0] if cls in CLASSES else "", flow.line)


def _told(flow: Flow, lines: list[str]) -> Finding | None:
    """A flow as a finding that tells its story: class, CWE, the source and its line, the variable."""
    cls = _SINK_CLASS.get(flow.sink.name, flow.sink.name)
    if cls not in CLASSES:
        return None
    rule, label, cwe, risk = CLASSES[cls]
    source = flow.source
    through = f" through `{source.via[-1]}`" if source.via else ""
    origin = source.name if source.label == "input" else f"a value not known to be safe ({source.name})"
    origin = f"{origin[:-1]}, line {source.line})" if origin.endswith(")") else f"{origin} (line {source.line})"
    text = f"{origin[0].upper()}{origin[1:]} reaches `{flow.callee}` (line {flow.line}){through}: {risk}"
    snippet = " ".join(" ".join(lines[flow.line - 1 : flow.end_line]).split())[:200]
    return Finding(rule, f"{label} ({cwe})", "warning", text, flow.line, flow.end_line, fingerprint=f"{rule}:{snippet}")


def _substring_check(line: int, check: str, what: str) -> Finding:
    """A URL compared with an allow-list entry by ``includes``/``startsWith``: any URL holding it passes."""
    rule, label, cwe, _risk = CLASSES["redirect"]
    text = (
        f"`{what}` is checked against an allow-list of URLs with `{check}()` (line {line}): a URL that merely "
        f"contains or starts with an allowed one (`https://evil.example/?https://allowed…`, "
        f"`https://allowed.example.evil.example`) passes, so the check lets redirects and requests go anywhere. "
        "Compare the whole URL with each entry (`===`), or parse it and compare its origin."
    )
    return Finding(rule, f"{label} ({cwe})", "warning", text, line, line, fingerprint=f"{rule}:{line}:{check}")


def _sql_built(analysis: Analysis) -> dict[int, bool]:
    """Lines where SQL text was built and stored: whether no value there can change the statement."""
    return {
        line: all(o.safe_for("sql") for o in value.all_origins())
        for line, value in analysis.assigned.items()
        if "text:sql" in value.tags
    }


def _within(finding: Finding, span: tuple[int, int]) -> bool:
    """Whether a finding's lines meet a flow's, from its source to its sink."""
    return finding.start_line <= span[1] and span[0] <= finding.last_line
