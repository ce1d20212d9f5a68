"""Python code through bandit, in memory: one bandit test set per process, one AST pass per text.

bandit's manager is built for files; its node visitor is not, so the visitor is driven directly
with the code bytes (``BanditNodeVisitor.process``) and the test set built once. Findings below
medium severity (``import subprocess``, a list-form ``subprocess.run``) are noise here, and so are
low-confidence ones, except SQL built by interpolation with a value spliced into a comparison.
"""

from __future__ import annotations

import ast
import copy
import functools
import io
import logging
import re
import textwrap
import threading
import warnings
from typing import Any

from watcher.core.interjection import Severity
from watcher.roles._security_model import RANK, Finding
from watcher.roles._security_pyast import analyse, blocks, python_tree
from watcher.roles._security_sql import mentions_credentials
from watcher.roles._security_taint import reconcile, taint_scan

__all__ = ["python_findings"]

_RANKING = {"UNDEFINED": 0, "LOW": 1, "MEDIUM": 2, "HIGH": 3}
# a request without a timeout is robustness, not security; /tmp paths are routine in notebooks
_IGNORED = frozenset({"B113", "B108"})
# reported at LOW severity only (asserts, try/except/pass, hard-coded password heuristics), which
# ``_finding`` drops: with the ignored ones, bandit does not run them at all
_NOT_RUN = _IGNORED | frozenset({"B101", "B105", "B106", "B107", "B110", "B112"})
_HINTS = frozenset({"B303", "B304", "B324"})  # md5/sha1: often checksums in data work
_ABOUT_CONSTANTS = frozenset({"B102", "B301", "B302", "B307", "B608"})
_PASSWORDS = re.compile(r"(?i)passw|pwd|passwd|credential")
_ADVICE = {
    "B102": "exec() runs whatever code the string holds; avoid it on anything built from input",
    "B104": "the service is reachable from other hosts; bind to 127.0.0.1 unless that is intended",
    "B201": "the Werkzeug debugger lets anyone who reaches it run code; never run Flask with debug=True outside your machine",
    "B301": "unpickling runs code chosen by whoever wrote the data; only unpickle data you produced, or use JSON",
    "B307": "eval() runs any expression in its input; use ast.literal_eval() or parse the input explicitly",
    "B310": "urlopen() also accepts file:// and custom schemes; check the URL scheme first",
    "B323": "an unverified SSL context lets anyone on the network path impersonate the server; keep verification on",
    "B324": "MD5/SHA1 are broken for security uses; use hashlib.sha256, or pass usedforsecurity=False for checksums",
    "B501": "without certificate checks anyone on the network path can impersonate the server; drop verify=False (or point verify at a CA bundle)",
    "B506": "yaml.load can build arbitrary Python objects from the file; use yaml.safe_load()",
    "B602": 'a value such as `main; rm -rf ~` would run as a command; pass a list without shell=True, e.g. subprocess.run(["git", "checkout", branch], check=True)',
    "B605": "a value containing `;` or `$(...)` would run as a command; use subprocess.run([...], check=True) with a list of arguments",
    "B608": 'a value containing a quote rewrites the query; pass the values as query parameters, e.g. cur.execute("... WHERE name = ?", (name,))',
    "B701": "templates render user input unescaped (XSS); create the Environment with autoescape=True or select_autoescape()",
}
_TITLES = {
    "B102": "exec() of dynamic code",
    "B104": "Server bound to all interfaces",
    "B201": "Flask app run with debug=True",
    "B301": "Unpickling data that may be untrusted",
    "B307": "eval() of dynamic input",
    "B324": "Weak hash (MD5/SHA1)",
    "B501": "TLS verification disabled (verify=False)",
    "B506": "Unsafe yaml.load",
    "B602": "Shell command built from variables (shell=True)",
    "B605": "Shell command built from variables (os.system)",
}
AUTH_WORDS = re.compile(r"(?i)\b\w*(?:login|log_in|signin|sign_in|authenticat|passw(?:or)?d|credential)\w*\b")
# whether AUTH_WORDS occurs, for lower-cased ASCII text: a word holding one of these is a match of it,
# and re searches a case-insensitive alternation some ten times slower than this
_AUTH_LOWER = re.compile(r"login|log_in|signin|sign_in|authenticat|passw(?:or)?d|credential")
_VALUE_SPLICE = re.compile(r"""(?i)(?:=|<|>|\blike|\bin\s*\(|\bvalues\s*\(|,)\s*['"]?\s*(?:\{|%s|%\(|['"]\s*\+)""")

