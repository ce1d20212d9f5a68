"""Python through the taint engine: flows as findings, and what the flows say about bandit's findings.

The code is parsed with tree-sitter's Python grammar (``ast-grep-py``), so Python 3.12 f-strings,
``type`` statements and ``except*`` are read whatever interpreter runs the watcher. A flow becomes
a finding that tells its story — class and CWE, the source with its line, the sink line as the
location, the variables in between — with the fix that fits its class. Lines tree-sitter cannot
read become a visible notice. bandit's and the AST rules' findings about a sink the engine proved
safe (constant on every path, sanitised, validated, in a branch that never runs) are dropped;
those about the same sink as a flow give way to the flow.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from watcher.core.interjection import Severity
from watcher.core.logs import logger
from watcher.roles._security_model import Finding
from watcher.roles._security_pyast import python_tree
from watcher.roles.taint import Analysis, Flow, Origin, analyse
from watcher.roles.taint.python import PythonSpec

__all__ = ["TaintScan", "reconcile", "taint_scan"]

log = logger(__name__)

if TYPE_CHECKING:
    from ast_grep_py import SgNode

# bandit's tests and the AST rules, by the sink class the engine decides for them
_CLASS_OF = {
    **dict.fromkeys(("B602", "B604", "B605", "B606", "B607", "B609", "py:command"), "command"),
    **dict.fromkeys(("B102", "B307"), "code"),
    **dict.fromkeys(("B301", "B302", "B506", "py:deserialise", "py:yaml-unsafe"), "deserialization"),
    **dict.fromkeys(("B608", "py:sql-built"), "sql"),
    **dict.fromkeys(("B703", "B704"), "xss"),
}
# bandit's XML tests fire on every use of a parser; the engine reports only parsers resolving entities
_XML_TESTS = re.compile(r"^B(?:31[3-9]|320|40[5-9]|410)$")
_LABEL = {"input": "", "local": " (local input)", "environment": " (environment)"}
_MAGIC = re.compile(r"^(\s*)[%!]")
_PAYLOAD = re.compile(
    r"!!python/|\b(?:os|posix|nt|subprocess|builtins)\b[^\n]{0,12}\b(?:system|popen|exec|eval|call|run)\b"
)


@dataclass(frozen=True, slots=True)
class TaintScan:
    """The engine's analysis of one text, its flows as findings, and notices of lines not read."""

    analysis: Analysis | None
    findings: tuple[Finding, ...]


@functools.lru_cache(maxsize=64)
def taint_scan(code: str) -> TaintScan:
    """Parse ``code`` with tree-sitter and run the taint engine over it."""
    from ast_grep_py import SgRoot  # imported on first use: a hook that judges no Python never pays for it

    source = _without_magics(code)
    lines = code.splitlines()
    try:
        root = SgRoot(source, "python").root()
        analysis = analyse(root, PythonSpec())
    except RecursionError:  # nested thousands deep (generated code)
        return TaintScan(None, (_notice(1, max(len(lines), 1), "nested too deeply to analyse"),))
    except Exception:  # an analysis bug must cost the flows, never bandit's findings or the session
        log.warning("the taint analysis failed on a %d-line text", len(lines), exc_info=True)
        return TaintScan(None, ())
    found = [_finding(flow, lines) for flow in analysis.flows]
    found += [_notice(a, b, "tree-sitter's Python grammar could not read them") for a, b in _errors(root, source)]
    return TaintScan(analysis, tuple(found))


def reconcile(others: list[Finding], scan: TaintScan, lines: list[str]) -> list[Finding]:
    """bandit's and the AST rules' findings in the light of the flows, then the flows themselves."""
    analysis = scan.analysis
    flows = [f for f in scan.findings if f.rule.startswith("taint:")]
    if analysis is None:
        return [*others, *scan.findings]
    kept: list[Finding] = []
    fixes: dict[int, str] = {}
    for finding in others:
        cls = _CLASS_OF.get(finding.rule)
        if _XML_TESTS.match(finding.rule):
            continue
        if any(a <= finding.start_line and finding.last_line <= b for a, b in analysis.dead):
            continue  # a branch that never runs
        if cls is None:
            kept.append(finding)
            continue
        same = [f for f in flows if f.rule == f"taint:{cls}" and _overlap(f, finding)]
        if same:
            if finding.replacement is not None:
                fixes[same[0].start_line] = finding.replacement
            continue
        if cls == "sql" and any(f.rule == "taint:sql" and 0 <= f.start_line - finding.start_line <= 15 for f in flows):
            continue  # the query built here is reported where it runs
        if _proven_safe(analysis, cls, finding) and not (cls == "deserialization" and _payload(finding, lines)):
            continue
        kept.append(finding)
    flows = [replace(f, replacement=fixes.get(f.start_line, f.replacement)) for f in flows]
    return [*kept, *flows, *(f for f in scan.findings if not f.rule.startswith("taint:"))]


