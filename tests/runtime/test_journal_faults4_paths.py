"""A journal file at a path a careless user gives: one SQLite would read as a URI, or with a home folder that is not there."""

from __future__ import annotations

from pathlib import Path

import pytest

from watcher.core.errors import JournalError, JournalLocationError
from watcher.core.observations import UserMessage
from watcher.runtime import Journal
from watcher.runtime.events import ObservationEvent
from watcher.runtime.journal import journal_target


@pytest.mark.parametrize("name", ["file:j.sqlite3", ":memory:", "file:k.sqlite3?mode=memory", "a?b#c%41 é.sqlite3"])
def test_a_journal_is_the_file_its_path_names(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite read "file:j.sqlite3" as a URI and wrote j.sqlite3 (a reader of the path found no journal), and
    ":memory:" as no file at all (every event appended was gone)."""
    monkeypatch.chdir(tmp_path)
    with Journal(name) as journal:
        journal.append(ObservationEvent(session="s", observation=UserMessage(text="kept"), index=0))
        journal.flush()
    with Journal(name, create=False) as journal:
        assert [row.payload["observation"]["text"] for row in journal.read()] == ["kept"]
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(("-wal", "-shm"))) == [name]


def test_a_home_folder_that_is_not_there_is_said_not_raised() -> None:
    with pytest.raises(JournalLocationError, match="home folder that cannot be found"):
        journal_target("~no_such_user_here/journal.sqlite3")


@pytest.mark.parametrize("target", ["missing/folder/j.sqlite3", "j.sqlite3"], ids=["nowhere", "itself"])
def test_a_journal_path_that_is_a_link_leading_nowhere_is_said_so(target: str, tmp_path: Path) -> None:
    """It said "check the folder is writable", of a folder that was writable."""
    link = tmp_path / "j.sqlite3"
    link.symlink_to(target)
    with pytest.raises(JournalError, match=r"is a symbolic link to .* which leads nowhere"):
        Journal(link)
