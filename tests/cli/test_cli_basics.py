"""The ``watcher`` command as a new user first meets it: version, help, suggestions, completion."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from watcher._version import __version__

ROOT = Path(__file__).resolve().parents[2]
LOOP = ROOT / "example_notebooks" / "data" / "notebook_error_loop.jsonl"


def watcher(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "watcher", *args], capture_output=True, text=True, timeout=60, cwd=cwd,
        env={**os.environ, **(env or {})},
    )  # fmt: skip


def test_version() -> None:
    done = watcher("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"watcher {__version__}"


@pytest.mark.parametrize("group", [[], ["fleet"], ["journal"]])
def test_a_bare_command_or_group_prints_its_help(group: list[str]) -> None:
    done = watcher(*group)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith(f"usage: watcher {' '.join(group)}".rstrip())


def test_bare_hooks_shows_the_status(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    done = watcher("hooks", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "hooks: not installed" in done.stdout


@pytest.mark.parametrize(
    ("argv", "suggestion"),
    [(["replya", "x.jsonl"], "'replay'"), (["hooks", "statsu"], "'status'"), (["fleet", "helth", "t"], "'health'"),
     (["replay", str(LOOP), "-w", "secrity"], "'security'"), (["replay", str(LOOP), "--jsn"], "'--json'"),
     (["fleet", "status", "--fleeet", "a"], "'--fleet'")],
)  # fmt: skip
def test_a_mistyped_command_role_or_option_gets_a_suggestion(argv: list[str], suggestion: str) -> None:
    done = watcher(*argv)
    assert done.returncode == 2 and f"did you mean {suggestion}?" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_an_unknown_option_is_answered_with_its_subcommands_usage() -> None:
    done = watcher("fleet", "status", "--fleeet", "a")
    assert done.stderr.startswith("usage: watcher fleet status"), done.stderr
    assert "watcher fleet status: error: unrecognized arguments: --fleeet a" in done.stderr


def test_help_shows_no_markup() -> None:
    done = watcher("fleet", "--help")
    assert done.returncode == 0 and "``" not in done.stdout
    assert "run many agent tasks under supervision" in done.stdout
    run = watcher("fleet", "run", "--help")
    assert "a TOML tasks file" in run.stdout


@pytest.mark.parametrize("command", ["formats", "roles"])
def test_formats_and_roles_as_json(command: str) -> None:
    done = watcher(command, "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert rows and all(isinstance(row["name"], str) for row in rows)
    assert (
        ("security" in {r["name"] for r in rows})
        if command == "roles"
        else ("claude-code" in {r["name"] for r in rows})
    )


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_code_for_each_shell(shell: str) -> None:
    done = watcher("completion", shell)
    assert done.returncode == 0 and "watcher" in done.stdout and len(done.stdout) > 200


def test_completion_completes_commands_and_flags(tmp_path: Path) -> None:
    """The shell's completion request, answered as argcomplete's bash code asks it."""
    out = tmp_path / "completions"
    for line, expected in (("watcher rep", "replay"), ("watcher replay --wi", "--wide")):
        env = {"_ARGCOMPLETE": "1", "_ARGCOMPLETE_SHELL": "bash", "COMP_LINE": line, "COMP_POINT": str(len(line)),
               "_ARGCOMPLETE_STDOUT_FILENAME": str(out), "_ARGCOMPLETE_IFS": "\n"}  # fmt: skip
        done = watcher(env=env)
        assert done.returncode == 0, done.stderr
        assert expected in [c.strip() for c in out.read_text().split("\n")], out.read_text()


@pytest.mark.parametrize(
    ("variable", "value", "argv"),
    [
        ("ANTHROPIC_BASE_URL", "localhost:8080", ["replay", str(LOOP)]),
        ("WATCHER_OPENAI_BASE_URL", "ftp://host/v1", ["hooks", "status"]),
        ("WATCHER_SERVE_IDLE", "ten", ["serve"]),
    ],
)
def test_a_bad_variable_is_one_line_naming_it_before_anything_starts(
    tmp_path: Path, variable: str, value: str, argv: list[str]
) -> None:
    done = watcher(*argv, env={variable: value, "WATCHER_SOCKET": str(tmp_path / "run" / "serve.sock")}, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"watcher: error: {variable}={value!r} is ") and done.stderr.count("\n") == 1
    assert "unset it" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "run").exists() and not (tmp_path / ".watcher").exists()  # nothing started


def test_the_language_server_refuses_a_bad_variable_at_start(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "watcher.lsp_bridge"], capture_output=True, text=True, timeout=60, cwd=tmp_path,
        env={**os.environ, "WATCHER_FORGE_API": "api.github.com"}, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""  # stdout stays the protocol's
    assert done.stderr.startswith("watcher-lsp: WATCHER_FORGE_API='api.github.com' is not an http(s) URL")


def test_an_option_given_after_double_dash_is_said_to_be_there_not_suggested_as_itself() -> None:
    done = watcher("spawn", "--", "-rf", "--no-pr")
    assert done.returncode == 2
    assert "'--no-pr' came after '--', where every word is a value: put options before '--'" in done.stderr
    assert "did you mean" not in done.stderr
