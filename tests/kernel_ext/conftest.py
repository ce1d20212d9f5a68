"""Fixtures for the kernel extension: an in-process IPython shell and a real ipykernel."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell


@pytest.fixture
def journal_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "journal.sqlite3"
    monkeypatch.setenv("WATCHER_JOURNAL", str(path))
    return path


@pytest.fixture
def shell(journal_path: Path) -> Iterator[InteractiveShell]:
    """A fresh in-process shell with ``%load_ext watcher`` done (unloaded afterwards)."""
    ip = InteractiveShell()
    ip.extension_manager.load_extension("watcher")
    try:
        yield ip
    finally:
        ip.extension_manager.unload_extension("watcher")
        InteractiveShell.clear_instance()
