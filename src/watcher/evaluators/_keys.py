"""The Anthropic key, found without importing the SDK, so a missing key is said at once."""

from __future__ import annotations

from watcher.core.errors import MissingCredentialsError
from watcher.settings import Settings

__all__ = ["anthropic_key"]


def anthropic_key(explicit: str | None, settings: Settings) -> str:
    """``explicit``, else the settings' key (``ANTHROPIC_API_KEY``, else ``ANTHROPIC_AUTH_TOKEN``); raises when none."""
    if explicit:
        return explicit
    if settings.anthropic_key is None:
        raise MissingCredentialsError(
            "the anthropic evaluator needs an API key and ANTHROPIC_API_KEY is not set; "
            "run `export ANTHROPIC_API_KEY=...` (or pass api_key= in Python), or use the offline `rules` evaluator"
        )
    return settings.anthropic_key.reveal()
