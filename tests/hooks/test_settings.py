"""``watcher hooks install|status|uninstall``: merge, back up, remove exactly what was added.

Scopes and byte-for-byte restores in a temporary HOME: ``test_install_scopes.py``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from watcher.cli import main
from watcher.hooks._wire import EVENTS

USER_HOOKS = {
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
        "Notification": {"not": "a shape watcher writes"},
    },
    "permissions": {"allow": ["Bash(git *)"]},
}


@pytest.fixture
def in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Work in ``tmp_path``, with a socket and a journal of the test's own."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WATCHER_SOCKET", str(tmp_path / "run" / "serve.sock"))
    monkeypatch.setenv("WATCHER_JOURNAL", str(tmp_path / "journal.sqlite3"))


def settings(project: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((project / ".claude" / "settings.json").read_text())
    return data


def test_install_keeps_the_users_hooks_backs_up_and_uninstall_restores_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(USER_HOOKS))
    monkeypatch.chdir(tmp_path)
    assert main(["hooks", "install", "--scope", "project", "--watcher", "security", "--watcher", "stuck"]) == 0
    data = settings(tmp_path)
    hooks = data["hooks"]
    assert isinstance(hooks, dict)
    assert set(EVENTS) <= set(hooks)
    assert hooks["PreToolUse"][0] == USER_HOOKS["hooks"]["PreToolUse"][0]  # type: ignore[index]
    ours = hooks["PreToolUse"][1]["hooks"][0]
    assert ours["type"] == "command" and ours["command"].startswith("watcher-hook PreToolUse --agent claude")
    assert "--watcher security --watcher stuck" in ours["command"]
    assert data["permissions"] == USER_HOOKS["permissions"]
    backups = list((tmp_path / ".claude").glob("settings.json.watcher-backup*"))
    assert len(backups) == 1 and json.loads(backups[0].read_text()) == USER_HOOKS

    assert main(["hooks", "install", "--project", "--mode", "manual"]) == 0  # again: replaces ours, adds nothing twice
    assert len(list((tmp_path / ".claude").glob("settings.json.watcher-backup*"))) == 1  # still one backup
    again = settings(tmp_path)["hooks"]
    assert isinstance(again, dict) and len(again["PreToolUse"]) == 2 and "--mode manual" in str(again["PreToolUse"][1])

    assert main(["hooks", "uninstall"]) == 0  # finds the install in the project's file
    assert settings(tmp_path) == USER_HOOKS
    assert not (tmp_path / ".claude" / "watcher-hooks.json").exists()
    assert not list((tmp_path / ".claude").glob("settings.json.watcher-backup*"))  # restored: no backup left
    assert "removed 9 watcher hook entries" in capsys.readouterr().out


def test_install_into_a_new_file_and_uninstall_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["hooks", "install"]) == 0  # the default: this checkout's .claude/settings.local.json
    local = json.loads((tmp_path / ".claude" / "settings.local.json").read_text())
    assert len(local["hooks"]) == len(EVENTS)
    assert main(["hooks", "uninstall"]) == 0
    assert list(tmp_path.iterdir()) == []  # no file, no .claude folder: as before
    assert main(["hooks", "uninstall"]) == 0  # nothing installed: says so, changes nothing


def test_a_malformed_settings_file_is_a_clear_error_and_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{not json")
    monkeypatch.chdir(tmp_path)
    assert main(["hooks", "install", "--scope", "project"]) == 2
    assert "is not valid JSON" in capsys.readouterr().err
    assert (tmp_path / ".claude" / "settings.json").read_text() == "{not json"


@pytest.mark.parametrize("shape", ['"x"', '{"matcher": "*"}'])
def test_an_event_that_is_not_a_list_is_a_clear_error_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], shape: str
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    text = '{"hooks": {"PreToolUse": ' + shape + "}}"
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.local.json").write_text(text)
    exclude = (tmp_path / ".git" / "info" / "exclude").read_text()
    monkeypatch.chdir(tmp_path)
    assert main(["hooks", "install"]) == 2
    assert "hooks.PreToolUse is not a list of matcher groups" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / ".claude").iterdir()) == ["settings.local.json"]  # no backup left
    assert (tmp_path / ".claude" / "settings.local.json").read_text() == text
    assert (tmp_path / ".git" / "info" / "exclude").read_text() == exclude


@pytest.mark.parametrize("budget", ["nan", "inf", "0", "-1", "abc"])
def test_install_refuses_a_budget_that_is_no_number_of_seconds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], budget: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(["hooks", "install", "--budget", budget])
    assert exit_.value.code == 2 and "more than 0 and at most 600" in capsys.readouterr().err
    assert not (tmp_path / ".claude").exists()


def test_a_symlinked_settings_file_stays_a_link_through_install_and_uninstall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"env": {"A": "1"}}')
    (tmp_path / ".claude").mkdir()
    link = tmp_path / ".claude" / "settings.json"
    link.symlink_to(dotfiles)
    monkeypatch.chdir(tmp_path)
    assert main(["hooks", "install", "--scope", "project"]) == 0
    assert link.is_symlink() and "watcher-hook PreToolUse" in dotfiles.read_text()
    assert main(["hooks", "uninstall", "--scope", "project"]) == 0
    assert link.is_symlink() and dotfiles.read_text() == '{"env": {"A": "1"}}'


def test_a_codex_home_that_is_a_file_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "codex").write_text("not a folder")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.chdir(tmp_path)
    assert main(["hooks", "install", "--agent", "codex", "--scope", "user"]) == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and "CODEX_HOME must be a folder" in err and "Traceback" not in err


@pytest.mark.parametrize("given", ["[1, 2]", '"rm -rf ~/"', "null"])
def test_hooks_check_input_that_is_no_object_is_a_clear_error(capsys: pytest.CaptureFixture[str], given: str) -> None:
    assert main(["hooks", "check", "--input", given]) == 2
    assert "--input is a JSON" in capsys.readouterr().err


@pytest.mark.usefixtures("in_project")
def test_status_with_a_damaged_install_record_still_shows_the_daemon_and_the_sessions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["hooks", "install"])
    (tmp_path / ".claude" / "watcher-hooks.local.json").write_text("{damaged")
    capsys.readouterr()
    assert main(["hooks", "status"]) == 0
    out = capsys.readouterr().out
    assert "problem: the install record" in out and "damaged" in out
    assert "daemon: not running" in out and "events: none arrived yet" in out


@pytest.mark.usefixtures("in_project")
def test_status_says_what_is_installed_and_that_no_events_arrived(capsys: pytest.CaptureFixture[str]) -> None:
    main(["hooks", "install"])
    capsys.readouterr()
    assert main(["hooks", "status"]) == 0
    out = capsys.readouterr().out
    assert "hooks: installed" in out and "security, stuck, errors" in out
    assert "daemon: not running" in out
    assert "events: none arrived yet" in out


@pytest.mark.usefixtures("in_project")
def test_hooks_an_earlier_version_wrote_still_count_and_a_new_install_replaces_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["hooks", "install"])
    # what an earlier version wrote: `watcher hook EVENT ...`, recorded in its manifest
    for name in ("settings.local.json", "watcher-hooks.local.json"):
        path = tmp_path / ".claude" / name
        path.write_text(path.read_text().replace('"watcher-hook ', '"watcher hook '))
    capsys.readouterr()
    assert main(["hooks", "status"]) == 0
    out = capsys.readouterr().out
    assert "hooks: installed" in out and "these hooks run `watcher hook`" in out and "problem:" not in out
    assert main(["hooks", "install"]) == 0
    data = json.loads((tmp_path / ".claude" / "settings.local.json").read_text())
    commands = [h["command"] for groups in data["hooks"].values() for g in groups for h in g["hooks"]]
    assert len(commands) == len(EVENTS) and all(c.startswith("watcher-hook ") for c in commands)
    capsys.readouterr()
    main(["hooks", "status"])
    assert "earlier version" not in capsys.readouterr().out


def test_status_names_a_journal_that_is_a_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WATCHER_SOCKET", str(tmp_path / "run" / "serve.sock"))
    monkeypatch.setenv("WATCHER_JOURNAL", str(tmp_path))
    assert main(["hooks", "status"]) == 0
    out = capsys.readouterr().out
    assert f"problem: the journal {tmp_path} is a folder" in out and "events: none arrived" not in out


def test_install_from_a_subfolder_goes_to_the_repositorys_root_where_uninstall_finds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "src" / "sub").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "src" / "sub")
    assert main(["hooks", "install"]) == 0
    assert "the repository's root is" in capsys.readouterr().out
    assert (tmp_path / ".claude" / "settings.local.json").is_file() and not (
        tmp_path / "src" / "sub" / ".claude"
    ).exists()
    monkeypatch.chdir(tmp_path)
    assert main(["hooks", "uninstall"]) == 0
    assert "removed 9 watcher hook entries" in capsys.readouterr().out


@pytest.mark.usefixtures("in_project")
def test_hooks_installed_in_two_scopes_are_named_by_install_and_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hooks", "install"]) == 0
    assert main(["hooks", "install", "--scope", "project"]) == 0
    assert "also installed with --scope local, so the CLI runs them twice" in capsys.readouterr().out
    assert main(["hooks", "status"]) == 0
    assert "also installed with --scope project" in capsys.readouterr().out


def test_hooks_check_takes_a_file_tools_path_only_as_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hooks", "check", "--tool", "Read", "~/.ssh/id_rsa"]) == 2
    assert "--tool Read reads or writes a file: give it as --path" in capsys.readouterr().err


def test_codex_install_writes_hooks_json_without_the_events_codex_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    monkeypatch.chdir(tmp_path)
    assert main(["hooks", "install", "--agent", "codex", "--user"]) == 0
    assert "/hooks" in capsys.readouterr().out  # the trust step is named
    data = json.loads((tmp_path / "codex-home" / "hooks.json").read_text())
    assert "PostToolUseFailure" not in data["hooks"] and "PreToolUse" in data["hooks"]
    group = data["hooks"]["PreToolUse"][0]
    assert "matcher" not in group and "--agent codex" in group["hooks"][0]["command"]
    assert main(["hooks", "uninstall", "--agent", "codex", "--user"]) == 0
    assert not (tmp_path / "codex-home").exists()  # it made the folder and the file: both are gone


@pytest.mark.usefixtures("in_project")
def test_status_checks_the_settings_file_holds_what_the_record_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The record says installed; the CLI reads the settings file, which a hand edit may have broken."""
    main(["hooks", "install"])
    path = tmp_path / ".claude" / "settings.local.json"
    capsys.readouterr()
    assert main(["hooks", "status"]) == 0 and "problem" not in capsys.readouterr().out

    data = json.loads(path.read_text())
    del data["hooks"]["PreToolUse"], data["hooks"]["Stop"]
    path.write_text(json.dumps(data))
    main(["hooks", "status"])
    out = capsys.readouterr().out
    assert f"problem: 2 of watcher's 9 hook entries are no longer in {path} (PreToolUse, Stop)" in out

    path.write_text("{," + path.read_text()[1:])
    main(["hooks", "status"])
    assert f"problem: {path} cannot be read as JSON" in capsys.readouterr().out

    path.unlink()
    main(["hooks", "status"])
    assert f"problem: {path} is gone" in capsys.readouterr().out
    assert main(["hooks", "install"]) == 0  # installing again puts them back
    capsys.readouterr()
    main(["hooks", "status"])
    assert "problem" not in capsys.readouterr().out