# bandit's tests of strings whose reading ``_visitor`` knows: B104 compares a string with "0.0.0.0";
# B608 reads the SQL a string makes with its parent (``+``/``%``, an f-string, ``.format``/``.replace``)
_STRING_TESTS = frozenset({"B104", "B608"})
_STRING_PARENTS = (ast.BinOp, ast.JoinedStr, ast.Attribute)

_PRELUDE = (
    "import os, subprocess, pickle, yaml, requests, hashlib, ssl, urllib.request, tempfile, marshal, jinja2, dill\n"
)

_lock = threading.Lock()
_walking = threading.Lock()
_engine: tuple[Any, Any, Any, Any, re.Pattern[str]] | None = None


@functools.cache
def _prelude() -> ast.Module:
    return ast.parse(_PRELUDE)


def _bandit() -> tuple[Any, Any, Any, Any, re.Pattern[str]]:
    """bandit's meta-AST, its test set (and the same without the file-level test), its node visitor and
    what the file-level test looks for; built on first use (a few hundred ms) and then shared.

    The file-level test (B613) looks for bidirectional control characters line by line, catching
    an exception per line and character: a text without any of them skips it.
    """
    global _engine
    with _lock:
        if _engine is None:
            with warnings.catch_warnings():
                # importing bandit 1.9 loads its plugins through stevedore with the deprecated
                # verify_requirements argument; not ours to fix, and harmless
                warnings.filterwarnings("ignore", "The verify_requirements argument", DeprecationWarning)
                from bandit.core import config, manager

                mgr = manager.BanditManager(config.BanditConfig(), "file")
            logging.getLogger("bandit").setLevel(logging.ERROR)  # it logs each unparsable text
            tests = mgr.b_ts
            tests.tests = {
                kind: run for kind, ts in tests.tests.items() if (run := [t for t in ts if t._test_id not in _NOT_RUN])
            }
            from bandit.plugins.trojansource import BIDI_CHARACTERS

            plain = copy.copy(tests)
            plain.tests = {kind: ts for kind, ts in tests.tests.items() if kind != "File"}
            bidi = re.compile("|".join(map(re.escape, BIDI_CHARACTERS)))
            strings = {t._test_id for t in tests.tests.get("Str", ())}
            _engine = (mgr.b_ma, tests, plain, _visitor(tests, lone_strings=strings <= _STRING_TESTS), bidi)
        return _engine


def _no_nosec(context: Any, test_result: Any = None) -> None:
    """bandit's ``_get_nosecs_from_contexts`` when the file has no ``# nosec`` lines: no test is skipped."""
    return None


def _visitor(tests: Any, *, lone_strings: bool) -> Any:
    """bandit's node visitor, without its per-node work on the nodes nothing reads.

    bandit builds a context (a dict, the node's line range) for every node it walks; on a name, an
    operator or an argument list no test and no ``visit_`` method reads it. The walk only passes
    through those, each still linked to its parent and next sibling as bandit's tests expect; the
    findings are the same.

    ``lone_strings``: the string tests are only those of ``_STRING_TESTS``, which read a string on
    its own only when it is ``"0.0.0.0"``; any other string they read through its parent (a
    concatenation, an f-string, a ``.format``/``.replace``). The other strings (a dict's keys, a
    call's arguments: most of a file's strings) are passed through too.
    """
    from bandit.core.node_visitor import BanditNodeVisitor

    read = frozenset(
        {n.removeprefix("visit_") for n in dir(BanditNodeVisitor) if n.startswith("visit_")} | set(tests.tests)
    )

    class Visitor(BanditNodeVisitor):  # type: ignore[misc]  # bandit has no type hints
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            if not self.tester.nosec_lines:
                # no `# nosec` lines given: bandit would still walk the whole line range of the
                # statement around every node to find none (a 6,000-line dict literal: 72 million
                # lookups); with none given, its answer is always "none"
                self.tester._get_nosecs_from_contexts = _no_nosec

        def generic_visit(self, node: ast.AST) -> None:
            """bandit's walk (each child linked to its parent and next sibling), passing through unread nodes."""
            for field in node._fields:
                value = getattr(node, field, None)
                if isinstance(value, list):
                    last = len(value) - 1
                    for idx, item in enumerate(value):
                        if isinstance(item, ast.AST):
                            item._bandit_sibling = value[idx + 1] if idx < last else None  # type: ignore[attr-defined]
                            item._bandit_parent = node  # type: ignore[attr-defined]
                            self._walk(item)
                elif isinstance(value, ast.AST):
                    value._bandit_sibling = None  # type: ignore[attr-defined]
                    value._bandit_parent = node  # type: ignore[attr-defined]
                    self._walk(value)

        def _walk(self, node: ast.AST) -> None:
            if type(node).__name__ not in read or (
                type(node) is ast.Constant and not _read_constant(node)
            ):  # a number, True, None: bandit's visit_Constant reads only strings and bytes
                self.generic_visit(node)
            elif self.pre_visit(node):
                self.visit(node)
                self.generic_visit(node)
                self.post_visit(node)

    def _read_constant(node: ast.Constant) -> bool:
        value = node.value
        if isinstance(value, bytes):
            return True
        if not isinstance(value, str):
            return False
        return (
            not lone_strings
            or value == "0.0.0.0"  # the value B104 looks for
            or isinstance(node._bandit_parent, _STRING_PARENTS)  # type: ignore[attr-defined]
        )

    return Visitor


