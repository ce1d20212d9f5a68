"""Fixtures for the stub-server tests: a fresh stub per test (tests/conftest.py clears the keys)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from watcher.testing import StubAnthropicServer, StubOpenAIServer


@pytest.fixture
def anthropic_stub() -> Iterator[StubAnthropicServer]:
    with StubAnthropicServer() as stub:
        yield stub


@pytest.fixture
def openai_stub() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer() as stub:
        yield stub
