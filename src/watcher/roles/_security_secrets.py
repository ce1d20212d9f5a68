"""Credentials in code and in outputs: detect-secrets' plugins plus ``redact.SECRET_PATTERNS``.

detect-secrets knows many providers' key formats and the ``password = "..."`` shape; the
project's own patterns add formats it does not know (Anthropic ``sk-ant-``, newer OpenAI keys,
GitHub fine-grained tokens, Slack webhooks). The plugins are instantiated once and called line by
line in memory, without detect-secrets' global settings; the high-entropy plugins are left out
(lockfile hashes, git SHAs and UUIDs are not secrets) and so is the public-IP one. Placeholders
(``your-api-key-here``, ``sk-ant-...``, ``<TOKEN>``, ``${VAR}``) and values read from the
environment are not findings. Nothing here returns a secret in clear: only ``mask``ed forms.
"""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import replace
from typing import Any

from watcher.core.interjection import Severity
from watcher.core.redact import SECRET_PATTERNS, mask
from watcher.roles._security_model import Finding

__all__ = ["example_value", "secret_findings"]

_SKIPPED_PLUGINS = frozenset({"Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector"})
_GENERIC = frozenset(
    {"Secret Keyword", "Secret assignment", "Basic Auth Credentials", "Bearer token", "Password in a URL"}
)
# a line can hold a secret only if it has a long token, a credential word, or user:pass@ in a URL
_GATE = re.compile(r"[A-Za-z0-9_\-+/=.]{16,}|(?i:pass|pwd|secret|token|key|auth|cred|bearer)|://[^\s/@]+:[^\s/@]+@")
# the same gate for a lower-cased ASCII line: re searches a case-insensitive alternation some five times slower
_GATE_LOWER = re.compile(r"[a-z0-9_\-+/=.]{16,}|pass|pwd|secret|token|key|auth|cred|bearer|://[^\s/@]+:[^\s/@]+@")
_PLACEHOLDER = re.compile(
    r"(?i)your|example|sample|placeholder|changeme|change[-_]me|dummy|redacted|fake|xxxx|<[^>]*>|\$\{|\{\{|^\$|"
    r"\.\.\.|…|\*\*\*|insert|replace|here$|^test|^none$|^null$|^true$|^false$"
)
# formats redact's patterns and detect-secrets' plugins do not know
_EXTRA_PATTERNS = {
    "Google API key": re.compile(r"(?<![\w-])(?P<secret>AIza[0-9A-Za-z_-]{35})(?![\w-])"),
    "Hugging Face token": re.compile(r"(?<![\w-])(?P<secret>hf_[A-Za-z0-9]{30,40})(?![\w-])"),
}
# scheme://user:password@host: the password is a secret even when it is one plain word
_URL_CREDENTIALS = re.compile(r"[a-z][a-z0-9+.-]*://[^\s:/@'\"`]+:(?P<secret>[^\s'\"`/]+)@[^\s'\"`/@:]+", re.I)
_URL_PLACEHOLDER = re.compile(
    r"(?i)(?:my|your|the|db|some|secret|user)?(?:pass(?:word)?|passwd|pwd|secret|pw|changeme|token|key|x+|\*+)\d?"
)
# the documentation's own example keys (AWS's …EXAMPLE, …EXAMPLEKEY): a hint, not a leak
_DOC_KEY = re.compile(r"(?:AKIA[0-9A-Z]{8,16}EXAMPLE|EXAMPLEKEY)$")
_DOCUMENTED: frozenset[str] = frozenset()
# names that hold a setting about passwords rather than a password
_SETTING = re.compile(
    r"(?i)(?:encryption|algorithm|policy|length|min|max|field|column|type|format|hash(?:er|ing)?|prompt|label|"
    r"pattern|regex|rule|file|path|reset|expir\w*|timeout|strength|mode|method|scheme|validator|url)$"
)
_ENV_READ = re.compile(r"os\.environ|os\.getenv|getenv\(|process\.env|ENV\[|\$\{?[A-Z_]{3,}")
_TOKEN = re.compile(r"[^\s'\"`,;()\[\]{}<>]+")

