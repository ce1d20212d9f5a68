"""Fault class 8: a damaged hook install record is a message, and the settings stay as they were."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import no_traceback, watcher_cli

pytestmark = [pytest.mark.faults, pytest.mark.slow]


@pytest.mark.parametrize("record", ["{not json", "[]", '{"commands": 5, "installed_at": 1}', '{"commands": {}}'])
def test_uninstall_with_a_damaged_install_record_says_what_to_do_and_changes_nothing(
    tmp_path: Path, record: str
) -> None:
    (tmp_path / ".git").mkdir()
    assert watcher_cli("hooks", "install", "--scope", "project", cwd=tmp_path).returncode == 0
    settings = tmp_path / ".claude" / "settings.json"
    manifest = tmp_path / ".claude" / "watcher-hooks.json"
    before = settings.read_bytes()
    manifest.write_text(record)
    for command in (("hooks", "uninstall"), ("hooks", "install", "--scope", "project"), ("hooks", "status")):
        done = watcher_cli(*command, cwd=tmp_path)
        said = done.stderr
        if command == ("hooks", "status"):  # status names the problem and still shows the daemon and the sessions
            assert done.returncode == 0 and "daemon:" in done.stdout, done.stdout
            said = done.stdout
        else:
            assert done.returncode == 2, (command, done.stderr)
        assert no_traceback(done.stderr), (command, done.stderr)
        assert "watcher-hooks.json is damaged" in said and "install again" in said
        assert settings.read_bytes() == before
        assert manifest.read_text() == record