def python_findings(code: str) -> list[Finding]:
    """The taint engine's flows in ``code``, bandit's medium-and-above findings and the rules beyond them.

    The taint engine reads every Python syntax (tree-sitter); bandit and the AST rules read what
    this interpreter parses — top-level blocks that do not parse (newer syntax, a Python 2 print)
    are left out of bandit's scan only. Lines tree-sitter cannot read either come back as a
    notice. Findings about a sink the engine proved safe are dropped (``_security_taint``).
    """
    lines = code.splitlines()  # as written: fixes keep the original indentation
    scan = taint_scan(code)
    try:
        parsed = _parse(code)
        others = [f for f in _bandit_findings(parsed[0], lines, parsed[1]) if f is not None] if parsed else []
    except RecursionError:  # nested thousands deep (generated code): more than the parser can hold
        others = []
    return reconcile(others, scan, lines)


@functools.lru_cache(maxsize=64)
def _parse(code: str) -> tuple[str, ast.Module, list[tuple[int, int]]] | None:
    """(the text bandit reads, its tree, the line ranges left out), or None for text that is not Python."""
    tree = python_tree(code)
    if tree is not None:
        return code, tree, []
    dedented = textwrap.dedent(code)  # an Edit fragment from a function body
    tree = python_tree(dedented) if dedented != code else None
    if tree is not None:
        return dedented, tree, []
    lines = code.splitlines()
    skipped: list[tuple[int, int]] = []
    ranges = list(blocks(code))
    for _ in range(min(len(ranges), 12)):
        text = "\n".join("" if any(a <= n <= b for a, b in skipped) else line for n, line in enumerate(lines, 1))
        try:
            tree = ast.parse(text)
        except SyntaxError as exc:
            bad = next(((a, b) for a, b in ranges if a <= (exc.lineno or 0) <= b), None)
            if bad is None or bad in skipped:
                return None
            skipped.append(bad)
            continue
        except ValueError:
            return None
        # mostly Python: some of it parsed and most of it was kept
        kept = sum(1 for n, line in enumerate(lines, 1) if line.strip() and not any(a <= n <= b for a, b in skipped))
        return (text, tree, sorted(skipped)) if kept >= 2 else None
    return None


def _bandit_findings(code: str, lines: list[str], tree: ast.Module) -> list[Finding | None]:
    meta, tests, plain, walker, bidi = _bandit()
    from bandit.core import metrics  # loaded by _bandit()

    data = code.encode("utf-8", "replace")
    run = tests if bidi.search(code) else plain
    visitor = walker("watched.py", io.BytesIO(data), meta, run, False, {}, metrics.Metrics())
    with _walking:  # bandit marks the nodes it walks, and the tree is shared with the AST rules
        try:
            # bandit resolves calls through the imports it saw; a fragment or a later notebook cell
            # uses modules imported elsewhere, so the imports of a prelude are walked first
            visitor.generic_visit(_prelude())
            before = len(visitor.tester.results)
            visitor.process(tree)  # the tree parsed already: ast.parse returns a tree it is given as is
        except (SyntaxError, ValueError):
            return []
        except Exception:  # noqa: BLE001 - a bandit plugin bug must never break a watcher
            return []
        analysis = analyse(tree, lines)
    auth = bool(_AUTH_LOWER.search(code.lower()) if code.isascii() else AUTH_WORDS.search(code))
    found: list[Finding | None] = []
    for issue in visitor.tester.results[before:]:  # the prelude's own findings are not the code's
        if issue.test_id in _ABOUT_CONSTANTS and issue.lineno in analysis.constant_lines:
            continue  # eval("1 + 1"), pickle.loads(b"..."), "SELECT ... age=" + "3"
        if issue.test_id == "B506" and issue.lineno in analysis.safe_yaml_lines:
            continue
        found.append(_finding(issue, lines, auth))
    flagged = [f for f in found if f is not None]
    for extra in analysis.findings:
        # bandit's finding on the same lines has the fix; keep the more severe of the two
        same = [f for f in flagged if f.start_line <= extra.last_line and extra.start_line <= f.last_line]
        if same and RANK[extra.severity] >= min(RANK[f.severity] for f in same):
            continue
        found.append(extra)
    return found


