"""``watcher fleet run`` on a tasks file against the stub, then the read commands, as a user runs them."""

from __future__ import annotations

import json
import os
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
    missing = _watcher("run", str(tmp_path / "nope.toml"), journal=journal)
    assert (
        missing.returncode == 2 and "cannot read the tasks file" in missing.stderr and "Traceback" not in missing.stderr
    )
