"""The ``errors`` role: the same exception repeating across cells or tool results."""

from __future__ import annotations

from watcher.core.interjection import Continue, Interject
from watcher.core.observations import CellError, CellExecuted, Observation, ToolResult
from watcher.roles import make_role


def cell(ename: str, evalue: str, *, lineno: int = 2, cell_id: str | None = "c1") -> CellExecuted:
    return CellExecuted(source="x = load()\ny = x['a']", cell_id=cell_id, error=CellError(ename, evalue, lineno))


def judge_each(observations: list[Observation]) -> list[Continue | Interject]:
    role = make_role("errors")
    return [role.evaluate(observations[: i + 1], 1) for i in range(len(observations))]


def test_third_repeat_nudges_with_the_cell_and_line() -> None:
    decisions = judge_each([cell("KeyError", "'a'", lineno=2) for _ in range(3)])
    assert [type(d).__name__ for d in decisions] == ["Continue", "Continue", "Interject"]
    i = decisions[-1].interjection
    assert i is not None and i.action == "nudge" and not i.urgent and i.severity == "warning"
    assert "KeyError has now been raised 3 times" in i.content
    assert [loc.to_dict() for loc in i.locations] == [{"cell_id": "c1", "start_line": 2, "end_line": 2}]


def test_sixth_repeat_is_urgent_and_quiet_between() -> None:
    decisions = judge_each([cell("KeyError", "'a'") for _ in range(6)])
    said = [d.interjection for d in decisions if isinstance(d, Interject)]
    assert [(s.urgent, s.severity) for s in said] == [(False, "warning"), (True, "critical")]


def test_same_shape_with_other_numbers_counts_as_the_same_error() -> None:
    observations: list[Observation] = [
        ToolResult(tool_call_id=str(i), output=f"Traceback ...\nIndexError: list index {i} out of range", is_error=True)
        for i in range(3)
    ]
    assert isinstance(judge_each(observations)[-1], Interject)


def test_different_errors_and_successes_are_not_a_loop() -> None:
    observations: list[Observation] = [
        cell("KeyError", "'a'"),
        cell("TypeError", "unsupported operand"),
        ToolResult(tool_call_id="t", output="ok"),
        cell("ValueError", "bad"),
        ToolResult(tool_call_id="u", output="no exception name here", is_error=True),
    ]
    assert all(isinstance(d, Continue) for d in judge_each(observations))


def test_several_repeats_in_one_evaluation_point_at_the_latest() -> None:
    observations: list[Observation] = [cell("KeyError", "'a'", cell_id=f"c{i}") for i in range(3)]
    decision = make_role("errors").evaluate(observations, 3)
    assert isinstance(decision, Interject)
    assert decision.interjection.locations[0].cell_id == "c2"


def test_cell_without_id_gets_no_location() -> None:
    decision = judge_each([cell("KeyError", "'a'", cell_id=None) for _ in range(3)])[-1]
    assert isinstance(decision, Interject) and decision.interjection.locations == ()
