"""Fixtures for the benchmark tests: simulated servers on 127.0.0.1 and an environment without keys."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from watcher.bench.policies import SimParams
from watcher.bench.simulated import SimulatedChatServer


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's keys or base URLs must not leak into the SDKs under test."""
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _in_a_scratch_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI writes ``longchain.png`` to the working folder by default: keep it out of the checkout."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def chat_server() -> Iterator[SimulatedChatServer]:
    with SimulatedChatServer(SimParams(), keep_requests=True) as server:
        yield server
