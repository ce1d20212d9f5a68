"""A journal started in a project's ``.watcher`` folder keeps itself out of git; the folder's settings do not."""

from __future__ import annotations

import subprocess
from pathlib import Path

from watcher.core.observations import UserMessage
from watcher.runtime.events import ObservationEvent
from watcher.runtime.journal import Journal


def _untracked(root: Path) -> set[str]:
    shown = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=root, capture_output=True, text=True, check=True
    )
    return {line[3:] for line in shown.stdout.splitlines()}


def test_the_journal_is_ignored_and_policy_toml_is_not(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".watcher").mkdir()
    (tmp_path / ".watcher" / "policy.toml").write_text('[[deny]]\ncommand = "make deploy"\n')
    journal = Journal(tmp_path / ".watcher" / "journal.sqlite3")
    try:
        journal.append(ObservationEvent(session="s", observation=UserMessage(text="hello"), index=0))
        journal.flush()
        assert (tmp_path / ".watcher" / "journal.sqlite3-wal").exists()  # open in WAL mode: its side files too
        assert _untracked(tmp_path) == {".watcher/.gitignore", ".watcher/policy.toml"}
    finally:
        journal.close()


def test_a_gitignore_already_there_and_a_journal_elsewhere_are_left_alone(tmp_path: Path) -> None:
    (tmp_path / ".watcher").mkdir()
    (tmp_path / ".watcher" / ".gitignore").write_text("*\n")
    Journal(tmp_path / ".watcher" / "journal.sqlite3").close()
    assert (tmp_path / ".watcher" / ".gitignore").read_text() == "*\n"
    Journal(tmp_path / "logs" / "journal.sqlite3").close()
    assert not (tmp_path / "logs" / ".gitignore").exists()
