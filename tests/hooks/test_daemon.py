"""The thin hook command and the daemon as real processes: the fast path, and failing open."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hook_procs import (
    CLIENT,
    RM_HOME,
    ask_daemon,
    daemon,
    daemon_pid,
    hook_env,
    run_hook,
    stop_started_daemon,
    wait_for,
)

from watcher.testing import Reply, StubAnthropicServer

pytestmark = pytest.mark.slow

DENY = "permissionDecision"


def test_the_first_call_is_judged_in_process_and_starts_the_daemon_which_answers_the_next(tmp_path: Path) -> None:
    env = hook_env(tmp_path)
    try:
        first = run_hook(env, "PreToolUse", RM_HOME)
        assert first.returncode == 0 and first.answer is not None
        assert first.answer["hookSpecificOutput"][DENY] == "deny"
        wait_for(lambda: Path(env["WATCHER_SOCKET"]).exists())
        pid = daemon_pid(env)
        second = run_hook(env, "PreToolUse", {**RM_HOME, "tool_use_id": "toolu_2"})
        assert second.answer is not None and second.answer["hookSpecificOutput"][DENY] == "deny"

        def status() -> str:
            argv = [sys.executable, "-m", "watcher", "hooks", "status"]
            return subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout

        # a denial is answered before the watchers judge and journal it: the status shows it soon after
        with contextlib.suppress(TimeoutError):
            wait_for(lambda: "deny 2" in status(), timeout=30)
        shown = status()
        assert f"daemon: pid {pid}" in shown and "deny 2" in shown, shown
    finally:
        stop_started_daemon(env)


def test_an_evaluator_hanging_past_the_budget_fails_open_in_time_with_a_daemon(tmp_path: Path) -> None:
    with StubAnthropicServer(default_reply=Reply.stall(20)) as stub:
        env = hook_env(tmp_path, ANTHROPIC_BASE_URL=stub.root_url, ANTHROPIC_API_KEY="sk-ant-test")
        with daemon(env) as proc:
            run = run_hook(
                env,
                "PostToolUse",
                {"tool_name": "Bash", "tool_use_id": "t", "tool_response": "ok"},
                "--evaluator",
                "anthropic",
                "--watcher",
                "security",
                "--budget",
                "1",
            )
            assert run.returncode == 0 and run.stdout == ""
            # Not a short window (a busy machine slows the start of every process): the hook did not wait
            # for the evaluation, which hangs for 20 s, past the CLI's own 10 s limit on a hook ...
            assert run.seconds < 10, run.seconds
            stub.wait_for_requests(1, timeout=60)  # ... which did start: it was the one that hung
            # ... and the daemon gave up on it at the hook's budget, by its own account:
            status = ask_daemon({"op": "status"}, 10.0, env)
            assert any("past the 1s budget; answered nothing" in f for f in status["failures"]), status
            assert proc.poll() is None  # the daemon lives on; the verdict would ride on the next answer
            status = subprocess.run(
                [sys.executable, "-m", "watcher", "hooks", "status"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            assert "daemon failure:" in status and "past the 1s budget" in status, status  # not only in its log


def test_an_evaluator_hanging_past_the_budget_fails_open_in_time_without_a_daemon(tmp_path: Path) -> None:
    with StubAnthropicServer(default_reply=Reply.stall(20)) as stub:
        env = hook_env(
            tmp_path, ANTHROPIC_BASE_URL=stub.root_url, ANTHROPIC_API_KEY="sk-ant-test", WATCHER_HOOK_DAEMON="0"
        )
        run = run_hook(
            env,
            "PostToolUse",
            {"tool_name": "Bash", "tool_use_id": "t", "tool_response": "ok"},
            "--evaluator",
            "anthropic",
            "--watcher",
            "security",
            "--budget",
            "1",
        )
        assert run.returncode == 0 and run.stdout == ""
        assert run.seconds < 3, run.seconds
        assert "failing open" in (Path(env["WATCHER_SOCKET"]).parent / "hooks.log").read_text()


def test_the_daemon_killed_mid_call_fails_open_in_time(tmp_path: Path) -> None:
    with StubAnthropicServer(default_reply=Reply.stall(20)) as stub:
        env = hook_env(tmp_path, ANTHROPIC_BASE_URL=stub.root_url, ANTHROPIC_API_KEY="sk-ant-test")
        options = ("--evaluator", "anthropic", "--watcher", "security", "--budget", "2")
        with daemon(env) as proc:
            warm = run_hook(env, "PostToolUse", {"tool_use_id": "t0", "tool_response": "x"}, *options, session="warm")
            assert warm.returncode == 0  # the daemon has loaded the SDK; its evaluation still hangs
            stub.wait_for_requests(1, timeout=15)
            started = time.monotonic()
            call = subprocess.Popen(
                [*CLIENT, "PostToolUse", *options],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                text=True,
            )
            assert call.stdin is not None and call.stdout is not None
            call.stdin.write(
                '{"session_id": "s-9", "hook_event_name": "PostToolUse", "tool_use_id": "t", "tool_response": "x"}'
            )
            call.stdin.close()
            stub.wait_for_requests(2, timeout=15)  # the daemon is mid-call, waiting on the evaluator
            os.kill(proc.pid, signal.SIGKILL)
            out = call.stdout.read()
            call.wait(timeout=10)
            call.stdout.close()
            assert call.returncode == 0
            assert out == ""  # no verdict in time from the daemon or the in-process retry: nothing said
            assert time.monotonic() - started < 4
            stop_started_daemon(env, not_pid=proc.pid)  # the hook started a new daemon for the next call


@pytest.mark.parametrize("with_daemon", [False, True], ids=["in-process", "daemon"])
def test_a_locked_journal_fails_open_in_time_but_the_guard_still_denies(tmp_path: Path, with_daemon: bool) -> None:
    env = hook_env(tmp_path, WATCHER_HOOK_DAEMON="1" if with_daemon else "0")
    journal = Path(env["WATCHER_JOURNAL"])
    run_hook({**env, "WATCHER_HOOK_DAEMON": "0"}, "SessionStart", {"source": "startup"})  # the journal exists
    holder = sqlite3.connect(journal, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO commands(ts, session, kind) VALUES (0, 'x', 'inject')")
    try:
        with daemon(env) if with_daemon else contextlib.nullcontext():
            run = run_hook(env, "PreToolUse", RM_HOME, "--budget", "1")
            assert run.returncode == 0
            assert run.seconds < 3, run.seconds
            assert run.answer is not None and run.answer["hookSpecificOutput"][DENY] == "deny"  # rules need no journal
            plain = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_ls"}
            run = run_hook(env, "PreToolUse", plain, "--budget", "1")
            assert (run.returncode, run.stdout) == (0, "")
            assert run.seconds < 3, run.seconds
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_bad_input_fails_open_and_is_logged(tmp_path: Path) -> None:
    env = hook_env(tmp_path, WATCHER_HOOK_DAEMON="0")
    done = subprocess.run(
        [sys.executable, "-m", "watcher", "hook", "PreToolUse"],
        input="{not json",
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "")
    assert "PreToolUse" in (Path(env["WATCHER_SOCKET"]).parent / "hooks.log").read_text()


def test_a_verdict_later_than_the_budget_rides_on_the_next_answer(tmp_path: Path) -> None:
    late = Reply.text(
        "[INTERJECT]\nurgent: false\nseverity: warning\naction: guidance\n"
        "content: The deploy script you just ran pushes to production.\n[/INTERJECT]",
        delay_s=1.5,
    )
    with StubAnthropicServer(default_reply=late) as stub:
        env = hook_env(tmp_path, ANTHROPIC_BASE_URL=stub.root_url, ANTHROPIC_API_KEY="sk-ant-test")
        options = ("--evaluator", "anthropic", "--watcher", "security", "--budget", "1")
        result = {"tool_name": "Bash", "tool_use_id": "t1", "tool_response": {"stdout": "deployed", "stderr": ""}}
        with daemon(env):
            first = run_hook(env, "PostToolUse", result, *options)
            assert (first.returncode, first.stdout) == (0, "")  # past the budget: nothing said, nothing blocked
            stub.wait_for_requests(1, timeout=15)
            time.sleep(1.0)  # the evaluation finishes in the daemon meanwhile
            second = run_hook(env, "UserPromptSubmit", {"prompt": "next"}, *options)
    context = second.answer["hookSpecificOutput"]["additionalContext"] if second.answer else ""
    finding, told = context.split("\n\n")
    assert finding == "[watcher security] The deploy script you just ran pushes to production."
    assert told.startswith("[watcher] the watchers' evaluation ran past the hook's 1s budget")  # the session knows


def test_the_hook_imports_nothing_but_its_client_on_its_way_to_a_warm_daemon(tmp_path: Path) -> None:
    env = hook_env(tmp_path)
    with daemon(env):
        run_hook(env, "PreToolUse", RM_HOME)  # warm
        done = subprocess.run(
            [sys.executable, "-X", "importtime", *CLIENT, "PreToolUse"],  # the `watcher-hook` script
            input='{"session_id": "s-1", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf ~/"}}',
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=30,
        )
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert '"permissionDecision": "deny"' in done.stdout
    thin = {"watcher", "watcher._version", "watcher._console", "watcher.hooks", "watcher.hooks.client"}
    heavy = {
        m
        for m in imported - thin
        if m.split(".")[0]
        in ("watcher", "re", "enum", "json", "socket", "typing", "pathlib", "argparse", "polars", "bandit")
    }
    assert not heavy, f"the fast path imported {sorted(heavy)}"
    assert "watcher.hooks.client" in imported  # the script went straight to the thin client


def test_a_socket_folder_others_can_write_is_not_used(tmp_path: Path) -> None:
    env = hook_env(tmp_path, WATCHER_SERVE_IDLE="5")
    folder = Path(env["WATCHER_SOCKET"]).parent
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)  # anyone could plant a socket here and answer the hooks
    run = run_hook(env, "PreToolUse", RM_HOME)
    assert run.answer is not None and run.answer["hookSpecificOutput"][DENY] == "deny"  # judged in-process
    assert "not private" in (folder / "hooks.log").read_text()
    assert not Path(env["WATCHER_SOCKET"]).exists()  # and no daemon was started there
    served = subprocess.run(
        [sys.executable, "-m", "watcher", "serve"], env=env, capture_output=True, text=True, check=False
    )
    assert served.returncode == 2 and "not private" in served.stderr


def test_hooks_stop_stops_the_daemon_and_says_so(tmp_path: Path) -> None:
    env = hook_env(tmp_path)
    stop = [sys.executable, "-m", "watcher", "hooks", "stop"]
    with daemon(env) as proc:
        done = subprocess.run(stop, env=env, capture_output=True, text=True, check=True, timeout=60)
        assert done.stdout.strip() == f"stopped the hook daemon (pid {proc.pid})"
        assert proc.wait(timeout=30) == 0 and not Path(env["WATCHER_SOCKET"]).exists()
    again = subprocess.run(stop, env=env, capture_output=True, text=True, check=True, timeout=60)
    assert again.stdout.startswith("no hook daemon is running")


def test_a_bad_variable_keeps_the_hook_answering_and_the_log_says_why_no_daemon_runs(tmp_path: Path) -> None:
    env = hook_env(tmp_path, ANTHROPIC_BASE_URL="localhost:8080")
    log = Path(env["WATCHER_SOCKET"]).parent / "hooks.log"
    try:
        denied = run_hook(env, "PreToolUse", RM_HOME)  # the guard answers, with or without a daemon
        assert denied.returncode == 0 and denied.answer is not None
        assert denied.answer["hookSpecificOutput"]["permissionDecision"] == "deny"
        wait_for(
            lambda: log.exists() and "ANTHROPIC_BASE_URL='localhost:8080' is not an http(s) URL" in log.read_text()
        )
        assert "Traceback" not in log.read_text()
        assert daemon_pid(env) is None  # the daemon refused to start: a misconfiguration is not served
        assert run_hook(env, "UserPromptSubmit", {"prompt": "go on"}).returncode == 0  # judged in-process, failing open
    finally:
        stop_started_daemon(env)


def test_one_sessions_long_judgment_does_not_hold_another_sessions_answer(tmp_path: Path) -> None:
    env = hook_env(tmp_path)
    long_write = {  # 40,000 statements: over a second of the security review, on a worker thread
        "tool_name": "Write",
        "tool_input": {"file_path": str(tmp_path / "gen.py"), "content": "x = 1\n" * 40_000},
        "tool_use_id": "toolu_big",
    }
    ls = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_ls"}
    finished: list[str] = []
    with daemon(env):
        run_hook(env, "PreToolUse", ls, session="other")  # both sessions' watchers are set up and warm
        run_hook(env, "PreToolUse", ls, session="writer")

        def write() -> None:
            run_hook(env, "PreToolUse", long_write, "--budget", "10", session="writer")
            finished.append("writer")

        writer = threading.Thread(target=write)
        writer.start()
        time.sleep(0.3)  # the long judgment is under way
        other = run_hook(env, "PreToolUse", {**ls, "tool_use_id": "toolu_ls2"}, "--budget", "10", session="other")
        finished.append("other")
        writer.join(timeout=60)
    assert other.returncode == 0 and other.stdout == ""
    assert finished == ["other", "writer"], f"the other session's call waited ({other.seconds:.2f}s)"


def test_a_journal_that_would_not_open_is_not_waited_for_again_on_every_call(tmp_path: Path) -> None:
    from watcher.hooks._daemon import Daemon
    from watcher.runtime.journal import Journal

    path = tmp_path / "journal.sqlite3"
    Journal(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO commands(ts, session, kind) VALUES (0, 'x', 'inject')")
    waits = []

    async def open_three_times() -> None:
        served = Daemon(tmp_path / "serve.sock")
        for _ in range(3):
            started = time.monotonic()
            with pytest.raises(Exception, match="locked"):
                await served._desk(path)
            waits.append(time.monotonic() - started)

    try:
        asyncio.run(open_three_times())
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert waits[0] > 1.0  # the first call waits out the lock (then the hook's budget answers)
    assert max(waits[1:]) < 0.5, waits  # the next ones within seconds do not wait for it again
