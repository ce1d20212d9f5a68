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
from watcher.roles._security_jsast import js_ast_findings, parse, process_modules
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
        sinks = Sinks(process_modules(text))
        Flow(root, sinks).run()
    except RecursionError:  # an expression nested thousands deep (generated code): the SQL rule still ran
        return with_fix
    flows = list(sinks.findings.values())
    spans = [(min(sinks.sources[key], f.start_line), f.last_line) for key, f in sinks.findings.items()]
    proved = {key for key, clean in sinks.clean.items() if clean}
    kept: list[Finding] = []
    for finding in [*with_fix, *structural]:
        lines = range(finding.start_line, finding.last_line + 1)
        rule = "js:sql-injection" if finding.rule == "sql-injection-js" else finding.rule
        if any((rule, line) in proved for line in lines) or (
            rule == "js:sql-injection"
            and all((sinks.clean.get(("js:sql-built", line), True)) for line in lines)
            and any(("js:sql-built", line) in proved for line in lines)
        ):
            continue  # the sink (or the SQL text) on these lines only ever receives clean values
        told = next(
            (i for i, f in enumerate(flows) if f.rule == rule and _within(finding, spans[i])),
            None,
        )
        if told is None:
            kept.append(finding)
            continue
        flow = flows[told]  # the flow tells this problem: it takes the lines and the fix
        severity = finding.severity if RANK[finding.severity] < RANK[flow.severity] else flow.severity
        start, end = min(flow.start_line, finding.start_line), max(flow.last_line, finding.last_line)
        if finding.replacement is not None:  # a fix replaces exactly the lines it was written for
            start, end = finding.start_line, finding.last_line
        flows[told] = replace(
            flow, severity=severity, start_line=start, end_line=end, replacement=finding.replacement or flow.replacement
        )
    structural_sql = [f for f in kept if f.rule == "js:sql-injection"]
    kept = [
        f for f in kept if not (f in structural_sql and any(_within(f, (s.start_line, s.last_line)) for s in with_fix))
    ]
    return [*flows, *kept]


def _within(finding: Finding, span: tuple[int, int]) -> bool:
    """Whether a finding's lines meet a flow's, from its source to its sink."""
    return finding.start_line <= span[1] and span[0] <= finding.last_line
