"""All JavaScript/TypeScript findings of one text: taint flows, structural rules and SQL fixes.

Three readers look at the text: the taint analysis (``_security_js_flow``: a value from a
request, the URL or an API response reaching a sink), the structural rules (``_security_jsast``:
dangerous calls with values that are not constants) and the SQL rule that writes the
parameterised fix (``_security_js``). They are merged so each problem is told once: a flow's
finding tells the story (class, CWE, source and line, the variable it went through) and keeps
the mechanical fix of a SQL finding on the same lines; a structural finding on a sink the flow
analysis proved clean on every path (a constant, a sanitized or validated value) is dropped.
"""

from __future__ import annotations

from dataclasses import replace

from watcher.roles._security_js import sql_findings
from watcher.roles._security_js_flow import Flow
from watcher.roles._security_js_sinks import CLASSES, Sinks
from watcher.roles._security_jsast import js_ast_findings, parse
from watcher.roles._security_model import RANK, Finding

__all__ = ["javascript_findings"]

_MAX_PARSED = 400_000  # characters of JavaScript the parser reads: past it, a bundle or build output
_FLOW_RULES = frozenset(rule for rule, *_ in CLASSES.values())


def javascript_findings(text: str, path: str = "") -> list[Finding]:
    """Every JavaScript/TypeScript finding of ``text``, each problem once."""
    with_fix = sql_findings(text, path=path)
    if len(text) > _MAX_PARSED:
        return with_fix
    try:
        root = parse(text, path)
        structural = js_ast_findings(text, path=path, root=root)
        sinks = Sinks()
        Flow(root, sinks).run()
    except RecursionError:  # an expression nested thousands deep (generated code): the SQL rule still ran
        return with_fix
    flows = list(sinks.findings.values())
    proved = {key for key, clean in sinks.clean.items() if clean}
    kept: list[Finding] = []
    for finding in [*with_fix, *structural]:
        lines = range(finding.start_line, finding.last_line + 1)
        rule = "js:sql-injection" if finding.rule == "sql-injection-js" else finding.rule
        if finding.rule != "sql-injection-js" and any((rule, line) in proved for line in lines):
            continue  # the sink on these lines only ever receives clean values
        told = next((i for i, f in enumerate(flows) if f.rule == rule and _overlap(f, finding)), None)
        if told is None:
            kept.append(finding)
        elif finding.replacement is not None or RANK[finding.severity] < RANK[flows[told].severity]:
            flow = flows[told]
            start, end = min(flow.start_line, finding.start_line), max(flow.last_line, finding.last_line)
            severity = finding.severity if RANK[finding.severity] < RANK[flow.severity] else flow.severity
            flows[told] = replace(
                flow, severity=severity, start_line=start, end_line=end, replacement=finding.replacement
            )
            if finding.replacement is not None:  # the fix replaces exactly the lines it was written for
                flows[told] = replace(flows[told], start_line=finding.start_line, end_line=finding.last_line)
    structural_sql = [f for f in kept if f.rule == "js:sql-injection"]
    kept = [f for f in kept if not (f in structural_sql and any(_overlap(f, s) for s in with_fix))]
    return [*flows, *kept]


def _overlap(a: Finding, b: Finding) -> bool:
    return a.start_line <= b.last_line + 15 and b.start_line <= a.last_line and _near(a, b)


def _near(a: Finding, b: Finding) -> bool:
    """b ends on a's lines or up to 15 lines above them (a query built above the call that runs it)."""
    return a.start_line - 15 <= b.last_line <= a.last_line or b.start_line <= a.start_line <= b.last_line
