"""The ``security`` role: an offline security reviewer of the code an agent or a person runs.

It reads what is new since its last evaluation — notebook cell sources, the content of
Write/Edit-style tool calls, shell commands, and outputs — and reports vulnerabilities:
bandit's findings for Python, credentials (detect-secrets plus the project's key patterns), SQL
spliced together in JavaScript/TypeScript, and dangerous shell commands. All findings of one
evaluation become one interjection, most severe first, with every location; critical ones
(exposed credentials, injection in authentication code, destructive commands) make it urgent.
A finding is reported once: the role remembers what it already said.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from watcher.core.interjection import Continue, Decision, Interject, Interjection, Location, SuggestedFix
from watcher.core.observations import CellExecuted, Observation, ToolCall
from watcher.core.redact import redact
from watcher.core.rules import Role
from watcher.core.spec import Triggers
from watcher.roles._security_js import sql_findings
from watcher.roles._security_js_review import javascript_findings
from watcher.roles._security_model import RANK, Finding
from watcher.roles._security_python import python_findings
from watcher.roles._security_secrets import secret_findings
from watcher.roles._security_shell import shell_findings, tls_findings
from watcher.roles._security_sources import Watched, watched_pieces

__all__ = ["SecurityRole", "scan"]

_MAX_LISTED = 8


def scan(piece: Watched) -> list[Finding]:
    """Every finding in one watched piece of text."""
    scanned = _scan if len(piece.text) <= REVIEWED_CHARS else _scan.__wrapped__  # the cache keeps no megabytes
    return list(scanned(piece.text, piece.language, piece.label, piece.path, piece.secrets))


# How much of one piece the role reads. The code review (bandit, the taint engines) costs about
# 2.5 s and 100 MB a megabyte of ordinary code, and ten times that on a long run of statements; a
# model writes far less than this in one call. Credentials are looked for further, in cheaper scans.
REVIEWED_CHARS = 256 * 1024
SCANNED_FOR_SECRETS_CHARS = 2 * 1024 * 1024


@functools.lru_cache(maxsize=1024)
def _scan(text: str, language: str, label: str, path: str | None, secrets: bool) -> tuple[Finding, ...]:
    # Cached: notebooks re-run the same cell and agents rewrite the same file, and a scan (bandit
    # above all) is the costliest thing a watcher does on a kernel's CPU. Findings are frozen.
    found: list[Finding] = []
    if len(text) > REVIEWED_CHARS and language in ("python", "js", "code", "shell"):
        found.append(_not_reviewed(text, label, path))
        language = "text"  # what is left: the TLS switch and credentials
    text = text[:SCANNED_FOR_SECRETS_CHARS]
    if language == "python":
        found += python_findings(text)
    elif language == "js":
        found += _javascript(text, path or "")
    elif language == "code":
        found += sql_findings(text, path=path or "")
    elif language == "shell":
        found += shell_findings(text)
    if language in ("js", "code", "text", "python"):
        found += tls_findings(text)  # NODE_TLS_REJECT_UNAUTHORIZED = "0" in code
    if secrets:
        filename = path or ("watched.js" if language == "js" else "watched.py")
        found += secret_findings(text, filename=filename, output=language == "output", where=label)
    return tuple(found)


def _not_reviewed(text: str, label: str, path: str | None) -> Finding:
    size = f"{len(text) / 1024 / 1024:.1f} MB" if len(text) >= 1024 * 1024 else f"{len(text) // 1024} KB"
    where = path or label
    read = (
        ""
        if len(text) <= SCANNED_FOR_SECRETS_CHARS
        else f" (credentials only in its first {SCANNED_FOR_SECRETS_CHARS // 1024 // 1024} MB)"
    )
    return Finding(
        rule="too-large",
        title=f"{where} not reviewed for security problems",
        severity="hint",
        explanation=f"{where} is {size}, more than the security review reads in one piece "
        f"({REVIEWED_CHARS // 1024} KB): only credentials were looked for{read}. Review it in smaller files, or by hand.",
        start_line=1,
        fingerprint=f"too-large:{len(text)}",
    )


def _javascript(text: str, path: str) -> list[Finding]:
    """Taint flows, structural rules and the SQL rule's fixes, each problem once."""
    return javascript_findings(text, path)


