"""``watcher journal`` and ``--journal`` on what is not a watcher journal: each gets a message, not a guess.

Someone else's SQLite database is left exactly as it was (no schema added, not switched to WAL);
a folder, an empty location and a URL with an unknown scheme are named as such; a journal that
another process holds locked is reported as busy, not as damaged. Real subprocesses and files.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from watcher.core.errors import JournalError, JournalLocationError
from watcher.runtime import Journal
from watcher.runtime.journal import journal_target

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPT = Path(__file__).parent / "data" / "claude_stream.jsonl"

LOCKER = textwrap.dedent(
    """
    import sqlite3, sys, time
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("PRAGMA journal_mode=DELETE")  # rollback mode: an exclusive lock keeps readers out too
    conn.execute("BEGIN EXCLUSIVE")
    print("locked", flush=True)
    sys.stdin.read()  # held until the test closes stdin
    """
)


def watcher(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "watcher", *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env, timeout=60
    )


def refused(done: subprocess.CompletedProcess[str], *said: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    for text in said:
        assert text in done.stderr


def someone_elses(path: Path) -> bytes:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE people (name TEXT)")
    conn.execute("INSERT INTO people VALUES ('ada')")
    conn.commit()
    conn.close()
    return path.read_bytes()


@pytest.mark.parametrize(
    "argv",
    [["check"], ["prune", "--before", "2020-01-01"], ["migrate"]],
    ids=["check", "prune", "migrate"],
)
def test_someone_elses_database_is_refused_and_left_untouched(tmp_path: Path, argv: list[str]) -> None:
    db = tmp_path / "other.db"
    before = someone_elses(db)
    done = watcher("journal", argv[0], db, *argv[1:])
    refused(done, f"{db} is not a watcher journal (it has no events table; its tables are people)")
    assert db.read_bytes() == before, "no schema added, not switched to WAL"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]


def test_replay_into_someone_elses_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    before = someone_elses(db)
    refused(watcher("replay", TRANSCRIPT, "--journal", db), "is not a watcher journal")
    assert db.read_bytes() == before


@pytest.mark.parametrize("argv", [["check"], ["prune", "--before", "2020-01-01"], ["migrate"]], ids=lambda a: a[0])
def test_an_empty_file_is_no_journal_to_check_prune_or_migrate(tmp_path: Path, argv: list[str]) -> None:
    empty = tmp_path / "empty.sqlite3"
    empty.touch()
    refused(watcher("journal", argv[0], empty, *argv[1:]), f"{empty} is not a watcher journal (it is empty")
    assert empty.read_bytes() == b""


def test_an_empty_file_becomes_a_journal_when_a_replay_records_into_it(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite3"
    empty.touch()  # what `touch` or a crash before the first write leaves: a journal may start there
    assert watcher("replay", TRANSCRIPT, "--journal", empty, "--json").returncode == 0
    assert watcher("journal", "check", empty).stdout.startswith(f"{empty}: ok")


def test_migrate_creates_no_file(tmp_path: Path) -> None:
    refused(watcher("journal", "migrate", tmp_path / "new.sqlite3"), "no journal at")
    assert not (tmp_path / "new.sqlite3").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["journal", "check", "{dir}"],
        ["journal", "migrate", "{dir}"],
        ["journal", "prune", "{dir}", "--before", "2020-01-01"],
        ["replay", str(TRANSCRIPT), "--journal", "{dir}"],
    ],
    ids=["check", "migrate", "prune", "replay"],
)
def test_a_folder_is_named_as_a_folder(tmp_path: Path, argv: list[str]) -> None:
    done = watcher(*(a.format(dir=tmp_path) for a in argv))
    refused(done, f"{tmp_path} is a folder, not a journal file", str(tmp_path / "journal.sqlite3"))


@pytest.mark.parametrize(
    ("location", "said"),
    [
        ("", "the journal location is empty"),
        ("  ", "the journal location is empty"),
        ("postgresq://127.0.0.1:1/db", "starts with postgresq://, a scheme watcher cannot store a journal at"),
        ("mysql://root:hunter2@db/x", "starts with mysql://"),
    ],
)
def test_an_empty_location_or_an_unknown_scheme_is_a_usage_error(tmp_path: Path, location: str, said: str) -> None:
    for argv in (["journal", "check", location], ["replay", str(TRANSCRIPT), "--journal", location]):
        done = watcher(*argv, cwd=tmp_path)
        assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr
        assert "hunter2" not in done.stderr, "only the scheme is named: the rest may hold a password"
    assert list(tmp_path.iterdir()) == [], "no folders or file made of the URL"


def test_the_postgresql_scheme_is_read_in_any_case() -> None:
    assert journal_target("POSTGRESQL://u@h:5432/db") == "postgresql://u@h:5432/db"
    assert journal_target("Postgres://h/db") == "postgres://h/db"
    assert journal_target("j/journal.sqlite3") == Path("j/journal.sqlite3")
    with pytest.raises(JournalLocationError, match="xxx://"):
        journal_target("xxx://h/db")
    with pytest.raises(JournalLocationError) as caught:
        Journal("")
    assert isinstance(caught.value, JournalError) and isinstance(caught.value, ValueError)


def test_an_uppercase_url_reaches_the_server_and_makes_no_folders(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    done = watcher("replay", TRANSCRIPT, "--journal", "POSTGRESQL://127.0.0.1:1/db", cwd=tmp_path)
    refused(done, "PostgreSQL server at postgresql://127.0.0.1:1/db")
    assert list(tmp_path.iterdir()) == []


def test_a_locked_journal_is_busy_not_damaged(tmp_path: Path) -> None:
    path = tmp_path / "lock.sqlite3"
    Journal(path).close()
    with subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as locker:
        assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
        try:
            for argv in (["journal", "check", path], ["journal", "prune", path, "--before", "2020-01-01"]):
                done = watcher(*argv)
                refused(done, f"the journal at {path} is locked by another process", "wait for that process")
                assert "damaged" not in done.stderr and "mv " not in done.stderr
                assert "folder is writable" not in done.stderr
        finally:
            assert locker.stdin is not None
            locker.stdin.close()
    assert watcher("journal", "check", path).returncode == 0


def test_a_folder_at_a_journals_own_path_is_said_to_be_moved_aside(tmp_path: Path) -> None:
    taken = tmp_path / "journal.sqlite3"
    taken.mkdir()
    done = watcher("journal", "check", str(taken))
    refused(done, f"{taken} is a folder, not a journal file; move the folder aside, or give another path")
    assert "journal.sqlite3/journal.sqlite3" not in done.stderr
