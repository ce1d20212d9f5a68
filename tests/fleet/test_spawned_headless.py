"""Gemini CLI and Codex as fleet tasks: the real CLIs against their stubs, next to an agent run."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest
from fleet_helpers import Scripts
from spawned_helpers import FAST, agent_run, cli, make_repo, rows

from watcher.fleet import Fleet, TaskSpec
from watcher.runtime import Journal
from watcher.testing import RecordedRequest, Reply, StubGeminiServer, StubResponsesServer, wait_until

pytestmark = pytest.mark.slow


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def _point_at(agent: str, stub: StubGeminiServer | StubResponsesServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The headless CLI's endpoint and key, from the fleet process's environment."""
    if agent == "gemini":
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", stub.root_url)
        monkeypatch.setenv("GEMINI_API_KEY", "dummy")
    else:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "dummy")


@pytest.mark.parametrize("paused", [False, True], ids=["running", "paused"])
@pytest.mark.parametrize("agent", ["gemini", "codex"])
async def test_a_headless_cli_task_is_supervised_nudged_through_its_resume_and_completes(
    agent: str, paused: bool, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = cli(agent)
    nudged = threading.Event()
    requests: list[RecordedRequest] = []

    def model(request: RecordedRequest) -> Reply:
        requests.append(request)
        if "<system-nudge" in json.dumps(request.body):
            return Reply.text("Understood; finished.")
        nudged.wait(20)  # the first run lasts until the fleet has nudged it: the nudge waits for the run's end
        return Reply.text("Still working on it.")

    stub_type = StubGeminiServer if agent == "gemini" else StubResponsesServer
    run_spec, run_script = agent_run("helper", "Reading the client.")
    journal = Journal(tmp_path / "j.sqlite3")
    spec = TaskSpec("headless", "Summarise README.md.", agent=agent, repo=str(repo))
    with stub_type(*[Reply.dynamic(model)] * 20) as stub, Scripts({"helper": run_script}).server() as runs:
        _point_at(agent, stub, monkeypatch)
        fleet = Fleet([spec, run_spec], config=FAST, journal=journal, base_url=runs.base_url, api_key="k")
        await fleet.start()
        try:
            await wait_until(lambda: bool(requests), 30)
            assert await fleet.actions.nudge("headless", "Wrap up now.", "warning", by="test")
            if paused:  # held at the run's end: the resume run waits for resume
                assert await fleet.actions.pause("headless", "a person looks first", by="person")
                nudged.set()
                host = fleet.host
                assert host is not None
                await wait_until(lambda: host.channels["headless"].held, 30)
                await asyncio.sleep(1.0)
                assert len(requests) == 1, "a paused headless task starts no resume run"
                assert await fleet.actions.resume("headless", by="person")
            nudged.set()
            result = await fleet.runs["headless"].wait()
        finally:
            nudged.set()
            await fleet.close()
    assert binary
    assert result.status == "completed", (result.status, result.detail)
    assert result.spawn is not None and result.spawn.runs == 2  # the nudge continued the same CLI session
    carried = [r for r in requests if '<system-nudge severity=\\"warning\\">Wrap up now.' in json.dumps(r.body)]
    assert carried, [json.dumps(r.body)[:300] for r in requests]
    assert result.steps >= 2
    turns = rows(journal, "task_turn", "headless")
    assert [int(t["step"]) for t in turns][:2] == [1, 2]  # type: ignore[call-overload]  # a boundary per headless run
    fates = [d["outcome"] for d in rows(journal, "delivery", "headless")]
    assert "delivered" in fates
    assert rows(journal, "fleet_task", "headless")[0]["agent"] == agent
    assert fleet.runs["helper"].status == "completed"
    journal.close()


@pytest.mark.parametrize("agent", ["gemini", "codex"])
async def test_a_file_a_headless_cli_task_writes_counts_as_its_progress(
    agent: str, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex writes through its shell (the worktree shows the change), Gemini CLI through its write tool."""
    from watcher.testing.scripted_agents import LoginTask

    cli(agent)
    model = LoginTask(agent, wait_for_supervisor=False)  # write the login, commit it, say so
    stub_type = StubGeminiServer if agent == "gemini" else StubResponsesServer
    journal = Journal(tmp_path / "j.sqlite3")
    spec = TaskSpec("writer", "Add a login() to src/auth/login.js and commit it.", agent=agent, repo=str(repo))
    with stub_type(*model.replies()) as stub:
        _point_at(agent, stub, monkeypatch)
        fleet = Fleet([spec], config=FAST, journal=journal)
        await fleet.start()
        try:
            result = await fleet.runs["writer"].wait()
        finally:
            await fleet.close()
    assert result.status == "completed" and model.steps[:2] == ["write", "commit"], (result.detail, model.steps)
    (turn,) = rows(journal, "task_turn", "writer")[-1:]
    assert int(turn["files_changed"]) >= 1 and int(turn["progress"]) >= 1, turn  # type: ignore[call-overload]
    journal.close()
