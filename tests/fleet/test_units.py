"""The fleet's pure parts from data files: tasks files, learning extraction, relevance, events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from watcher.core.errors import ConfigurationError
from watcher.core.observations import AssistantMessage, ToolResult
from watcher.fleet import TaskSpec, extract, load_tasks, related
from watcher.fleet.events import LearningExtracted, SyncMessageSent, TaskHealthCheck, TaskHostBeat, TaskLost
from watcher.fleet.ladder import Recommendation, escalate
from watcher.runtime.events import EVENT_KINDS, event_from_payload

DATA = Path(__file__).parent / "data"
TASKS = json.loads((DATA / "tasks_files.json").read_text())
LEARNINGS = json.loads((DATA / "learnings.json").read_text())


def read(path: str) -> str:
    """Read a file.

    Args:
        path: the file
    """
    return path


@pytest.mark.parametrize("case", TASKS, ids=[c["name"] for c in TASKS])
def test_tasks_files(case: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "tasks.toml"
    path.write_text(case["toml"])
    if "error" in case:
        with pytest.raises(ConfigurationError, match=".*" + __import__("re").escape(case["error"])):
            load_tasks(path, tools={"Read": read})
        return
    config, specs = load_tasks(path, tools={"Read": read})
    assert [s.name for s in specs] == case["tasks"]
    if "watch_interval_s" in case:
        assert config.watch_interval_s == case["watch_interval_s"] and config.name == "auth"
        assert specs[0].tags == ("api", "auth") and specs[1].tags == ("auth",) and specs[1].max_steps == 7


@pytest.mark.parametrize("case", LEARNINGS, ids=[c["name"] for c in LEARNINGS])
def test_learning_extraction(case: dict[str, Any]) -> None:
    if case["kind"] == "assistant":
        obs: Any = AssistantMessage(text=case["text"])
    else:
        obs = ToolResult(tool_call_id="c1", output=case["text"], is_error=case["kind"] == "error")
    found = extract("a", 7, obs, case.get("tool", ""))
    if "redacted" in case:
        assert found and case["redacted"] not in found[0].text
        return
    assert [[f.urgency, f.text] for f in found] == case["learnings"]
    assert all(f.task == "a" and f.observation == 7 for f in found)


def test_relevance_by_tags_parent_and_directories() -> None:
    a = TaskSpec("a", "p", tags=("api",), directory="src/api")
    assert related(a, TaskSpec("b", "p", tags=("api", "x")))
    assert related(a, TaskSpec("b", "p", parent="a")) and related(
        TaskSpec("c", "p", parent="z"), TaskSpec("d", "p", parent="z")
    )
    assert related(a, TaskSpec("b", "p", directory="src")) and related(a, TaskSpec("b", "p", directory="src/api/v2"))
    assert not related(a, TaskSpec("b", "p", tags=("docs",), directory="docs"))
    assert not related(a, TaskSpec("b", "p", directory="src/apiary"))
    assert not related(a, a)
    assert related(TaskSpec("a", "p"), TaskSpec("b", "p", directory="lib"), ("lib/util",)), (
        "a learning's own directories"
    )


def test_the_ladder() -> None:
    nudge = Recommendation("nudge", "stuck", "try again")
    assert [escalate(nudge, n, 5).severity for n in range(5)] == ["hint", "warning", "warning", "critical", "critical"]
    assert escalate(nudge, 5, 5).action == "pause"
    assert escalate(Recommendation("abort", "harness"), 0, 5).action == "abort"


def test_fleet_events_round_trip_through_their_payloads() -> None:
    events = [
        TaskHealthCheck(session="a", cycle=3, health="stuck", status="running", freshness="fresh", nudges=2),
        LearningExtracted(session="a", learning_id="l1", text="t", source="assistant_text", urgency="fyi", tags=("x",)),
        SyncMessageSent(session="b", interjection_id="s1", learning_id="l1", source_task="a", urgency="fyi", text="t"),
        TaskHostBeat(session="host:r1", fleet="f", run="r1", tasks=2),
        TaskLost(session="a", fleet="f", run="r1", reason="its host went silent"),
    ]
    for event in events:
        back = event_from_payload(
            event.kind, json.loads(json.dumps(event.payload())), session=event.session, watcher="", ts=event.ts
        )
        assert back == event
    assert {k for k, c in EVENT_KINDS.items() if c.__module__ == "watcher.fleet.events"} >= {
        "task_health",
        "watcher_nudge",
        "watcher_pause",
        "watcher_abort",
        "sync_message",
        "learning_extracted",
    }


def test_a_task_for_another_agent_is_refused_with_a_reason(tmp_path: Path) -> None:
    from watcher.fleet import Fleet

    with pytest.raises(ConfigurationError, match=r"unknown agent 'openhands'.*claude, gemini, codex"):
        Fleet([TaskSpec("a", "p", agent="openhands")], journal=tmp_path / "j.sqlite3")


def test_freshness_follows_the_monotonic_clock_not_the_rows_timestamps() -> None:
    from watcher.fleet.snapshot import TaskState

    state = TaskState("a", started=0.0, last_progress=0.0)
    assert state.snapshot(100.0, 120.0, 300.0).freshness == "fresh"
    assert state.snapshot(150.0, 120.0, 300.0).freshness == "stale"
    # the wall clock jumped years ahead: a summary stamped then is still just an iteration seen now
    state.take({"step": 1, "ts": 4_000_000_000.0})
    snap = state.snapshot(160.0, 120.0, 300.0)
    assert snap.freshness == "fresh" and snap.idle_s == 0.0 and snap.iteration == 1
    assert state.snapshot(500.0, 120.0, 300.0).freshness == "very_stale"


def test_a_sync_to_several_tasks_is_one_row_read_back_once_per_recipient(tmp_path: Path) -> None:
    from dataclasses import replace

    from watcher.fleet.actions import _batched
    from watcher.fleet.events import FleetTask
    from watcher.fleet.query import read_fleet
    from watcher.runtime.journal import Journal

    def sent(to: str, status: str = "sent") -> SyncMessageSent:
        return SyncMessageSent(
            session=to,
            interjection_id=f"sync-L1-{to}",
            learning_id="L1",
            source_task="a",
            urgency="fyi",
            text="",
            status=status,
        )

    rows = _batched([sent("b"), sent("c"), sent("d", "queued")])
    assert [(r.session, r.recipients, r.status) for r in rows] == [("b", ("b", "c"), "sent"), ("d", (), "queued")]
    journal = Journal(tmp_path / "j.sqlite3")
    for task in "abcd":
        journal.append(FleetTask(session=task, fleet="f"))
    for row in rows:
        journal.append(replace(row, fleet="f"))
    journal.flush()
    assert len(journal.read(kinds={"sync_message"})) == 2
    view = read_fleet(journal)
    journal.close()
    assert [(s.session, s.interjection_id, s.status) for s in view.syncs] == [
        ("b", "sync-L1-b", "sent"),
        ("c", "sync-L1-c", "sent"),
        ("d", "sync-L1-d", "queued"),
    ]
    assert view.stats()["syncs_relayed"] == 2 and view.stats()["syncs_queued"] == 1


async def test_the_follower_reads_only_the_kinds_asked_for_and_moves_past_the_rest(tmp_path: Path) -> None:
    from watcher.fleet.events import TaskTurn
    from watcher.fleet.follow import Follower
    from watcher.runtime.events import ObservationEvent
    from watcher.runtime.journal import Journal

    journal = Journal(tmp_path / "j.sqlite3")
    follower = Follower(journal, batch=2)
    for step in range(3):
        journal.append(TaskHealthCheck(session="a", cycle=step, health="healthy", status="running", freshness="fresh"))
        journal.append(TaskTurn(session="a", step=step, input_tokens=1, output_tokens=1))
        journal.append(ObservationEvent(session="b", observation=AssistantMessage(text="hi"), index=step))
    got = await follower.read({"a"}, kinds={"task_turn", "observation"})
    assert [type(e).__name__ for e in got] == ["TaskTurn"] * 3  # b's observations: another session
    journal.append(TaskTurn(session="a", step=3, input_tokens=1, output_tokens=1))
    assert [e.step for e in await follower.read({"a"}, kinds={"task_turn"}) if isinstance(e, TaskTurn)] == [3]
    journal.close()


async def test_an_llm_named_in_the_config_is_built_used_and_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from watcher.evaluators.anthropic import AnthropicEvaluator
    from watcher.fleet import Fleet, FleetConfig
    from watcher.fleet.judges import TurnReader

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = FleetConfig(
        evaluator="anthropic:claude-haiku-5", extractor="openai:gpt-5-mini", llm_base_url="http://127.0.0.1:9"
    )
    fleet = Fleet([TaskSpec("a", "p")], config=config, journal=tmp_path / "j.sqlite3", api_key="k")
    judge = fleet.watcher.judge
    assert isinstance(judge.evaluator, AnthropicEvaluator) and not judge.rules and judge.name.startswith("anthropic")
    assert isinstance(fleet._extractors[1], TurnReader)
    await fleet.close()
    assert not fleet._built
    with pytest.raises(ConfigurationError, match="anthropic:<model>"):
        Fleet([TaskSpec("a", "p")], config=FleetConfig(evaluator="gpt"), journal=tmp_path / "k.sqlite3")


def test_a_task_the_loops_found_nothing_wrong_with_reads_healthy_without_a_check_row(tmp_path: Path) -> None:
    from watcher.fleet.events import FleetTask, SupervisionReport, TaskTurn
    from watcher.fleet.query import read_fleet
    from watcher.runtime.journal import Journal

    with Journal(tmp_path / "j.sqlite3") as journal:
        for task in ("quiet", "stuck"):
            journal.append(FleetTask(session=task, fleet="f"))
            journal.append(TaskTurn(session=task, fleet="f", step=2, input_tokens=10, output_tokens=5))
        journal.append(
            TaskHealthCheck(session="stuck", fleet="f", cycle=3, health="stuck", status="running", freshness="fresh")
        )
        journal.flush()
        unsupervised = {r.task: r.health for r in read_fleet(journal).tasks.values()}
        journal.append(SupervisionReport(session="fleet:f", fleet="f", watcher_alive=True, watcher_cycles=3))
        journal.flush()
        supervised = {r.task: r.health for r in read_fleet(journal).tasks.values()}
    assert unsupervised == {"quiet": "unknown", "stuck": "stuck"}, "no loops ran: nobody judged the quiet task"
    assert supervised == {"quiet": "healthy", "stuck": "stuck"}


def test_a_tasks_file_that_is_not_utf8_is_said_as_such(tmp_path: Path) -> None:
    path = tmp_path / "tasks.toml"
    path.write_bytes(b'[[tasks]]\nname = "a"\nprompt = "caf\xe9"\n')  # Latin-1, as an old editor saves it
    with pytest.raises(ConfigurationError, match=r"tasks\.toml is not UTF-8 text .*; save it as UTF-8"):
        load_tasks(path)