_lock = threading.Lock()
_plugins: list[Any] | None = None


def _detectors() -> list[Any]:
    """detect-secrets' plugin instances, built once per process."""
    global _plugins
    with _lock:
        if _plugins is None:
            from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

            classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
            _plugins = [cls() for cls in classes if cls.__name__ not in _SKIPPED_PLUGINS]
        return _plugins


def secret_findings(text: str, *, filename: str = "watched.py", output: bool = False, where: str = "") -> list[Finding]:
    """Credentials in ``text`` (code, or a cell's / tool's ``output``), one finding per secret."""
    found: dict[tuple[str, int], Finding] = {}  # one finding per secret per line: every occurrence located
    lines = text.splitlines()
    # lower-casing ASCII keeps its line breaks, so the lines line up
    folded = text.lower().splitlines() if text.isascii() else None
    for number, line in enumerate(lines, start=1):
        if len(line) > 4000 or not (
            _GATE_LOWER.search(folded[number - 1]) if folded is not None else _GATE.search(line)
        ):
            continue
        for kind, value in _candidates(line, filename):
            documented = kind in _DOCUMENTED or _DOC_KEY.search(value) is not None
            if not documented and not _plausible(value, line, kind):
                continue
            name = _name_before(line, value)
            if kind in _GENERIC and _SETTING.search(name):
                continue  # password_encryption = 'scram-sha-256' names a setting, not a credential
            if kind in _GENERIC and name.lower().endswith("secret") and example_value(value):
                continue  # session({secret: 'keyboard cat'}): the framework documentation's phrase
            digest = hashlib.sha256(value.encode()).hexdigest()[:16]
            key = (digest, 0 if output else number)
            if key in found and found[key].rule not in _GENERIC_RULES:
                continue
            finding = _finding(kind, value, number, line, text, output=output, where=where, digest=digest)
            found[key] = (
                replace(finding, severity="hint", title=finding.title + " (documentation example)")
                if (documented)
                else finding
            )
    return list(found.values())


def _name_before(line: str, value: str) -> str:
    """The name a value is assigned to on its line (``db_password`` in ``db_password = "..."``)."""
    at = line.find(value)
    match = re.search(r"([\w.-]+)['\"]?\s*(?::=|=>|[:=])\s*['\"]?\s*$", line[: max(at, 0)])
    return match.group(1) if match else ""


_GENERIC_RULES = frozenset(f"secret:{k}" for k in _GENERIC)


