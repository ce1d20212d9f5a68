"""Unit tests of the ``stuck`` role: configuration, incremental evaluation, escalation, pairing."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from watcher.core.errors import ConfigurationError
from watcher.core.interjection import Interject, Interjection, Location
from watcher.core.observations import (
    AssistantMessage,
    CellError,
    CellExecuted,
    Condensation,
    HarnessError,
    Observation,
    ToolCall,
    ToolResult,
    UserMessage,
)
from watcher.roles import make_role, spec_for_role
from watcher.roles._stuck_actions import wait_kind
from watcher.roles.stuck import StuckConfig, StuckRole


def step(
    name: str, tool_input: dict[str, object], output: str, *, error: bool = False, id: str = ""
) -> list[Observation]:
    return [ToolCall(id=id, name=name, input=tool_input), ToolResult(tool_call_id=id, output=output, is_error=error)]


def bash(command: str, output: str = "", *, error: bool = False, id: str = "") -> list[Observation]:
    return step("Bash", {"command": command}, output, error=error, id=id)


def run(role: StuckRole, observations: Iterable[Observation]) -> list[tuple[int, Interjection]]:
    """Feed one observation per evaluation, as a watcher with every_n=1 would; collect interjections."""
    buffer: list[Observation] = []
    said = []
    for obs in observations:
        buffer.append(obs)
        decision = role.evaluate(buffer[-200:], 1)
        if isinstance(decision, Interject):
            said.append((len(buffer) - 1, decision.interjection))
    return said


def actions(said: Sequence[tuple[int, Interjection]]) -> list[tuple[str, str]]:
    return [(i.action, i.severity) for _, i in said]


def failing(command: str, times: int, error: str = "Error: boom") -> list[Observation]:
    return [obs for _ in range(times) for obs in bash(command, error, error=True)]


# --- the role and its configuration ------------------------------------------------------------


def test_registered_with_defaults() -> None:
    role = make_role("stuck")
    assert isinstance(role, StuckRole)
    assert (role.name, role.description) == ("stuck", "Stuck and loop detector")
    assert role.config == StuckConfig()
    config = role.config
    assert (config.repeat_nudge, config.repeat_pause, config.failing_nudge, config.wait_budget) == (4, 5, 3, 10)
    assert (config.alternation_cycles, config.alternation_pause, config.missing_tool_pause) == (3, 5, 10)
    assert (config.long_cycle_nudge, config.rerun_nudge) == (4, 10)
    spec = spec_for_role("stuck")
    assert spec.triggers.every_n == 3
    assert {"tool_result", "error", "turn_done", "cell_executed"} <= spec.triggers.on


def test_each_watcher_can_tune_its_thresholds() -> None:
    strict = StuckRole(failing_nudge=2, failing_pause=3)
    assert actions(run(strict, failing("make", 3))) == [("nudge", "hint"), ("pause", "critical")]
    from_config = StuckRole(StuckConfig(wait_budget=2))
    said = run(from_config, [o for _ in range(3) for o in bash("sleep 5")])
    assert actions(said) == [("nudge", "hint")]
    assert make_role("stuck").config.wait_budget == 10  # another watcher keeps the default


@pytest.mark.parametrize(
    "options",
    [
        {"failing_pause": 2},
        {"wait_budget": 0},
        {"repeat_pause": 1},
        {"harness_abort": True},
        {"monologue_pause": "3"},
        {"long_cycle_nudge": 6},
        {"reply_run_pause": -1},
        {"rerun_nudge": 1},
    ],
)
def test_bad_thresholds_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError, match="stuck role"):
        StuckRole(**options)  # type: ignore[arg-type]


# --- what is a loop --------------------------------------------------------------------------------


def test_nudge_names_the_action_and_count_and_suggests_another_way() -> None:
    said = run(StuckRole(), failing("pytest -x tests/test_api.py", 3, "E   AssertionError: 404 != 200"))
    ((_, nudge),) = said
    assert (nudge.action, nudge.urgent) == ("nudge", False)
    assert "Bash `pytest -x tests/test_api.py`" in nudge.content
    assert "3 times" in nudge.content
    assert "AssertionError: 404 != 200" in nudge.content
    assert "different approach" in nudge.content


def test_each_level_is_reported_once_and_a_paused_loop_that_goes_on_at_every_occurrence() -> None:
    said = run(StuckRole(), failing("make", 4))
    assert [(index, i.action) for index, i in said] == [(5, "nudge"), (7, "pause")]
    # the pause was lifted without a word and the loop went on: paused again at once, each time
    said = run(StuckRole(), failing("make", 6))
    assert [(index, i.action) for index, i in said] == [(5, "nudge"), (7, "pause"), (9, "pause"), (11, "pause")]


def test_reasoning_and_user_messages_do_not_break_a_repeat() -> None:
    obs: list[Observation] = []
    for n in range(4):
        obs += [AssistantMessage(text=f"thinking {n}"), UserMessage(text="go on"), *bash("cat notes.txt", "same")]
    # not flagged before the person spoke, so the count goes on across their messages
    assert actions(run(StuckRole(), obs)) == [("nudge", "hint")]


def test_a_different_action_breaks_the_repeat() -> None:
    # cat, cat, cat, ls d2, cat, cat, cat, ls d5: never four in a row
    obs = [o for n in range(6) for o in bash("cat a", "x") + (bash(f"ls d{n}", "y") if n % 3 == 2 else [])]
    assert run(StuckRole(), obs) == []


@pytest.mark.parametrize("tool", ["attempt_completion", "finish", "submit", "attemptCompletion", "task-complete"])
def test_a_completion_refused_three_times_is_nudged_sooner_than_other_repeats(tool: str) -> None:
    refused = [o for _ in range(3) for o in step(tool, {"result": "Done."}, "The user has not accepted the result.")]
    assert actions(run(StuckRole(), refused)) == [("nudge", "hint")]
    # a third identical read is a re-check; answers that change are no repeat
    assert run(StuckRole(), [o for _ in range(3) for o in step("read_file", {"path": "a.ts"}, "x")]) == []
    answered = [o for n in range(3) for o in step(tool, {"result": "Done."}, f"Feedback {'abc'[n]}: not yet.")]
    assert run(StuckRole(), answered) == []
    # tunable like the other thresholds, never later than the ordinary repeat
    assert run(StuckRole(None, completion_nudge=4), refused) == []


def test_unanswered_nudges_climb_the_ladder_and_progress_resets_it() -> None:
    role = StuckRole()
    obs = [o for name in "abcd" for o in failing(name, 3, f"Error: {name} is broken")]
    assert [s for _, s in actions(run(role, obs))] == ["hint", "warning", "warning", "critical"]
    fresh = StuckRole()
    obs = failing("a", 3) + bash("git diff", "changed") + failing("b", 3)
    assert actions(run(fresh, obs)) == [("nudge", "hint"), ("nudge", "hint")]


def test_tool_results_pair_with_their_calls_by_id() -> None:
    # parallel calls whose results come back in the other order: Bash fails, Read succeeds, 5 rounds
    obs: list[Observation] = []
    for n in range(5):
        obs += [
            ToolCall(id=f"r{n}", name="Read", input={"file_path": "app.py"}),
            ToolCall(id=f"b{n}", name="Bash", input={"command": "python app.py"}),
            ToolResult(tool_call_id=f"b{n}", output="ImportError: no module named flask", is_error=True),
            ToolResult(tool_call_id=f"r{n}", output="import flask"),
        ]
    (nudged, nudge), (paused, pause) = run(StuckRole(), obs)
    assert (nudged, nudge.action, paused, pause.action) == (11, "nudge", len(obs) - 1, "pause")  # 3rd and 5th cycle
    assert "Bash `python app.py`" in pause.content and "Read `app.py`" in pause.content


def test_results_without_ids_pair_with_the_last_call() -> None:
    obs = [o for _ in range(4) for o in step("Glob", {"pattern": "**/*.toml"}, "pyproject.toml")]
    ((_, pause),) = run(StuckRole(), obs)
    assert "Glob `**/*.toml`" in pause.content


def test_harness_errors_abort_and_a_result_resets_them() -> None:
    said = run(StuckRole(), [HarnessError(text="timeout")] * 2 + bash("ls", "a") + [HarnessError(text="timeout")] * 3)
    assert [(index, i.action, i.urgent) for index, i in said] == [(6, "abort", True)]


def test_monologue_and_condensation_pause() -> None:
    said = run(StuckRole(), [AssistantMessage(text="I  will fix it.")] * 2 + [AssistantMessage(text="I will fix it. ")])
    assert actions(said) == [("pause", "critical")]
    said = run(StuckRole(), [Condensation()] * 12)
    assert [index for index, _ in said] == [9, 10, 11]  # the 10th, and every one after


def test_waiting_that_brings_news_is_not_looping() -> None:
    obs = [o for n in range(30) for o in bash("sleep 30", "") + bash("squeue -u me", f"job R {n}:00")]
    assert run(StuckRole(), obs) == []  # the job's state moves on: every wait counts afresh


def test_waiting_that_brings_nothing_new_is_nudged_at_every_budget() -> None:
    obs = [o for _ in range(20) for o in bash("sleep 30", "") + bash("squeue -u me", "job PD (Resources)")]
    said = run(StuckRole(), obs)
    # the 10th and 20th round: nudged, never paused by itself (the job may simply be slow)
    assert [(index, i.action, i.severity) for index, i in said] == [(37, "nudge", "hint"), (77, "nudge", "warning")]
    assert "Bash `sleep 30`" in said[0][1].content and "10 times" in said[0][1].content
    assert "nothing new" in said[1][1].content


# --- incremental evaluation ------------------------------------------------------------------------


def test_only_new_observations_are_read() -> None:
    role = StuckRole()
    history = failing("make", 5)
    assert not isinstance(role.evaluate(history, 0), Interject)  # nothing new: the loop in the buffer is not re-read
    decision = role.evaluate(history, len(history))
    assert isinstance(decision, Interject)
    assert decision.interjection.action == "pause"  # the most severe finding of a batch wins
    assert not isinstance(role.evaluate(history, 1), Interject)  # already reported at that level


def test_more_new_than_buffered_reads_what_is_there() -> None:
    role = StuckRole()
    decision = role.evaluate(failing("make", 3), 500)
    assert isinstance(decision, Interject)
    assert decision.interjection.action == "nudge"


def test_secrets_in_repeated_commands_are_redacted() -> None:
    key = "sk-ant-api03-" + "A" * 40
    said = run(StuckRole(), failing(f"curl -H 'x-api-key: {key}' https://api.example.com", 3, f"401 for key {key}"))
    assert said
    assert key not in said[0][1].content
    assert "[REDACTED]" in said[0][1].content


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("sleep 60", "sleep"),
        ("sleep 10 && squeue -u me", "sleep"),
        ("git status", "status"),
        ("ps aux | grep train", "status"),
        ("kubectl get pods -n prod", "status"),
        ("tail -f train.log", "status"),
        ("docker compose up -d", None),
        ("sleep 5 && pytest", None),
        ("pytest -x", None),
    ],
)
def test_wait_kinds_of_shell_commands(command: str, kind: str | None) -> None:
    assert wait_kind("Bash", {"command": command}) == kind


@pytest.mark.parametrize(
    ("tool", "kind"),
    [
        ("BashOutput", "sleep"),
        ("TaskOutput", "sleep"),
        ("wait_for_job", "sleep"),
        ("get_status", "status"),
        ("Edit", None),
        ("write_output", None),
    ],
)
def test_wait_kinds_of_tools(tool: str, kind: str | None) -> None:
    assert wait_kind(tool, {"id": "x"}) == kind


_targets = st.lists(st.text(alphabet="abcdefgh/._", min_size=1, max_size=12), min_size=1, max_size=40, unique=True)


@settings(max_examples=60, deadline=None)
@given(
    targets=_targets,
    tools=st.lists(st.sampled_from(["Edit", "Read", "Write", "Bash"]), min_size=40, max_size=40),
    errors=st.lists(st.booleans(), min_size=40, max_size=40),
)
def test_distinct_targets_never_loop(targets: list[str], tools: list[str], errors: list[bool]) -> None:
    # each failure says something new (one tool failing the same way on many targets is a loop of its own)
    obs: list[Observation] = []
    for n, (target, tool, error) in enumerate(zip(targets, tools, errors, strict=False)):
        said = "done" if not error else "failed: " + "".join(chr(97 + int(d)) for d in str(n))
        obs += [AssistantMessage(text=f"Next: {target}"), *step(tool, {"file_path": target}, said, error=error)]
    assert run(StuckRole(), obs) == []


def test_a_sleep_then_a_status_check_makes_the_retry_a_poll() -> None:
    rounds = [
        o
        for _ in range(6)
        for o in bash("curl -sf localhost:8000/health", "refused", error=True) + bash("sleep 2") + bash("docker ps")
    ]
    assert run(StuckRole(), rounds) == []  # waiting for a service, not a failing loop
    no_sleep = [
        o
        for _ in range(3)
        for o in bash("curl -sf localhost:8000/health", "refused", error=True) + bash("git status", "clean")
    ]
    assert actions(run(StuckRole(), no_sleep)) == [("nudge", "hint")]  # a status glance between retries is no wait


def test_cells_match_by_id_or_by_source() -> None:
    error = CellError("KeyError", "'month'", 2)
    edited = [CellExecuted(source=f"x = {n}\ndf['month']", cell_id="c1", error=error) for n in range(3)]
    ((_, by_id),) = run(StuckRole(), edited)
    assert by_id.locations == (Location(cell_id="c1", start_line=2),)
    copies = [CellExecuted(source="df['month']", cell_id=f"c{n}", error=error) for n in range(3)]
    ((_, by_source),) = run(StuckRole(), copies)
    assert by_source.locations == (Location(cell_id="c2", start_line=2),)
    fixed = [*copies[:2], CellExecuted(source="df['month']", cell_id="c9"), copies[2]]
    assert run(StuckRole(), fixed) == []
