"""``watcher journal migrate|check|prune`` on a PostgreSQL journal, and what its errors say."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from watcher.core.errors import JournalError
from watcher.core.observations import UserMessage
from watcher.runtime import Journal
from watcher.runtime._pg_schema import VERSION
from watcher.runtime.events import ObservationEvent


def test_migrate_check_and_prune(pg_url: str, cli: Any) -> None:
    made = cli("journal", "migrate", pg_url)
    assert made.returncode == 0 and f"created version {VERSION}" in made.stdout, made.stderr
    again = cli("journal", "migrate", pg_url)
    assert f"already at version {VERSION}" in again.stdout
    with Journal(pg_url, create=False) as journal:
        for i, ts in enumerate((1_600_000_000.0, 1_900_000_000.0)):  # 2020 and 2030
            journal.append(ObservationEvent(session="s", observation=UserMessage(text="x"), index=i, ts=ts))
        journal.flush()
    checked = cli("journal", "check", pg_url)
    assert (
        checked.returncode == 0
        and f"schema: version {VERSION}" in checked.stdout
        and "events: about 2" in checked.stdout
    )
    pruned = cli("journal", "prune", pg_url, "--before", "2026-01-01")
    assert pruned.returncode == 0 and "deleted 1 events" in pruned.stdout, pruned.stderr
    with Journal(pg_url, create=False) as journal:
        assert [r.payload["index"] for r in journal.read()] == [1]


def test_an_older_schema_is_refused_until_migrated(pg_url: str, cli: Any) -> None:
    Journal(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DELETE FROM watcher_schema WHERE version > 1")  # as a journal made by the first version
        conn.execute("DROP TABLE leases")
    with pytest.raises(JournalError, match=r"schema version 1, older .* run `watcher journal migrate"):
        Journal(pg_url)
    assert cli("journal", "check", pg_url).returncode == 1
    assert f"upgraded from 1 to version {VERSION}" in cli("journal", "migrate", pg_url).stdout
    with Journal(pg_url) as journal:
        assert journal.hold_lease("l", "me", 5), "the upgrade made what the new version uses"


@pytest.mark.parametrize(
    ("make_url", "said"),
    [
        (lambda url: url.replace(url.split("@")[1].split("/")[0], "127.0.0.1:1"), "start the server"),
        (lambda url: url.split("?")[0].rsplit("/", 1)[0] + "/no_such_db", "create the database"),
    ],
    ids=["server down", "no database"],
)
def test_errors_name_the_server_and_what_to_do(pg_url: str, cli: Any, make_url: Any, said: str) -> None:
    bad = make_url(pg_url.replace("watcher@", "watcher:hunter2@"))
    done = cli("fleet", "status", "--journal", bad)
    assert done.returncode == 2
    assert said in done.stderr and "PostgreSQL server at postgresql://watcher@" in done.stderr
    assert "Traceback" not in done.stderr and "hunter2" not in done.stderr, "no traceback, no password"