def _candidates(line: str, filename: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for kind, pattern in _EXTRA_PATTERNS.items():
        out += [(kind, m.group("secret")) for m in pattern.finditer(line)]
    for match in _URL_CREDENTIALS.finditer(line):
        word = match.group("secret")
        if not (_URL_PLACEHOLDER.fullmatch(word) or re.search(r"[{}<>$]|%s|%\(|\.\.\.", word)):
            out.append(("Password in a URL", word))
    for kind, pattern in SECRET_PATTERNS.items():
        for match in pattern.finditer(line):
            start = match.start("secret")
            if start > 0 and (line[start - 1].isalnum() or line[start - 1] in "_-"):
                continue  # "task-management-..." is not an OpenAI key
            out.append((kind, match.group("secret")))
    for plugin in _detectors():
        try:
            secrets = plugin.analyze_line(filename=filename, line=line, line_number=1)
        except Exception:  # noqa: BLE001 - a detect-secrets plugin bug must never break a watcher
            continue
        for secret in secrets or ():
            value = secret.secret_value or ""
            if len(value) < 8:  # some plugins report only a prefix ("ghp"): take the whole token
                at = line.find(value) if value else -1
                token = _TOKEN.match(line, at) if at >= 0 else None
                value = token.group(0) if token else value
            out.append((secret.type, value))
    # specific formats first so a key found by both a format and the keyword plugin keeps its name
    return sorted(out, key=lambda kv: kv[0] in _GENERIC)


def _plausible(value: str, line: str, kind: str) -> bool:
    if kind == "Password in a URL":
        return len(value) >= 4  # a plain word is still a password; placeholders were left out when found
    if len(value) < 8 or _PLACEHOLDER.search(value) or _PLACEHOLDER_WORDS.fullmatch(value) or len(set(value)) <= 4:
        return False
    if kind in _GENERIC or kind == "OpenAI API key":
        if not (re.search(r"\d", value) or kind in ("Secret Keyword", "Secret assignment")):
            return False
        if _ENV_READ.search(line) and value not in _quoted(line):
            return False
    if (
        kind in _GENERIC
        and re.fullmatch(r"[A-Za-z_][\w.]*\(?\)?", value)
        and not re.search(r"\d", value)
        and value not in _quoted(line)
    ):
        return False  # an identifier (password = get_password) rather than a literal
    return not re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", value, re.I)  # a UUID


# a value made only of the words placeholders are made of: secretpassword, mypassword, admin123
_PLACEHOLDER_WORDS = re.compile(
    r"(?i)(?:my|your|the|some|super|db|user|admin|root|secret|password|passwd|pass|pwd|default|example|sample|"
    r"test|demo|dev)+\d{0,3}"
)


def example_value(value: str) -> bool:
    """A placeholder (``your-secret-here``) or a documentation phrase (``keyboard cat``): not a secret.

    Documentation writes example secrets as a few plain words with spaces; a generated or chosen
    secret is one token.
    """
    return bool(
        _PLACEHOLDER.search(value)
        or _PLACEHOLDER_WORDS.fullmatch(value)
        or re.fullmatch(r"[A-Za-z][A-Za-z,.!' -]*\s[A-Za-z,.!' -]*[A-Za-z.!]", value)
    )


def _quoted(line: str) -> set[str]:
    return {m.group(2) for m in re.finditer(r"(['\"])(.*?)\1", line)}


def _finding(
    kind: str, value: str, number: int, line: str, text: str, *, output: bool, where: str, digest: str
) -> Finding:
    generic = kind in _GENERIC
    severity: Severity = "warning" if generic else "critical"
    shown = mask(value)
    what = "a hard-coded credential" if generic else f"an {kind}" if kind[0] in "AEIOU" else f"a {kind}"
    if output:
        title = f"{kind} leaked in output" if not generic else "Credential leaked in output"
        explanation = (
            f"{where or 'The output'} shows {what} ({shown}). Output is kept in the notebook, logs and the "
            "agent's context, so treat the secret as exposed: rotate it, clear the output, and avoid "
            "printing credentials."
        )
        return Finding(f"secret:{kind}", title, severity, explanation, fingerprint=f"secret:{digest}")
    title = f"Hard-coded {kind}" if not generic else "Hard-coded credential"
    explanation = (
        f"{what[0].upper()}{what[1:]} ({shown}) is written into {where or 'the code'} at line {number}. "
        "Anyone who can read the file, its history or this transcript can use it: rotate it and "
        "read it from the environment or a secrets manager instead."
    )
    return Finding(
        f"secret:{kind}",
        title,
        severity,
        explanation,
        start_line=number,
        replacement=_env_fix(line, value, text),
        fingerprint=f"secret:{digest}",
    )


def _env_fix(line: str, value: str, text: str) -> str | None:
    """``NAME = "secret"`` as ``NAME = os.environ["NAME"]`` (Python) or ``process.env.NAME`` (JS)."""
    py = re.fullmatch(r"(\s*)([A-Za-z_]\w*)\s*=\s*(['\"])(.*)\3\s*", line)
    if py and py.group(4) == value and re.search(r"^\s*import os\b", text, re.M):
        return f'{py.group(1)}{py.group(2)} = os.environ["{py.group(2).upper()}"]'
    js = re.fullmatch(r"(\s*)(const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(['\"`])(.*)\4\s*;?\s*", line)
    if js and js.group(5) == value:
        return f"{js.group(1)}{js.group(2)} {js.group(3)} = process.env.{_upper_snake(js.group(3))};"
    return None


def _upper_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()
