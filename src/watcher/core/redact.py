"""Redaction of secrets (API keys, tokens, passwords) before anything is stored or sent to an LLM.

Pure, and linear in the length of its input: every pattern starts with a literal or a short
class and every repetition is bounded or possessive, so no input makes a pattern backtrack over
what it already scanned (a run of word characters once took seconds here). Two families:

- credential formats with a recognisable shape, one per provider the security role knows
  (``SECRET_PATTERNS``, shared with that role, plus ``PROVIDER_PATTERNS``);
- ``name = value`` / ``name: value`` assignments whose name says it holds a secret, quoted (in
  code, JSON) or not (``.env`` files, AWS credentials files, YAML).

A redacted secret keeps a short prefix so a person can tell which key leaked, never enough to use it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "PROVIDER_PATTERNS",
    "SECRET_PATTERNS",
    "mask",
    "may_hold_secret",
    "redact",
    "redact_known",
    "redact_url",
    "redact_value",
]

# a name that says its value is secret (matched anywhere inside a longer name: aws_secret_access_key)
_SECRET_NAME = r"(?:api[_-]?key|secret|token|passwd|password|credential|private[_-]?key|access[_-]?key)"
# up to 24 more characters of the name, then an optional closing quote and the assignment
_NAME_TAIL = r"[\w.-]{0,24}+['\"]?[ \t]{0,16}+(?:[:=]|:=|=>)[ \t]{0,16}+"

# name -> pattern; group "secret" (or the whole match) is what gets masked.
SECRET_PATTERNS: dict[str, re.Pattern[str]] = {
    "Anthropic API key": re.compile(r"(?P<secret>sk-ant-[A-Za-z0-9_\-]{16,}+)"),
    "OpenAI API key": re.compile(r"(?P<secret>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}+)"),
    "GitHub token": re.compile(r"(?P<secret>(?:gh[pousr]_[A-Za-z0-9]{30,}+|github_pat_[A-Za-z0-9_]{40,}+))"),
    "Slack token": re.compile(r"(?P<secret>xox[abposr]-[A-Za-z0-9\-]{10,}+)"),
    "Slack webhook": re.compile(r"(?P<secret>https://hooks\.slack\.com/services/[A-Za-z0-9_/]{20,}+)"),
    "AWS access key": re.compile(r"(?P<secret>(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16})"),
    "Google API key": re.compile(r"(?P<secret>AIza[0-9A-Za-z_\-]{35})"),
    "Bearer token": re.compile(r"(?i:bearer)[ \t]{1,16}+(?P<secret>[A-Za-z0-9_\-.=]{20,}+)"),
    "Private key": re.compile(
        r"(?P<secret>-----BEGIN [A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[^-]++|-++(?!END))*+(?:-----END [A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----)?)"
    ),
    "Secret assignment": re.compile(
        rf"(?i){_SECRET_NAME}{_NAME_TAIL}"
        r"(?P<q>\\?['\"])(?P<secret>[^'\"\s\\]{8,}+)(?P=q)"  # quotes may be JSON-escaped
    ),
}

# Formats only redaction needs on top of the shared ones: every other provider detect-secrets
# (and so the security role) knows, and the unquoted assignment of .env and credentials files.
PROVIDER_PATTERNS: dict[str, re.Pattern[str]] = {
    "GitLab token": re.compile(
        r"(?P<secret>(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas)-[A-Za-z0-9_\-]{20,}+)"
    ),
    "Stripe key": re.compile(r"(?P<secret>[rs]k_(?:live|test)_[0-9A-Za-z]{16,}+)"),
    "Twilio key": re.compile(r"(?P<secret>(?:AC|SK)(?<![A-Za-z0-9]..)[a-z0-9]{32})(?![A-Za-z0-9])"),
    "SendGrid key": re.compile(r"(?P<secret>SG\.[A-Za-z0-9_\-]{16,}+\.[A-Za-z0-9_\-]{16,}+)"),
    "Mailchimp key": re.compile(r"-us(?<=(?<![0-9a-z])(?P<secret>[0-9a-z]{32})-us)[0-9]{1,2}"),
    "npm token": re.compile(r"(?P<secret>npm_[A-Za-z0-9]{30,}+)"),
    "npm registry token": re.compile(r":_authToken=[ \t]{0,16}+(?P<secret>[^\s'\"]{8,}+)"),
    "PyPI token": re.compile(r"(?P<secret>pypi-[A-Za-z0-9_\-]{50,}+)"),
    "JSON Web Token": re.compile(
        r"(?P<secret>eyJ(?<![\w=-]...)[A-Za-z0-9_\-=]{8,}+\.[A-Za-z0-9_\-=]{8,}+(?:\.[A-Za-z0-9_\-+/=]*+)?)"
    ),
    "Discord bot token": re.compile(r"\.(?<=[A-Za-z\d_-]{23}\.)(?P<secret>[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,}+)"),
    "Telegram bot token": re.compile(r":(?<=\d{8}:)(?P<secret>[0-9A-Za-z_-]{35,}+)"),
    "Square secret": re.compile(r"(?P<secret>sq0(?:csp|atp)-[0-9A-Za-z_\-]{22,}+)"),
    "Artifactory token": re.compile(r"(?P<secret>AKC(?<![A-Za-z0-9]...)[a-zA-Z0-9]{10,}+)"),
    "Azure storage key": re.compile(r"AccountKey=(?P<secret>[A-Za-z0-9+/=]{40,}+)"),
    "URL password": re.compile(r"://[^\s:/?#\[\]@]{1,256}+:(?P<secret>[^\s:/?#\[\]@]{3,256}+)@"),
    "Hugging Face token": re.compile(r"(?P<secret>hf_(?<![A-Za-z0-9]...)[A-Za-z0-9]{30,}+)"),
    "Google OAuth token": re.compile(r"(?P<secret>ya29\.[0-9A-Za-z_\-]{20,}+)"),
    "Docker token": re.compile(r"(?P<secret>dckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,}+)"),
    "Authorization header": re.compile(
        r"(?i:authorization)['\"]?+[ \t]{0,16}+[:=][ \t]{0,16}+['\"]?+(?i:basic|token|digest)[ \t]{1,16}+"
        r"(?P<secret>(?=[A-Za-z_\-.]{0,256}+[0-9+/=])[A-Za-z0-9+/_\-.=]{8,}+)"  # with a digit, + / or =: not prose
    ),
    "User option": re.compile(  # curl -u user:password; not docker's -u 1000:1000 (a uid and a gid)
        r"(?<![\w-])(?:-u|--user)[ \t=]{1,16}+[^\s:'\"]{1,64}+:(?P<secret>(?![0-9]{1,10}+(?![^\s'\"]))[^\s'\"]{3,256}+)"
    ),
}

_ALL = {name: p for name, p in {**SECRET_PATTERNS, **PROVIDER_PATTERNS}.items() if name != "Secret assignment"}

# Assignments, quoted or not, in one pass over the lower-cased text (a case-insensitive pattern
# is three times slower): ``password = "…"``, ``AWS_SECRET_ACCESS_KEY=…``, ``token: …``.
_ASSIGNMENT = re.compile(
    _SECRET_NAME + _NAME_TAIL + r"(?:(?P<q>\\?['\"])(?P<quoted>[^'\"\s\\]{8,}+)(?P=q)"
    r"|(?P<bare>[a-z0-9+/_\-.~!$%^&*@]{8,}+={0,2}+)(?![(\[]))"
)

# A pattern runs only when its gate is in the text: lower-case literals looked for with ``in``
# (a memchr-speed scan), or for the few formats without one, a pattern with a literal prefix.
# Gates keep the common case (nothing secret) and long hostile inputs cheap.
_KEYWORDS = ("api", "secret", "token", "passw", "credential", "private", "access")
_GATES: dict[str, tuple[str, ...] | re.Pattern[str]] = {
    "Anthropic API key": ("sk-ant-",),
    "OpenAI API key": ("sk-",),
    "GitHub token": re.compile(r"gh[pousr]_|github_pat_"),
    "Slack token": ("xox",),
    "Slack webhook": ("hooks.slack.com",),
    "AWS access key": re.compile(r"A(?:KIA|SIA|BIA|CCA|3T)"),
    "Google API key": ("aiza",),
    "Bearer token": ("bearer",),
    "Private key": ("private key",),
    "GitLab token": re.compile(r"gl[a-z]{1,5}-"),
    "Stripe key": ("k_live_", "k_test_"),
    "Twilio key": re.compile(r"AC|SK"),
    "SendGrid key": ("sg.",),
    "Mailchimp key": ("-us",),
    "npm token": ("npm_",),
    "npm registry token": ("_authtoken",),
    "PyPI token": ("pypi-",),
    "JSON Web Token": ("eyj",),
    "Discord bot token": re.compile(r"\.[A-Za-z\d_-]{6}\."),
    "Telegram bot token": re.compile(r":[0-9A-Za-z_-]{35}"),
    "Square secret": ("sq0",),
    "Artifactory token": re.compile(r"AKC"),
    "Azure storage key": ("accountkey=",),
    "URL password": ("://",),
    "Hugging Face token": ("hf_",),
    "Google OAuth token": ("ya29.",),
    "Docker token": ("dckr_",),
    "Authorization header": ("authorization",),
    "User option": ("-u ", "-u=", "-u\t", "--user"),
}


def _gated(text: str, lower: str) -> list[re.Pattern[str]]:
    """The patterns whose gate ``text`` (lower-cased: ``lower``) holds, in order."""
    out = []
    for name, pattern in _ALL.items():
        gate = _GATES[name]
        if any(f in lower for f in gate) if isinstance(gate, tuple) else gate.search(text) is not None:
            out.append(pattern)
    return out


# every gate at once, for the pre-check: the literals (and the assignment keywords) looked for in C,
# the few gate patterns as one alternation
_LITERALS = tuple(sorted({lit for gate in _GATES.values() if isinstance(gate, tuple) for lit in gate} | set(_KEYWORDS)))
_SHORT = 4096  # longer texts skip the pre-check in ``redact``: their gate patterns would run twice
_ANY_GATE_PATTERN = re.compile("|".join(g.pattern for g in _GATES.values() if isinstance(g, re.Pattern)))


def may_hold_secret(text: str) -> bool:
    """False when ``text`` certainly holds nothing ``redact`` would mask (a fast pre-check).

    True exactly when some pattern's gate or an assignment keyword is in ``text`` (what ``redact`` looks at).
    """
    return _any_gate(text, text.lower())


def _any_gate(text: str, lower: str) -> bool:
    return any(map(lower.__contains__, _LITERALS)) or _ANY_GATE_PATTERN.search(text) is not None


def mask(secret: str) -> str:
    """A redacted form of ``secret``: a short prefix, then ``…[REDACTED]``."""
    keep = 7 if secret.startswith(("sk-ant-", "github_pat_")) else 4
    keep = min(keep, max(len(secret) // 4, 0))
    return f"{secret[:keep]}…[REDACTED]"


def redact(text: str) -> str:
    """``text`` with every recognisable secret masked (in time linear in its length)."""
    if not text:
        return text
    lower = text.lower()
    if len(text) <= _SHORT and not _any_gate(text, lower):
        return text  # the common case: a short string no gate holds, found in C, not pattern by pattern
    patterns = _gated(text, lower)
    if any(k in lower for k in _KEYWORDS):
        text = _redact_assignments(text, lower)
    for pattern in patterns:
        text = _redact_matches(text, pattern)
    return text


def _redact_assignments(text: str, lower: str) -> str:
    if len(lower) != len(text):  # a few characters change length when lower-cased: keep offsets exact
        return SECRET_PATTERNS["Secret assignment"].sub(_masked, text)
    out: list[str] = []
    done = at = 0
    while (match := _ASSIGNMENT.search(lower, at)) is not None:
        group = "quoted" if match.group("quoted") is not None else "bare"
        start, end = match.span(group)
        secret = text[start:end]
        if group == "bare" and not (any(c.isdigit() for c in secret) or (len(secret) >= 24 and "." not in secret)):
            # an unquoted value is a secret only if it looks like one (not self.token, None); it may hold
            # the next assignment (token=abc&password=…), so the search goes on inside it
            at = start
            continue
        out += (text[done:start], mask(secret))
        done = at = end
    return "".join(out) + text[done:] if out else text


def _redact_matches(text: str, pattern: re.Pattern[str]) -> str:
    """``text`` with the ``secret`` group of every match of ``pattern`` masked (it may lie in a lookbehind)."""
    out: list[str] = []
    done = 0
    for match in pattern.finditer(text):
        start, end = match.span("secret")
        if start < done or "[REDACTED]" in text[start:end]:
            continue
        out += (text[done:start], mask(text[start:end]))
        done = end
    return "".join(out) + text[done:] if out else text


def _masked(match: re.Match[str]) -> str:
    start, end = match.span("secret")
    if "[REDACTED]" in match.string[start:end]:
        return match.group(0)
    offset = match.start(0)
    whole = match.group(0)
    return whole[: start - offset] + mask(match.group("secret")) + whole[end - offset :]


def redact_known(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of the given secret values masked, longest first.

    For secrets whose shape no pattern knows: a gateway's key, a token in an environment variable.
    """
    for secret in sorted(secrets, key=len, reverse=True):
        if secret and secret in text:
            text = text.replace(secret, mask(secret))
    return text