def _proven_safe(analysis: Analysis, cls: str, finding: Finding) -> bool:
    """The engine saw this sink (or the string built here) and it carries no data of unknown provenance."""
    lines = range(finding.start_line, finding.last_line + 1)
    verdicts = [analysis.verdicts[n][cls] for n in lines if cls in analysis.verdicts.get(n, {})]
    if verdicts and analysis.inputs:
        # handler code: the analysis followed the input to its sinks, and none reached this one
        return all(v != "tainted" for v in verdicts)
    if verdicts:
        return all(v == "safe" for v in verdicts)
    built = [analysis.assigned[n] for n in lines if n in analysis.assigned]
    return bool(built) and all(not any(not o.safe_for(cls) for o in v.all_origins()) for v in built)


def _payload(finding: Finding, lines: list[str]) -> bool:
    """A constant that is itself an exploit (``!!python/object/new:os.system``): loading it runs a command."""
    text = "\n".join(lines[finding.start_line - 1 : finding.last_line])
    return bool(_PAYLOAD.search(text))


def _overlap(a: Finding, b: Finding) -> bool:
    return a.start_line <= b.last_line and b.start_line <= a.last_line


def _describe(origin: Origin) -> str:
    if origin.label == "config":
        return origin.name
    if origin.label in ("weak-random", "weak-hash"):
        return f"a value from {origin.name} (line {origin.line})"
    return f"`{origin.name}`{_LABEL.get(origin.label, '')} (line {origin.line})"


def _finding(flow: Flow, lines: list[str]) -> Finding:
    sink, source = flow.sink, flow.source
    story = f"{_describe(source)} reaches {flow.callee} (line {flow.line})"
    if source.label == "config":
        story = f"{source.name[:1].upper()}{source.name[1:]}: {flow.callee} (line {flow.line})"
    path = [v for v in flow.path if v]
    if path:
        story += " through " + " → ".join(f"`{v}`" for v in path)
    others = len({(o.name, o.line) for o in flow.sources}) - 1
    if others > 0:
        story += f" (and {others} more source{'s' if others > 1 else ''})"
    snippet = " ".join(" ".join(lines[flow.line - 1 : flow.end_line]).split())
    severity: Severity = "warning"
    if flow.severity == "critical" and any(o.label == "input" for o in flow.sources):
        severity = "critical"  # only input from the network interrupts at once
    elif flow.severity == "hint":
        severity = "hint"
    return Finding(
        rule=f"taint:{sink.name}",
        title=f"{sink.title} (CWE-{sink.cwe})",
        severity=severity,
        explanation=f"{story}. {sink.fix}.",
        start_line=flow.line,
        end_line=flow.end_line,
        fingerprint=f"taint:{sink.name}:{snippet}",
    )


def _errors(root: SgNode, source: str) -> list[tuple[int, int]]:
    """Line ranges of the parts tree-sitter could not read, merged.

    Besides ``ERROR`` nodes, tree-sitter recovers from some mistakes by inventing a token (a
    ``MISSING`` one, zero characters wide): the statement holding it was guessed, not read. Valid
    code has none, so the tree is walked for them only when the text is not valid Python here.
    """
    ranges = [n.range() for n in root.find_all(kind="ERROR")]
    if not ranges and not _valid(source):
        ranges = [_statement(n).range() for n in _zero_width(root)]
    spans: list[tuple[int, int]] = []
    for r in sorted(ranges, key=lambda r: r.start.line):
        a, b = r.start.line + 1, r.end.line + 1
        if spans and a <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(b, spans[-1][1]))
        else:
            spans.append((a, b))
    return spans


def _without_magics(code: str) -> str:
    """Notebook magics and ``!shell`` lines as ``pass``, with the lines their open brackets continue onto."""
    out: list[str] = []
    depth = 0
    for line in code.split("\n"):
        match = _MAGIC.match(line)
        if depth > 0 or match:
            if depth == 0:
                out.append(f"{match.group(1) if match else ''}pass")
            else:
                out.append("")
            depth = max(0, depth + sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}"))
            continue
        out.append(line)
    return "\n".join(out)


def _valid(source: str) -> bool:
    return python_tree(source) is not None  # the parse bandit and the AST rules read too


def _zero_width(node: SgNode) -> Iterator[SgNode]:
    r = node.range()
    if r.start.index == r.end.index:
        yield node
        return
    for child in node.children():
        yield from _zero_width(child)


def _statement(node: SgNode) -> SgNode:
    """The statement holding ``node``: the ancestor directly under the module or a block."""
    while (parent := node.parent()) is not None and parent.kind() not in ("module", "block"):
        node = parent
    return node


def _notice(start: int, end: int, why: str) -> Finding:
    where = f"lines {start}-{end}" if start != end else f"line {start}"
    return Finding(
        rule="py:not-scanned",
        title=f"{where[:1].upper()}{where[1:]} not scanned",
        severity="hint",
        explanation=f"{where[:1].upper()}{where[1:]} not scanned for security problems: {why}. Check that part "
        "by hand, or fix its syntax so it can be read.",
        start_line=start,
        end_line=end,
        fingerprint=f"py:not-scanned:{start}-{end}",
    )
