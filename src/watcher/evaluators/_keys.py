"""The Anthropic key, found without importing the SDK, so a missing key is said at once."""

from __future__ import annotations

import os

from watcher.core.errors import MissingCredentialsError

__all__ = ["anthropic_key"]


def anthropic_key(explicit: str | None) -> str:
    """``explicit``, else ``ANTHROPIC_API_KEY``, else ``ANTHROPIC_AUTH_TOKEN``; raises when none is set."""
    key = explicit or os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")
    if not key:
        raise MissingCredentialsError(
            "the anthropic evaluator needs an API key and ANTHROPIC_API_KEY is not set; "
            "run `export ANTHROPIC_API_KEY=...` (or pass api_key=), or use the offline `rules` evaluator"
        )
    return key