def redact_value(value: Any) -> Any:
    """Redact every string inside a JSON-like value (dicts, lists, strings), returning a copy.

    Iterative, so a value nested thousands of levels deep is redacted like any other.
    """
    if not isinstance(value, Mapping | list | tuple):
        return redact(value) if isinstance(value, str) else value
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]  # (source, parent container, key in parent)
    while stack:
        source, parent, key = stack.pop()
        if isinstance(source, str):
            parent[key] = redact(source)
        elif isinstance(source, Mapping):
            copy: dict[Any, Any] = dict.fromkeys(source)
            parent[key] = copy
            stack.extend((v, copy, k) for k, v in source.items())
        elif isinstance(source, list | tuple):
            items: list[Any] = [None] * len(source)
            parent[key] = items
            stack.extend((v, items, i) for i, v in enumerate(source))
        else:
            parent[key] = source
    return root[0]


# the userinfo of a URL: everything between ``scheme://`` and the last ``@`` before the path
_USERINFO = re.compile(r"(?i)^([a-z][a-z0-9+.\-]{0,31}+://)[^/?#]*@")


def redact_url(url: str) -> str:
    """``url`` as it may be shown: its userinfo (``user:password@``) replaced by ``***@``, other secrets masked.

    A URL's userinfo is a credential whatever its shape (``https://TOKEN@host``), so it is dropped
    whole; the rest (a key in the query, a key pasted where a URL should be) goes through ``redact``.
    """
    return redact(_USERINFO.sub(r"\1***@", url, count=1))