class SecurityRole(Role):
    """Reviews code, commands and outputs for vulnerabilities and leaked credentials."""

    name = "security"
    description = "Security Reviewer"
    brief = (
        "Watch for security vulnerabilities in the code and commands the parent writes and runs: "
        "SQL injection, XSS, command injection; exposed credentials or API keys (in code and in "
        "output); unsafe file operations and destructive shell commands; insecure cryptographic "
        "practices and disabled TLS verification. Interrupt immediately for critical security "
        "issues; never repeat a secret, show it redacted. Report one finding per problem, each with "
        "its own location line: path:LINE (or path:START-END) for a file, cell:ID:LINE for a "
        "notebook cell, using the line numbers shown."
    )
    triggers = Triggers(on=frozenset({"turn_done", "tool_result", "error", "cell_executed"}))

    def __init__(self) -> None:
        self._reported: set[str] = set()
        self._cells = 0  # cells seen so far: names a cell that has no id

    def evaluate(self, observations: Sequence[Observation], new: int) -> Decision:
        fresh = observations[len(observations) - new :] if new > 0 else ()
        calls = {o.id: o for o in observations if isinstance(o, ToolCall) and o.id}
        hits: list[tuple[Finding, Watched]] = []
        for obs in fresh:
            if isinstance(obs, CellExecuted):
                self._cells += 1
            for piece in watched_pieces(obs, calls, cell_index=self._cells):
                # the same line written twice in a file is two problems: the nth occurrence of a
                # fingerprint is its own finding, while rewriting the same file reports nothing new
                seen: dict[str, int] = {}
                for finding in scan(piece):
                    nth = seen[finding.fingerprint] = seen.get(finding.fingerprint, 0) + 1
                    key = (
                        f"{finding.fingerprint}#{nth}"  # a secret once per session, wherever it shows
                        if finding.rule.startswith("secret:")
                        else f"{piece.path or piece.cell_id or ''}|{finding.fingerprint}#{nth}"
                    )
                    if key not in self._reported:
                        self._reported.add(key)
                        hits.append((finding, piece))
        if not hits:
            note = f"checked {len(fresh)} new observations: no new security findings"
            return Continue(note=note)
        hits.sort(key=lambda hit: RANK[hit[0].severity])
        return Interject(_interjection(hits), note=f"{len(hits)} security findings")


def _location(finding: Finding, piece: Watched) -> Location | None:
    if piece.path is None and not piece.in_cell:
        return None
    cell: dict[str, Any] = {}
    if piece.path is None:  # a cell: its id, or else what else names it
        cell = (
            {"cell_id": piece.cell_id}
            if piece.cell_id is not None
            else {"execution_count": piece.execution_count, "cell_index": piece.cell_index}
        )
    if piece.language == "output":  # printed by the cell: point at the cell, not at a line of output
        return Location(path=piece.path, **cell)
    return Location(path=piece.path, start_line=finding.start_line, end_line=finding.last_line, **cell)


def _interjection(hits: list[tuple[Finding, Watched]]) -> Interjection:
    locations: list[Location] = []
    fix: SuggestedFix | None = None
    lines = []
    for finding, piece in hits:
        loc = _location(finding, piece)
        if loc is not None and loc not in locations:
            locations.append(loc)
        if (
            fix is None
            and loc is not None
            and finding.replacement is not None
            and redact(finding.replacement) == finding.replacement
        ):
            fix = SuggestedFix(loc, finding.replacement, title=f"Fix: {finding.title}")
        where = loc.render() if loc is not None else piece.label
        lines.append(f"[{finding.severity}] {finding.title} ({where}): {finding.explanation}")
    top = hits[0][0]
    if len(lines) == 1:
        content = lines[0]
    else:
        shown = lines[:_MAX_LISTED]
        more = f"\n… and {len(lines) - _MAX_LISTED} more." if len(lines) > _MAX_LISTED else ""
        content = (
            f"Security review: {len(lines)} problems, most severe first.\n"
            + "\n".join(f"{n}. {t}" for n, t in enumerate(shown, 1))
            + more
        )
    if fix is not None:
        content += f"\nSuggested fix for {fix.location.render()}:\n{fix.replacement}"
    return Interjection(
        content=redact(content),  # explanations hold masked secrets only; this is the second guard
        urgent=any(f.urgent for f, _ in hits),
        severity=top.severity,
        action="guidance",
        locations=tuple(locations),
        fix=fix,
    )
