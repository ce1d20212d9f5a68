"""Fixtures every test area shares."""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from command_line import Ran, run_main
from watcher.testing.postgres import LocalPostgres

_databases = itertools.count()

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


@pytest.fixture(autouse=True)
def _entry_points_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """This environment's commands (``watcher``) are on PATH, as in an activated environment or a pipx
    install: the installed hooks run ``watcher-hook`` from PATH, wherever the tests were started from."""
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """The ``watcher`` command line, run in this process: ``cli("journal", "check", url)``."""
    return lambda *args: run_main(capsys, *args)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[LocalPostgres]:
    """One real PostgreSQL server for the whole test session (started as ``postgres`` when root)."""
    with LocalPostgres() as server:
        yield server


@pytest.fixture
def pg_url(pg_server: LocalPostgres) -> str:
    """A fresh, empty journal on the session's server (its own schema): its ``postgresql://`` URL."""
    return pg_server.create_schema(f"t{next(_databases)}")


@pytest.fixture(params=["sqlite", "postgres"])
def journal_at(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """Where a journal test's journal lives: a SQLite file, then a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return tmp_path / "journal.sqlite3"
    url: str = request.getfixturevalue("pg_url")
    return url
