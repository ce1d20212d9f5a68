"""What is wrong around a hook call never turns the guard off, and the daemon deletes nothing of yours.

Real processes: the ``watcher-hook`` script, a ``watcher serve`` of the test's own, and frames sent
to its socket as an older or newer hook command would send them.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hook_procs import RM_HOME, daemon, hook_env, run_hook, run_raw, stop_started_daemon, wait_for

from watcher.hooks.client import hook_frame

pytestmark = pytest.mark.slow


def _denied(answer: dict[str, object] | None) -> str:
    """The denial's reason ("" when the call was not denied)."""
    body = (answer or {}).get("hookSpecificOutput")
    if isinstance(body, dict) and body.get("permissionDecision") == "deny":
        return str(body.get("permissionDecisionReason"))
    return ""


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (("--mode", "bogus"), "--mode takes autonomous or manual"),
        (("--budget", "inf"), "--budget takes seconds"),
        (("--budget", "nan"), "--budget takes seconds"),
        (("--budget", "abc"), "--budget takes seconds"),
        (("--max-stop-blocks", "-1"), "--max-stop-blocks takes a whole number"),
        (("--from-a-newer-version", "1"), "unknown option --from-a-newer-version"),
        (("--mode",), "--mode needs a value"),
    ],
)
@pytest.mark.parametrize("with_daemon", [True, False])
def test_a_hook_command_with_wrong_options_is_still_guarded(
    tmp_path: Path, options: tuple[str, ...], named: str, with_daemon: bool
) -> None:
    env = hook_env(tmp_path, WATCHER_HOOK_DAEMON="1" if with_daemon else "0")
    payload = {"session_id": "s-1", "cwd": str(tmp_path), "hook_event_name": "PreToolUse", **RM_HOME}
    if with_daemon:
        run_hook(env, "PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}})  # starts one
    try:
        done = run_raw(env, json.dumps(payload), "PreToolUse", *options)
    finally:
        stop_started_daemon(env)
    assert done.returncode == 0
    assert _denied(json.loads(done.stdout)).startswith("[watcher guard]")
    assert named in done.stderr and "the guard judged the call alone" in done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["PreToolUse", "--mode", "bogus"],
        ["PreToolUse", "--budget", "inf"],
        ["PreToolUse", "--max-stop-blocks", "-1"],
        ["PreToolUse", "--an-option-of-a-newer-version", "x"],
    ],
)
def test_the_daemon_answers_a_frame_with_wrong_options_with_the_guards_verdict(tmp_path: Path, argv: list[str]) -> None:
    env = hook_env(tmp_path)
    payload = {"session_id": "s-1", "cwd": str(tmp_path), "hook_event_name": "PreToolUse", **RM_HOME}
    with daemon(env), socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(20)
        conn.connect(env["WATCHER_SOCKET"])
        conn.sendall(hook_frame(argv, json.dumps(payload).encode()))
        conn.shutdown(socket.SHUT_WR)
        reply = b"".join(iter(lambda: conn.recv(65536), b""))
    assert _denied(json.loads(reply)).startswith("[watcher guard]"), reply


