"""Fixtures every test area shares."""

from __future__ import annotations

import pytest

#: what the SDKs and the evaluators read from the environment; a developer's own must not leak in
PROVIDER_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CUSTOM_HEADERS",
    "WATCHER_ANTHROPIC_MODEL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "WATCHER_OPENAI_MODEL",
    "WATCHER_OPENAI_BASE_URL",
)


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reaches a real provider or picks up a developer's key, base URL or model."""
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
