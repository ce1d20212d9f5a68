"""``watcher fleet run`` on a tasks file against the stub, then the read commands, as a user runs them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from watcher.testing import RecordedRequest, Reply, StubAnthropicServer

TASKS = """[fleet]
watch_interval_s = 0.05
sync_interval_s = 0.05
min_task_age_s = 0

[[tasks]]
name = "client"
prompt = "[client] write the client"
tags = ["api"]

[[tasks]]
name = "server"
prompt = "[server] write the server"
tags = ["api"]
"""


def _reply(request: RecordedRequest) -> Reply:
    body = request.body or {}
    first = body["messages"][0]["content"]
    prompt = first if isinstance(first, str) else first[0]["text"]
    turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if prompt.startswith("[client]"):
        return Reply.text("Note: found that the API needs the X-Token header.") if turns == 0 else Reply.text("ok")
    heard = any("<sync-message" in str(m["content"]) for m in body["messages"])
    # the server's first answer is slow, so the relayed learning waits in its inbox and rides the next request
    return Reply.text("Done, with X-Token.") if heard or turns else Reply.text("Working.", delay_s=0.8)


def _watcher(*argv: str, journal: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "watcher", "fleet", *argv, "--journal", str(journal)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
        check=False,
    )


@pytest.mark.slow
def test_fleet_run_then_status_syncs_and_stats(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.toml"
    tasks.write_text(TASKS)
    journal = tmp_path / "j.sqlite3"
    with StubAnthropicServer(*[Reply.dynamic(_reply)] * 200) as stub:
        done = _watcher(
            "run", str(tasks), "--base-url", stub.base_url, "--json", journal=journal, ANTHROPIC_API_KEY="k"
        )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["tasks"] == {"client": {"status": "completed", "steps": 1}, "server": out["tasks"]["server"]}
    assert out["tasks"]["server"] == {"status": "completed", "steps": 2}, "the sync gave the server a second turn"
    syncs = _watcher("syncs", journal=journal)
    assert syncs.returncode == 0 and "client → server" in syncs.stdout and "X-Token" in syncs.stdout
    stats = json.loads(_watcher("stats", "--json", journal=journal).stdout)
    assert stats["learnings"] >= 1 and stats["syncs_relayed"] >= 1
    status = _watcher("status", journal=journal)
    assert status.returncode == 0 and "server" in status.stdout
    late = _watcher("nudge", "client", "Use the v2 endpoint", journal=journal)  # it completed: nothing will apply it
    assert late.returncode == 2 and "task 'client' of fleet" in late.stderr and "has ended (completed)" in late.stderr
    missing = _watcher("run", str(tmp_path / "nope.toml"), journal=journal)
    assert (
        missing.returncode == 2 and "cannot read the tasks file" in missing.stderr and "Traceback" not in missing.stderr
    )


def _announce(journal: Path) -> None:
    """Two fleets in one journal, as two runs leave them: tasks, their summaries, a nudge."""
    from watcher.fleet.events import FleetTask, TaskTurn, WatcherNudge
    from watcher.runtime.journal import Journal

    with Journal(journal) as j:
        j.append(FleetTask(session="old-a", fleet="first", model="claude-sonnet-5-5"))
        j.append(TaskTurn(session="old-a", fleet="first", step=3, input_tokens=1_000_000, output_tokens=100_000))
        j.append(FleetTask(session="new-a", fleet="second", model="claude-haiku-5"))
        j.append(FleetTask(session="new-b", fleet="second", model="local-model"))
        j.append(TaskTurn(session="new-a", fleet="second", step=2, input_tokens=2_000_000, output_tokens=0))
        j.append(TaskTurn(session="new-b", fleet="second", step=1, input_tokens=500, output_tokens=50))
        j.append(WatcherNudge(session="new-a", fleet="second", interjection_id="nudge-1", severity="hint", message="m"))


def test_status_reads_one_fleet_of_several_with_its_cost(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite3"
    _announce(journal)
    latest = {r["task"]: r for r in json.loads(_watcher("status", "--json", journal=journal).stdout)}
    assert set(latest) == {"new-a", "new-b"}, "the latest fleet by default, not the earlier one"
    assert latest["new-a"]["cost_usd"] == pytest.approx(2.0 * 0.10)  # haiku-5 input: $0.10 per million
    assert latest["new-b"]["cost_usd"] == 0.0  # a model without a list price costs nothing here
    assert latest["new-a"]["nudges"] == 1 and latest["new-a"]["ladder"] == 0 and latest["new-a"]["iteration"] == 2
    first = json.loads(_watcher("status", "--json", "--fleet", "first", journal=journal).stdout)
    assert [r["task"] for r in first] == ["old-a"] and first[0]["cost_usd"] == pytest.approx(2.0 + 1.0)
    stats = json.loads(_watcher("stats", "--json", "--fleet", "second", journal=journal).stdout)
    assert stats["tasks"] == 2 and stats["nudges_sent"] == 1 and stats["cost_usd"] == pytest.approx(0.2, abs=1e-3)
    table = _watcher("status", journal=journal).stdout
    assert "cost $" in table and "0.2000" in table


def test_a_command_for_a_task_no_fleet_runs_is_refused_not_recorded(tmp_path: Path) -> None:
    from watcher.runtime.journal import Journal

    journal = tmp_path / "j.sqlite3"
    Journal(journal).close()
    empty = _watcher("pause", "new-a", journal=journal)
    assert empty.returncode == 2 and "no fleet in this journal: start one with watcher fleet run" in empty.stderr
    _announce(journal)
    typo = _watcher("nudge", "new-c", "look at the tests", journal=journal)
    assert typo.returncode == 2 and "fleet 'second' has no task 'new-c'; its tasks: new-a, new-b" in typo.stderr
    assert "Traceback" not in typo.stderr
    with Journal(journal) as j:
        assert j.commands(status=None) == []  # nothing was left for a fleet to refuse later


def test_fleet_run_without_a_key_says_what_to_set(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.toml"
    tasks.write_text(TASKS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    done = subprocess.run(
        [sys.executable, "-m", "watcher", "fleet", "run", str(tasks), "--journal", str(tmp_path / "j.sqlite3")],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "set ANTHROPIC_API_KEY, or pass --base-url" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_status_watch_keeps_the_table_live_until_ctrl_c(tmp_path: Path) -> None:
    import signal
    import time

    journal = tmp_path / "j.sqlite3"
    _announce(journal)
    with subprocess.Popen(
        [sys.executable, "-m", "watcher", "fleet", "status", "--watch", "0.2", "--journal", str(journal)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "120"},
    ) as live:
        time.sleep(2.0)
        from watcher.fleet.events import TaskTurn
        from watcher.runtime.journal import Journal

        with Journal(journal) as j:  # the fleet moves on while the table is up
            j.append(TaskTurn(session="new-b", fleet="second", step=7, input_tokens=600, output_tokens=60))
        time.sleep(1.0)
        live.send_signal(signal.SIGINT)
        out, err = live.communicate(timeout=20)
    assert live.returncode == 130, err
    assert "fleet second · 2 task(s)" in out and "new-a" in out
    assert out.count("fleet second · 2 task(s)") >= 3, "piped, a table is printed at every interval"
    new_b = [line.split() for line in out.splitlines() if line.startswith("new-b")]
    assert new_b and new_b[-1][3] == "7", "the table shows the task's newest iteration"
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 1


@pytest.mark.slow
def test_fleet_run_with_a_base_url_needs_no_key_and_a_dead_one_is_said_first(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.toml"
    tasks.write_text(TASKS)
    journal = tmp_path / "j.sqlite3"
    keyless = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    with StubAnthropicServer(*[Reply.dynamic(_reply)] * 200) as stub:
        done = subprocess.run(
            [sys.executable, "-m", "watcher", "fleet", "run", str(tasks), "--base-url", stub.base_url, "--json",
             "--journal", str(journal)],
            capture_output=True, text=True, timeout=60, env=keyless, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert {t["status"] for t in json.loads(done.stdout)["tasks"].values()} == {"completed"}
        url = stub.base_url
    dead = tmp_path / "dead.sqlite3"
    refused = subprocess.run(
        [sys.executable, "-m", "watcher", "fleet", "run", str(tasks), "--base-url", url, "--journal", str(dead)],
        capture_output=True, text=True, timeout=60, env=keyless, check=False,
    )  # fmt: skip
    assert refused.returncode == 1 and f"cannot reach the Messages API server at {url}" in refused.stderr
    assert "Traceback" not in refused.stderr and not dead.exists()


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b'[[tasks]]\nname = "a"\nprompt = "caf\xe9"\n', "is not UTF-8 text"),
        (
            b'[fleet]\nname = 1\n[[tasks]]\nname = "a"\nprompt = "p"\n',
            "[fleet]: name must be a non-blank string, got 1",
        ),
        (
            b'[fleet]\nwatch_interval_s = "fast"\n[[tasks]]\nname = "a"\nprompt = "p"\n',
            "[fleet]: watch_interval_s must be a finite number of seconds above 0, got 'fast'",
        ),
        (
            b'[[tasks]]\nname = "a"\nprompt = "p"\nmax_steps = "many"\n',
            "tasks[0]: max_steps must be a whole number of at least 1, got 'many'",
        ),
    ],
    ids=["not utf-8", "a numeric name", "a word for seconds", "a word for steps"],
)
def test_a_bad_tasks_file_is_one_line_before_anything_runs(tmp_path: Path, content: bytes, said: str) -> None:
    tasks = tmp_path / "tasks.toml"
    tasks.write_bytes(content)
    journal = tmp_path / "j.sqlite3"
    for argv in (("run", str(tasks)), ("supervise", "--tasks", str(tasks))):
        done = _watcher(*argv, journal=journal, ANTHROPIC_API_KEY="k")
        assert done.returncode == 2 and done.stdout == "", done.stderr
        assert done.stderr.startswith("watcher: error: ") and str(tasks) in done.stderr and said in done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert not journal.exists()  # nothing started: no journal, no task, no loop crashing every cycle


def test_limits_and_fleet_names_are_checked(tmp_path: Path) -> None:
    from watcher.fleet.events import SyncMessageSent, TaskHealthCheck
    from watcher.runtime.journal import Journal

    journal = tmp_path / "j.sqlite3"
    _announce(journal)
    with Journal(journal) as j:
        for cycle in (1, 2, 3):
            j.append(
                TaskHealthCheck(session="new-a", fleet="second", cycle=cycle, health="stuck", status="running",
                                freshness="fresh", recommendation="nudge", diagnosis=f"stuck {cycle}")
            )  # fmt: skip
            j.append(
                SyncMessageSent(session="new-b", fleet="second", interjection_id=f"s{cycle}", learning_id=f"l{cycle}",
                                source_task="new-a", urgency="info", text=f"learning {cycle}")
            )  # fmt: skip
    latest = _watcher("diagnoses", "--limit", "1", journal=journal)
    assert latest.returncode == 0 and latest.stdout.strip() == "cycle 3 new-a: nudge — stuck 3"
    assert _watcher("syncs", "--limit", "2", journal=journal).stdout.count("learning") == 2
    for command in ("diagnoses", "syncs"):
        for limit in ("0", "-5", "many"):
            done = _watcher(command, "--limit", limit, journal=journal)
            assert done.returncode == 2 and f"argument --limit: {limit!r} is not a whole number of at least 1" in (
                done.stderr
            )
    for argv in (("status",), ("stats",), ("diagnoses",), ("syncs",), ("health", "new-a"), ("pause", "new-a")):
        done = _watcher(*argv, "--fleet", "nosuch", journal=journal)
        assert done.returncode == 2 and done.stdout == "", (argv, done.stdout)
        assert done.stderr.startswith("watcher: error: no fleet named 'nosuch' in this journal"), done.stderr
    listed = _watcher("stats", "--fleet", "nosuch", journal=journal).stderr
    assert "its fleets: first, second" in listed
    assert _watcher("stats", "--fleet", "first", "--json", journal=journal).returncode == 0
    done = _watcher("supervise", "--watch-interval", "-1", journal=journal)
    assert done.returncode == 2 and "argument --watch-interval: '-1' is not a number of seconds above 0" in done.stderr
    done = _watcher("supervise", "--fleet", "nosuch", "--for", "0.5", journal=journal)  # before its tasks, or a typo
    assert "fleet 'nosuch' is not in this journal yet (its fleets: first, second)" in done.stderr, done.stderr


def test_a_failed_task_says_why_in_text_too(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.toml"
    tasks.write_text('[fleet]\nwatch_interval_s = 0.05\n\n[[tasks]]\nname = "a"\nprompt = "p"\n')
    with StubAnthropicServer(*[Reply.error(400, "invalid_request_error", "the prompt is refused")] * 5) as stub:
        done = _watcher(
            "run", str(tasks), "--base-url", stub.base_url, journal=tmp_path / "j.sqlite3", ANTHROPIC_API_KEY="k"
        )
    assert done.returncode == 1, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("a: failed (BadRequestError: ") and "the prompt is refused" in first


def test_a_supervisor_stopped_by_sigterm_hands_its_lease_over_at_once(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite3"
    _announce(journal)

    def supervise() -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "watcher", "fleet", "supervise", "--fleet", "first", "--for", "60",
             "--host-lost", "30", "--journal", str(journal)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip

    first = supervise()
    second: subprocess.Popen[str] | None = None
    try:
        assert first.stdout is not None and first.stdout.readline().startswith("leading the supervision")
        first.send_signal(signal.SIGTERM)  # `timeout`, `kill`, a service manager
        _, err = first.communicate(timeout=30)
        assert first.returncode == 143 and "watcher: terminated" in err and "Traceback" not in err, err
        second = supervise()  # the lease (30 s here) was given back: the next supervisor leads at once
        assert second.stdout is not None and second.stdout.readline().startswith("leading the supervision")
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
            if proc is not None:
                proc.communicate(timeout=30)
