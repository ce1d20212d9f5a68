"""A SQLite journal at odd locations: a read-only mount, a full disk (small tmpfs mounts: root only, as
CI runs), a named pipe, a URL with its slashes mistyped."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from watcher.cli import main
from watcher.core.errors import JournalError
from watcher.core.observations import UserMessage
from watcher.runtime import Journal
from watcher.runtime.events import ObservationEvent

needs_mount = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("mount") is None, reason="mounting a tmpfs needs root"
)

_counter = itertools.count()


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 1 MB tmpfs mounted at a fresh folder (unmounted afterwards)."""
    folder = tmp_path / f"mnt{next(_counter)}"
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False, capture_output=True)


def _event(i: int, text: str = "x") -> ObservationEvent:
    return ObservationEvent(session="s", observation=UserMessage(text=text), index=i)


@needs_mount
def test_check_reads_a_whole_journal_on_a_read_only_mount(tmpfs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It said 'cannot be read as a journal … move it aside' of a healthy journal (WAL needs its -shm file)."""
    path = tmpfs / "journal.sqlite3"
    with Journal(path) as journal:
        journal.append(_event(0))
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True, capture_output=True)
    code = main(["journal", "check", str(path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"{path}: ok" in out and "events readable: 1, unreadable: 0" in out
    assert "move it aside" not in out + err


def _fill(journal: Journal) -> tuple[int, str]:
    """Append and flush until the disk is full: the last index flushed, and what the failed flush said."""
    flushed = -1
    for i in range(100_000):
        journal.append(_event(i, "x" * 2000))
        if i % 50 == 49:
            try:
                journal.flush(timeout=10)
            except JournalError as exc:
                return flushed, str(exc)
            flushed = i
    raise AssertionError("the 1 MB disk never filled")


@needs_mount
def test_a_full_disk_is_named_and_what_was_flushed_stays(tmpfs: Path) -> None:
    path = tmpfs / "journal.sqlite3"
    journal = Journal(path)
    flushed, said = _fill(journal)
    assert "its disk is full. Free some space on it or set WATCHER_JOURNAL" in said, said
    with pytest.raises(JournalError, match="disk is full"):
        journal.close()
    with Journal(path, create=False) as reader:
        indices = [row.payload["index"] for row in reader.read(limit=100_000)]
    assert flushed > 0 and indices[: flushed + 1] == list(range(flushed + 1)), "every flushed event is kept"


def test_a_named_pipe_is_called_that(tmp_path: Path) -> None:
    """SQLite says "disk I/O error" of a pipe, and the message blamed the folder's permissions."""
    pipe = tmp_path / "journal.sqlite3"
    os.mkfifo(pipe)
    with pytest.raises(JournalError, match="is a named pipe, not a journal file"):
        Journal(pipe)


@pytest.mark.parametrize("location", ["postgresql:/db", "postgres:host/db", "POSTGRESQL:host"])
def test_a_url_with_its_slashes_mistyped_is_not_taken_for_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], location: str
) -> None:
    """As a path it would become a folder named 'postgresql:' once a session started."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WATCHER_JOURNAL", location)
    assert main(["fleet", "status"]) == 2
    assert "postgresql://HOST/DATABASE (two slashes)" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_prune_to_a_date_still_to_come_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A mistyped year (2062 for 2026) deleted every event, those of running sessions too."""
    path = tmp_path / "journal.sqlite3"
    with Journal(path) as journal:
        journal.append(_event(0))
    assert main(["journal", "prune", str(path), "--before", "2999-01-01"]) == 2
    assert "is still to come" in capsys.readouterr().err
    with Journal(path, create=False) as journal:
        assert len(journal.read()) == 1


@needs_mount
def test_a_journal_on_a_read_only_mount_is_read_and_a_write_says_why_it_cannot(tmpfs: Path) -> None:
    """An editor shows a read-only project's findings: the journal opened to follow it is read-only;
    before, opening it failed ('unable to open database file') and nothing was shown."""
    path = tmpfs / "journal.sqlite3"
    with Journal(path) as journal:
        for i in range(3):
            journal.append(_event(i))
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True, capture_output=True)
    journal = Journal(path, create=False)
    try:
        assert [r.payload["index"] for r in journal.read() if r.kind == "observation"] == [0, 1, 2]
        with pytest.raises(JournalError, match="read-only filesystem: it can be read, but nothing can be written"):
            journal.submit_command("s", "inject", "i-1")
    finally:
        journal.append(_event(9))  # buffered; the close that writes it says why it cannot
        with pytest.raises(JournalError, match="read-only filesystem"):
            journal.close()


@needs_mount
def test_a_live_journal_seen_through_a_read_only_mount_is_read_with_its_wal(tmpfs: Path, tmp_path: Path) -> None:
    """Rows still in the write-ahead log of a writer that has not closed are read too, through a
    read-only view of its folder (a bind mount, as a container's read-only volume is)."""
    path = tmpfs / "journal.sqlite3"
    view = tmp_path / "view"
    view.mkdir()
    writer = Journal(path)
    try:
        writer.append(_event(0))
        writer.flush()
        assert (tmpfs / "journal.sqlite3-wal").exists()
        subprocess.run(["mount", "--bind", str(tmpfs), str(view)], check=True, capture_output=True)
        try:
            subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], check=True, capture_output=True)
            reader = Journal(view / "journal.sqlite3", create=False)
            try:
                assert [r.payload["index"] for r in reader.read() if r.kind == "observation"] == [0]
                writer.append(_event(1))
                writer.flush()
                assert [r.payload["index"] for r in reader.read() if r.kind == "observation"] == [0, 1]
            finally:
                reader.close()
        finally:
            subprocess.run(["umount", "-l", str(view)], check=False, capture_output=True)
    finally:
        writer.close()
