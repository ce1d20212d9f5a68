"""What an LLM evaluator is configured with, checked before the SDK loads: key, server URL, model, limits.

A key or URL the HTTP layer cannot use would otherwise fail at every evaluation, as a "connection
error" that names neither (an API key read from a file with its newline is an illegal header);
so would a model name with a line break in it, or a timeout of 0 or NaN.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from watcher.core.errors import ConfigurationError, MissingCredentialsError
from watcher.core.redact import redact_url
from watcher.settings import Settings

__all__ = ["anthropic_key", "check_limits", "checked_base_url", "checked_key", "checked_model", "known_secrets"]

# an environment variable whose name says it holds a secret: OPENAI_API_KEY, GITHUB_TOKEN, DB_PASSWORD, STRIPE_KEY
_SECRET_VARIABLE = re.compile(r"(?i)api[_-]?key|secret|token|passw|credential|private[_-]?key|access[_-]?key|_key$")
_LONGEST_MODEL = 256  # the longest model ids (a Hugging Face repo and file) are about half of it
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


def checked_model(model: str, variable: str) -> str:
    """``model`` without the whitespace around it; raises when it is empty or holds a control character.

    ``variable`` is where the model is set, for the message (``WATCHER_ANTHROPIC_MODEL``).
    """
    name = model.strip() if isinstance(model, str) else ""
    if not name or not name.isprintable() or len(name) > _LONGEST_MODEL:
        shown = (
            repr(model)
            if isinstance(model, str) and len(model) <= _LONGEST_MODEL
            else f"of {len(str(model))} characters"
        )
        raise ConfigurationError(
            f"the model name {shown} is empty, longer than {_LONGEST_MODEL} characters, or has a line break or another "
            f"control character in it; give the model's id alone (--model, --watcher-model, model= in Python, or "
            f"{variable})"
        )
    return name


def check_limits(
    *, timeout: float, max_tokens: int, max_retries: int, recent: int, prompt_budget: int | None, context: str
) -> None:
    """Raise a ``ConfigurationError`` naming the first limit an LLM evaluator cannot work with."""
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not (math.isfinite(timeout) and timeout > 0)
    ):
        raise ConfigurationError(f"an LLM evaluator's timeout takes seconds above 0, such as 30, not {timeout!r}")
    for name, value, least in (("max_tokens", max_tokens, 1), ("max_retries", max_retries, 0), ("recent", recent, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ConfigurationError(f"an LLM evaluator's {name} takes a whole number from {least}, not {value!r}")
    if prompt_budget is not None and (
        isinstance(prompt_budget, bool) or not isinstance(prompt_budget, int) or prompt_budget < 1
    ):
        raise ConfigurationError(
            f"an LLM evaluator's prompt_budget takes tokens from 1 (or None), not {prompt_budget!r}"
        )
    if context not in ("minimal", "full"):
        raise ConfigurationError(f"an LLM evaluator's context is 'minimal' or 'full', not {context!r}")