@pytest.mark.parametrize("with_daemon", [True, False])
def test_a_tool_input_nested_too_deeply_to_read_is_denied(tmp_path: Path, with_daemon: bool) -> None:
    env = hook_env(tmp_path, WATCHER_HOOK_DAEMON="1" if with_daemon else "0")
    deep = "[" * 5000 + "]" * 5000  # valid JSON, as an MCP tool's input may be: Python's parser gives up at ~1000
    text = (
        '{"session_id": "s-1", "hook_event_name": "PreToolUse", "tool_name": "mcp__shell__run", '
        f'"cwd": "{tmp_path}", "tool_input": {{"command": "rm -rf ~/", "options": {deep}}}}}'
    )
    if with_daemon:
        run_hook(env, "PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}})
    try:
        done = run_raw(env, text, "PreToolUse")
    finally:
        stop_started_daemon(env)
    assert done.returncode == 0
    assert "[unreadable]" in _denied(json.loads(done.stdout)) and "nested too deeply" in done.stdout


def test_a_file_at_the_socket_path_is_never_deleted_and_the_guard_still_answers(tmp_path: Path) -> None:
    mine = tmp_path / "run" / "notes.txt"
    mine.parent.mkdir(mode=0o700)
    mine.write_text("precious")
    env = hook_env(tmp_path, WATCHER_SOCKET=str(mine))
    for _ in range(2):
        run = run_hook(env, "PreToolUse", RM_HOME)
        assert _denied(run.answer).startswith("[watcher guard]")
    served = subprocess.run(
        [sys.executable, "-m", "watcher", "serve", "--idle", "5"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    log = (mine.parent / "hooks.log").read_text()
    assert log.count("is there and is not a socket; no daemon is started there") == 2  # each call said so
    assert mine.read_text() == "precious"
    assert served.returncode != 0 and f"{mine} is there and is not a socket" in served.stderr
    assert "Traceback" not in served.stderr
    assert not (mine.parent / "notes.pid").exists()


def test_a_daemon_whose_socket_is_replaced_by_a_file_leaves_the_file_and_stops(tmp_path: Path) -> None:
    env = hook_env(tmp_path)
    sock = Path(env["WATCHER_SOCKET"])
    with daemon(env) as proc:
        sock.unlink()
        sock.write_text("someone else's")
        proc.wait(timeout=10)  # it checks its socket twice a second
    assert sock.read_text() == "someone else's"
    log = (sock.parent / "serve.log").read_text()
    assert "is there and is not a socket" in log and "stopping" in log
    assert os.path.exists(sock)


@pytest.mark.parametrize("with_daemon", [True, False])
def test_a_call_the_projects_policy_allows_is_allowed_with_or_without_a_daemon(
    tmp_path: Path, with_daemon: bool
) -> None:
    project = tmp_path / "p"
    (project / ".watcher").mkdir(parents=True)
    (project / ".watcher" / "policy.toml").write_text('[[allow]]\ncommand = "*"\nreason = "a throwaway VM"\n')
    env = hook_env(tmp_path, WATCHER_HOOK_DAEMON="1" if with_daemon else "0")
    payload = {"session_id": "s-1", "cwd": str(project), "hook_event_name": "PreToolUse", **RM_HOME}
    if with_daemon:
        run_hook(env, "PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}})
    answers = []
    try:
        for n in range(3):  # again and again: what the watchers found on the first is known by the next
            done = run_raw(env, json.dumps({**payload, "tool_use_id": f"toolu_rm{n}"}), "PreToolUse", "--budget", "10")
            answers.append(json.loads(done.stdout) if done.stdout.strip() else None)
            wait_for(lambda n=n: _journaled(env, f"toolu_rm{n}"))  # judged: the next call knows what was found
    finally:
        stop_started_daemon(env)
    assert not any(_denied(a) for a in answers), answers  # the person's rule decides; a watcher's finding is told


def _journaled(env: dict[str, str], tool_use_id: str) -> bool:
    """Whether the watchers have journaled the call ``tool_use_id`` (a daemon's, or a later judge's)."""
    try:
        with sqlite3.connect(env["WATCHER_JOURNAL"]) as db:
            found = db.execute(
                "SELECT 1 FROM events WHERE kind = 'observation' AND payload LIKE ?", (f"%{tool_use_id}%",)
            ).fetchone()
    except sqlite3.Error:  # not created yet, or being written: not yet
        return False
    return found is not None


def test_a_session_id_with_a_lone_surrogate_is_still_journaled(tmp_path: Path) -> None:
    env = hook_env(tmp_path)
    with daemon(env):
        run = run_hook(env, "PreToolUse", RM_HOME, session="s-\ud800")  # json.dumps writes it as \ud800
        assert _denied(run.answer)
    with sqlite3.connect(env["WATCHER_JOURNAL"]) as db:
        sessions = {row[0] for row in db.execute("SELECT DISTINCT session FROM events")}
    assert "claude:s-?" in sessions, sessions


def test_a_call_denied_just_before_the_daemon_stops_is_still_journaled(tmp_path: Path) -> None:
    env = hook_env(tmp_path)
    with daemon(env):  # stopped (SIGTERM) as soon as the answer is back, before the watchers are done
        assert _denied(run_hook(env, "PreToolUse", RM_HOME, session="last-call").answer)
    with sqlite3.connect(env["WATCHER_JOURNAL"]) as db:
        kinds = {row[0] for row in db.execute("SELECT kind FROM events WHERE session = 'claude:last-call'")}
    assert "hook" in kinds, kinds