def _finding(issue: Any, lines: list[str], auth: bool) -> Finding | None:
    test_id = issue.test_id
    sev, conf = _RANKING.get(issue.severity, 0), _RANKING.get(issue.confidence, 0)
    start = max(int(issue.lineno or 1), 1)
    end = max([start, *[int(n) for n in (issue.linerange or ()) if n]])
    snippet = "\n".join(lines[start - 1 : end])
    if test_id in _IGNORED or sev < 2:
        return None
    if conf < 2 and not (test_id == "B608" and _VALUE_SPLICE.search(snippet)):
        return None
    severity: Severity = "hint" if test_id in _HINTS and not _PASSWORDS.search(snippet) else "warning"
    title = _TITLES.get(test_id) or issue.text.split(". ")[0].rstrip(".")
    if test_id in _HINTS and severity == "warning":
        title = "Weak hash (MD5/SHA1) for passwords"
    if test_id == "B608":
        title = "SQL built by string formatting"
        if auth and mentions_credentials(snippet):  # the query itself handles credentials
            severity, title = "critical", "SQL injection in authentication code"
    advice = _ADVICE.get(test_id, "")
    cwe = f", CWE-{issue.cwe.id}" if getattr(issue, "cwe", None) and issue.cwe.id else ""
    explanation = f"{advice[0].upper()}{advice[1:]}" if advice else issue.text.rstrip(".")
    explanation += f" (bandit {test_id}{cwe})."
    return Finding(
        rule=test_id,
        title=title,
        severity=severity,
        explanation=explanation,
        start_line=start,
        end_line=end,
        replacement=_fix(test_id, lines, start, end),
        fingerprint=f"{test_id}:{' '.join(snippet.split())}",
    )


def _fix(test_id: str, lines: list[str], start: int, end: int) -> str | None:
    if start != end or start > len(lines):
        return None
    line = lines[start - 1]
    if test_id == "B506" and "yaml.load(" in line and "Loader" not in line:
        return line.replace("yaml.load(", "yaml.safe_load(")
    if test_id == "B501":
        fixed = re.sub(r",\s*verify\s*=\s*False", "", line)
        return fixed if fixed != line else None
    if test_id == "B608":
        return _parameterised(line, "\n".join(lines))
    return None


_EXEC_FSTRING = re.compile(r"""(?P<call>\.execute\()f(?P<q>["'])(?P<sql>(?:(?!(?P=q)).)*)(?P=q)\s*\)""")


def _parameterised(line: str, code: str) -> str | None:
    """``cur.execute(f"... '{x}' ...")`` as ``cur.execute("... ? ...", (x,))`` for a known driver."""
    if re.search(r"^\s*(?:import|from)\s+sqlite3\b", code, re.M):
        mark = "?"
    elif re.search(r"^\s*(?:import|from)\s+(?:psycopg2?|pymysql|MySQLdb|mysql\.connector)\b", code, re.M):
        mark = "%s"
    else:
        return None
    match = _EXEC_FSTRING.search(line)
    if match is None:
        return None
    params: list[str] = []

    def hole(m: re.Match[str]) -> str:
        params.append(m.group(2))
        return mark

    sql = re.sub(r"""(['"]?)\{([A-Za-z_][\w.]*)\}\1""", hole, match.group("sql"))
    if not params or "{" in sql or f"%{mark}" in sql or f"{mark}%" in sql:
        return None
    q = match.group("q")
    args = f"({params[0]},)" if len(params) == 1 else f"({', '.join(params)})"
    return line[: match.start()] + f"{match.group('call')}{q}{sql}{q}, {args})" + line[match.end() :]
