"""What an LLM evaluator is configured with, checked before the SDK loads: its key and its server's URL.

A key or URL the HTTP layer cannot use would otherwise fail at every evaluation, as a "connection
error" that names neither (an API key read from a file with its newline is an illegal header).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from watcher.core.errors import ConfigurationError, MissingCredentialsError
from watcher.core.redact import redact_url
from watcher.settings import Settings

__all__ = ["anthropic_key", "checked_base_url", "checked_key", "known_secrets"]

# an environment variable whose name says it holds a secret: OPENAI_API_KEY, GITHUB_TOKEN, DB_PASSWORD, STRIPE_KEY
_SECRET_VARIABLE = re.compile(r"(?i)api[_-]?key|secret|token|passw|credential|private[_-]?key|access[_-]?key|_key$")
_PLACEHOLDERS = frozenset({"not-needed", "no-key-the-prompt-is-only-shown"})


def anthropic_key(explicit: str | None, settings: Settings) -> str:
    """``explicit``, else the settings' key (``ANTHROPIC_API_KEY``, else ``ANTHROPIC_AUTH_TOKEN``); raises when none."""
    if explicit:
        return checked_key(explicit, "the anthropic evaluator's api_key")
    if settings.anthropic_key is None:
        raise MissingCredentialsError(
            "the anthropic evaluator needs an API key and ANTHROPIC_API_KEY is not set; "
            "run `export ANTHROPIC_API_KEY=...` (or pass api_key= in Python), or use the offline `rules` evaluator"
        )
    named = (n for n in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN") if settings.environ.get(n))
    source = next(named, "the settings' anthropic_key")
    return checked_key(settings.anthropic_key.reveal(), source)


def checked_key(key: str, source: str) -> str:
    """``key`` without the whitespace around it; raises when what is left cannot be sent as a header.

    A key is one printable ASCII word: a space, a line break or a control character inside it is
    a key pasted twice or read with more than the key, and HTTP refuses to send it.
    """
    stripped = key.strip()
    if not stripped:
        raise MissingCredentialsError(f"{source} holds only whitespace; set it to your API key")
    if not all(33 <= ord(c) <= 126 for c in stripped):
        raise ConfigurationError(
            f"{source} has a space, a line break or a non-ASCII character inside it ({len(stripped)} characters); "
            "a key is one word: set it again, from the key alone"
        )
    return stripped


def checked_base_url(url: str) -> str:
    """``url`` when it is an http(s) URL naming a server; else a ``ConfigurationError`` saying what to give."""
    parts = urlsplit(url.strip())
    try:
        host = parts.hostname
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        host = None
    if parts.scheme not in ("http", "https") or not host:
        raise ConfigurationError(
            f"the base URL {redact_url(url)!r} is not an http(s) URL naming a server; give the server's address, "
            "e.g. --base-url http://localhost:1234/v1 (base_url= in Python)"
        )
    if parts.query or parts.fragment:  # the SDK appends the API's path after it: every call would miss
        raise ConfigurationError(
            f"the base URL {redact_url(url)!r} has a query or fragment (?… or #…), which the SDK would put before "
            "the API's path; give the server's address alone, and a key as the provider's API_KEY variable"
        )
    return url.strip()


def known_secrets(environ: Mapping[str, str], *keys: str | None) -> tuple[str, ...]:
    """The secret values a prompt must not carry whatever their shape: ``keys`` and secret-named variables' values.

    A variable's value is taken when it looks like a secret: one word that is not a path, of at least
    8 characters with a digit, or of at least 20 (not ``SECRET_SCANNING=disabled``, whose every
    "disabled" would be masked). The patterns of ``redact`` catch secrets by shape, these by value
    (an agent that echoes ``$GATEWAY_KEY``).
    """
    named = [v for name, v in environ.items() if _SECRET_VARIABLE.search(name) and _looks_secret(v)]
    return tuple(sorted({*named, *(k for k in keys if k and len(k) >= 8)} - _PLACEHOLDERS))


def _looks_secret(value: str) -> bool:
    """Whether a secret-named variable's ``value`` looks like a secret rather than a setting or a path."""
    if len(value) < 8 or value.startswith("/") or any(c.isspace() for c in value):
        return False
    return len(value) >= 20 or any(c.isdigit() for c in value)
