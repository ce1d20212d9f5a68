"""The ``watcher`` command never prints a key it was handed by mistake: in a server URL, in a
URL variable, in a transcript's session id or file paths. Each runs the real command."""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOOP = ROOT / "example_notebooks" / "data" / "notebook_error_loop.jsonl"
KEY = "sk-ant-api03-Qx7vT2mKp9LwZr4nBc8dFh1jYs6uEe3oGi5aNt0lXq"
SHOWN = KEY[10:30]  # any stretch of the key past its prefix must not appear


def watcher(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith(("_BASE_URL", "_API_KEY"))}
    return subprocess.run(
        [sys.executable, "-m", "watcher", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        env={**clean, "COLUMNS": "100", **(env or {})},
    )


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens there once it is closed


@pytest.mark.parametrize(
    ("flags", "env"),
    [
        (
            ["--evaluator", "anthropic"],
            {"ANTHROPIC_API_KEY": "x", "ANTHROPIC_BASE_URL": "http://u:{key}@127.0.0.1:{port}"},
        ),
        (["--evaluator", "anthropic", "--base-url", "http://u:{key}@127.0.0.1:{port}/v1"], {"ANTHROPIC_API_KEY": "x"}),
        (["--evaluator", "openai", "--model", "m", "--base-url", "http://u:{key}@127.0.0.1:{port}/v1"], {}),
        (["--evaluator", "openai", "--model", "m"], {"WATCHER_OPENAI_BASE_URL": "http://{key}@127.0.0.1:{port}/v1"}),
    ],
    ids=["anthropic env", "anthropic flag", "openai flag", "openai env"],
)
def test_an_unreachable_server_with_a_key_in_its_url_is_named_without_it(flags: list[str], env: dict[str, str]) -> None:
    port = _closed_port()
    fill = {"key": KEY, "port": port}
    done = watcher(
        "replay", LOOP, *(f.format(**fill) for f in flags), env={k: v.format(**fill) for k, v in env.items()}
    )
    assert done.returncode == 1, done.stderr
    assert f"'s server at http://***@127.0.0.1:{port}" in done.stderr
    assert SHOWN not in done.stderr + done.stdout


@pytest.mark.parametrize(
    "value", [KEY, f"ftp://u:{KEY}@h", f"http://u:{KEY}@127.0.0.1:notaport/"], ids=["a bare key", "ftp", "bad port"]
)
def test_a_key_in_a_url_variable_is_not_echoed_and_stops_only_commands_that_use_it(value: str) -> None:
    for variable in ("WATCHER_OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        refused = watcher("replay", LOOP, env={variable: value})
        assert (
            refused.returncode == 2
            and f"error: {variable}=" in refused.stderr
            and "is not an http(s) URL" in refused.stderr
        )
        assert SHOWN not in refused.stderr + refused.stdout
        for command in (["roles"], ["formats"], ["completion", "bash"]):  # they talk to no server
            done = watcher(*command, env={variable: value})
            assert done.returncode == 0 and done.stdout, (command, done.stderr)
            assert SHOWN not in done.stderr + done.stdout


def _leaky_transcript(path: Path) -> Path:
    """A Claude Code transcript whose session id and written file's path hold a key."""
    session, folder = f"sess-{KEY}", f"/home/u/{KEY}"
    write = {"file_path": f"{folder}/settings.env", "content": f"ANTHROPIC_API_KEY={KEY}\nDEBUG=1\n"}
    records = [
        {"type": "user", "sessionId": session, "uuid": "u0", "message": {"role": "user", "content": "set it up"}},
        {"type": "assistant", "sessionId": session, "uuid": "a1", "cwd": folder, "message": {"role": "assistant",
         "content": [{"type": "tool_use", "id": "t1", "name": "Write", "input": write}]}},
        {"type": "user", "sessionId": session, "uuid": "u1", "message": {"role": "user",
         "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "wrote it"}]}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_replay_shows_and_journals_a_secret_session_id_and_path_redacted(tmp_path: Path) -> None:
    transcript, journal = _leaky_transcript(tmp_path / "leak.jsonl"), tmp_path / "j.sqlite3"
    table = watcher("replay", transcript, "--all", "--wide", "--journal", journal)
    assert table.returncode == 0, table.stderr
    assert re.search(r"of 'sess-sk-ant-…\[REDACTED\]~[0-9a-f]{8}'", table.stdout), table.stdout
    assert "[/home/u/sk-ant-…[REDACTED]/settings.env:1]" in table.stdout  # the finding's location, masked
    as_json = watcher("replay", transcript, "--json")
    shown = {json.loads(line)["session"] for line in as_json.stdout.splitlines()}
    with sqlite3.connect(journal) as db:
        stored = {session for (session,) in db.execute("SELECT DISTINCT session FROM events")}
        everything = "\n".join(map(str, db.execute("SELECT * FROM events").fetchall()))
    assert len(stored) == 1 and stored == shown  # one session, one name, wherever it is shown
    assert next(iter(stored)) in table.stdout
    assert SHOWN not in table.stdout + table.stderr + as_json.stdout + as_json.stderr + everything


def test_an_error_quoting_a_path_that_holds_a_key_masks_it(tmp_path: Path) -> None:
    done = watcher("replay", tmp_path / KEY / "missing.jsonl")
    assert done.returncode == 2 and "sk-ant-…[REDACTED]/missing.jsonl: no such file" in done.stderr
    assert SHOWN not in done.stderr
