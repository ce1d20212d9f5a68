"""A PostgreSQL URL's secrets (the password, the client key's password) are never part of how it is named."""

from __future__ import annotations

import pytest

from watcher.runtime._pg_store import describe
from watcher.runtime.journal import journal_label

URLS = [
    "postgresql://ann:hunter2-pw@db.example:5432/watch",
    "postgresql://ann@db.example/watch?password=hunter2-pw",
    "postgresql://ann@db.example/watch?sslmode=verify-full&sslpassword=hunter2-pw",
    "postgresql://ann@db.example/watch?PASSWORD=hunter2-pw&application_name=w",
]


@pytest.mark.parametrize("url", URLS)
def test_neither_label_holds_a_secret_and_both_keep_the_rest(url: str) -> None:
    for named in (journal_label(url), describe(url)):
        assert "hunter2" not in named
    assert journal_label(url).startswith("postgresql://ann@db.example") and "/watch" in journal_label(url)
    # libpq refuses a keyword it does not know (PASSWORD): such a URL is named as unreadable
    assert describe(url).startswith(("postgresql://ann@db.example", "postgresql://(an unreadable URL)"))
    if "sslmode" in url:
        assert "sslmode=verify-full" in describe(url)
