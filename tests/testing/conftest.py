"""Fixtures for the stub-server tests: a fresh stub per test and an environment without keys."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from watcher.testing import StubAnthropicServer, StubOpenAIServer


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's keys, base URLs or profiles must not leak into the SDKs under test."""
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_PROFILE",
        "ANTHROPIC_CUSTOM_HEADERS",
    ):
        monkeypatch.delenv(name, raising=False)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def anthropic_stub() -> Iterator[StubAnthropicServer]:
    with StubAnthropicServer() as stub:
        yield stub


@pytest.fixture
def openai_stub() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer() as stub:
        yield stub
