"""``watcher replay`` results a person can read and a script can trust: exit status, sessions, wrapping."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

from watcher.testing import Reply, StubOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_notebooks" / "data"
LOOP = EXAMPLES / "notebook_error_loop.jsonl"


def watcher(
    *args: str | Path, env: dict[str, str] | None = None, columns: int = 80
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "watcher", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        env=env,
    )


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens there once it is closed


def test_an_unreachable_evaluator_fails_before_anything_is_recorded(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite3"
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    done = watcher("replay", LOOP, "--evaluator", "openai", "--base-url", url, "--model", "m", "--journal", journal)
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and f"cannot reach openai:m's server at {url}" in done.stderr
    assert not journal.exists()


def test_every_evaluation_failing_is_a_failed_run_with_a_summary() -> None:
    failing = [Reply.error(400, "invalid_request_error", "model 'm' is not loaded")] * 10
    with StubOpenAIServer(*failing) as stub:
        done = watcher("replay", LOOP, "-w", "errors", "--evaluator", "openai", "--base-url", stub.base_url,
                       "--model", "m", "--json")  # fmt: skip
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 1, done.stderr
    assert rows and all(r["error"] for r in rows)  # --json carries each error
    assert f"{len(rows)} of {len(rows)} evaluations failed" in done.stderr


def test_json_rows_name_their_session(tmp_path: Path) -> None:
    records = [
        {"kind": "user_message", "text": "hi", "session": "alpha"},
        {"kind": "user_message", "text": "hello", "session": "beta"},
        {"kind": "done", "session": "alpha"},
        {"kind": "done", "session": "beta"},
    ]
    transcript = tmp_path / "two.jsonl"
    transcript.write_text("".join(json.dumps(r) + "\n" for r in records))
    done = watcher("replay", transcript, "-w", "stuck", "--json")
    assert done.returncode == 0, done.stderr
    assert {json.loads(line)["session"] for line in done.stdout.splitlines()} == {"alpha", "beta"}


def test_the_table_wraps_findings_whole_and_explains_its_marks() -> None:
    done = watcher("replay", ROOT / "src/watcher/testing/data/claude_login_stream.jsonl", "-w", "security")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    table = lines[next(i for i, line in enumerate(lines) if line.lstrip().startswith("#  watcher")) :]
    assert len(table) > 3 and all(len(line) <= 80 for line in table), [line for line in table if len(line) > 80]
    assert "…" not in done.stdout
    text = " ".join(line.strip() for line in lines)
    assert "Use a parameterised query" in text  # the whole finding, wrapped
    assert "! urgent: it interrupts the agent" in done.stdout
    wide = watcher("replay", ROOT / "src/watcher/testing/data/claude_login_stream.jsonl", "-w", "security", "--wide")
    assert any(len(line) > 200 and "parameterised" in line for line in wide.stdout.splitlines())


def _through_a_terminal(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    """Run ``argv`` with stderr on a pseudo-terminal (stdout a pipe): (status, stdout, what the terminal showed)."""
    import pty

    leader, follower = pty.openpty()
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=follower, cwd=cwd, env={**os.environ, "COLUMNS": "100"}
    ) as proc:
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end closed: the process is done with it
                break
            if not chunk:
                break
            shown += chunk
        out = proc.stdout.read().decode() if proc.stdout else ""
        proc.wait(timeout=120)
    os.close(leader)
    return proc.returncode, out, shown.decode(errors="replace")


def test_a_long_replay_shows_progress_on_a_terminal_and_none_in_a_pipe(tmp_path: Path) -> None:
    records = []
    for i in range(1500):
        records.append({"kind": "tool_call", "id": str(i), "name": "Bash", "input": {"command": f"ls {i}"}})
        records.append({"kind": "tool_result", "tool_call_id": str(i), "output": f"file{i}"})
    transcript = tmp_path / "long.jsonl"
    transcript.write_text("".join(json.dumps(r) + "\n" for r in records))
    argv = [sys.executable, "-m", "watcher", "replay", str(transcript), "-w", "stuck"]
    status, out, raw = _through_a_terminal(argv, ROOT)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)  # the terminal's colours and cursor moves
    assert status == 0, shown
    assert "replaying" in shown and "/3000 observations" in shown, shown[-2000:]
    assert "replayed 3000 observations" in out  # the results stay on stdout, clean
    piped = watcher("replay", transcript, "-w", "stuck")
    assert piped.returncode == 0 and "replaying" not in piped.stderr
