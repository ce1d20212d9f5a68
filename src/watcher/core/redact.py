"""Redaction of secrets (API keys, tokens, passwords) before anything is stored or sent to an LLM.

Pure and fast: a handful of compiled patterns for credential formats with a recognisable shape,
plus ``name = "value"`` assignments whose name says it is a secret. A redacted secret keeps a
short prefix so a person can tell which key leaked, never enough to use it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["SECRET_PATTERNS", "mask", "may_hold_secret", "redact", "redact_value"]

# name -> pattern; group "secret" (or the whole match) is what gets masked.
SECRET_PATTERNS: dict[str, re.Pattern[str]] = {
    "Anthropic API key": re.compile(r"(?P<secret>sk-ant-[A-Za-z0-9_\-]{16,})"),
    "OpenAI API key": re.compile(r"(?P<secret>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,})"),
    "GitHub token": re.compile(r"(?P<secret>(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}))"),
    "Slack token": re.compile(r"(?P<secret>xox[abposr]-[A-Za-z0-9\-]{10,})"),
    "Slack webhook": re.compile(r"(?P<secret>https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,})"),
    "AWS access key": re.compile(r"(?P<secret>(?:AKIA|ASIA)[0-9A-Z]{16})"),
    "Google API key": re.compile(r"(?P<secret>AIza[0-9A-Za-z_\-]{35})"),
    "Bearer token": re.compile(r"(?i:bearer)\s+(?P<secret>[A-Za-z0-9_\-.=]{20,})"),
    "Private key": re.compile(
        r"(?P<secret>-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$))"
    ),
    "Secret assignment": re.compile(
        r"(?i)\b[\w.-]*(?:api[_-]?key|secret|token|passwd|password|credential)[\w.-]*\b['\"]?\s*[:=]\s*"
        r"(?P<q>\\?['\"])(?P<secret>[^'\"\s\\]{8,})(?P=q)"  # quotes may be JSON-escaped
    ),
}

# Every pattern above needs one of these fragments (in lower case); plain substring tests over a
# whole payload rule most payloads out, so the common case (nothing secret) stays cheap.
_FRAGMENTS = (
    "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "hooks.slack", "akia", "asia", "aiza", "bearer", "private key",
    "api_key", "api-key", "apikey", "secret", "token", "passwd", "password", "credential",
)  # fmt: skip


_ANY_FRAGMENT = re.compile("|".join(map(re.escape, _FRAGMENTS)))


def may_hold_secret(text: str) -> bool:
    """False when ``text`` certainly holds nothing ``redact`` would mask (a fast pre-check)."""
    return _ANY_FRAGMENT.search(text.lower()) is not None


def mask(secret: str) -> str:
    """A redacted form of ``secret``: a short prefix, then ``…[REDACTED]``."""
    keep = 7 if secret.startswith(("sk-ant-", "github_pat_")) else 4
    keep = min(keep, max(len(secret) // 4, 0))
    return f"{secret[:keep]}…[REDACTED]"


def redact(text: str) -> str:
    """``text`` with every recognisable secret masked."""
    if not text or not may_hold_secret(text):
        return text
    for pattern in SECRET_PATTERNS.values():
        text = pattern.sub(_masked, text)
    return text


def _masked(match: re.Match[str]) -> str:
    whole = match.group(0)
    secret = match.group("secret")
    if "[REDACTED]" in secret:
        return whole
    start = match.start("secret") - match.start(0)
    return whole[:start] + mask(secret) + whole[start + len(secret) :]


def redact_value(value: Any) -> Any:
    """Redact every string inside a JSON-like value (dicts, lists, strings), returning a copy."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v) for v in value]
    return value
