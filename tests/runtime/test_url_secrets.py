"""A PostgreSQL URL's secrets (the password, the client key's password) are never part of how it is named."""

from __future__ import annotations

import pytest

from watcher.runtime.journal import journal_label

URLS = [
    "postgresql://ann:hunter2-pw@db.example:5432/watch",
    "postgresql://ann@db.example/watch?password=hunter2-pw",
    "postgresql://ann@db.example/watch?sslmode=verify-full&sslpassword=hunter2-pw",
    "postgresql://ann@db.example/watch?PASSWORD=hunter2-pw&application_name=w",
]


@pytest.mark.parametrize("url", URLS)
def test_the_label_holds_no_secret_and_keeps_the_rest(url: str) -> None:
    """One function names a journal everywhere (messages, ``journal check``, the language server)."""
    named = journal_label(url)
    assert "hunter2" not in named
    assert named.startswith("postgresql://ann@db.example") and "/watch" in named
    if "sslmode" in url:
        assert "sslmode=verify-full" in named
