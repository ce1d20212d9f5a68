"""Unit tests of how the ``stuck`` role pairs tool calls with their results, and of results never reported."""

from __future__ import annotations

from watcher.core.observations import ToolCall, ToolResult
from watcher.roles._stuck_pending import PendingCalls, unanswered


def _call(ref: str, path: str) -> ToolCall:
    return ToolCall(id=ref, name="Read", input={"file_path": path})


def test_parallel_calls_pair_with_their_results_in_any_order() -> None:
    pending = PendingCalls()
    assert pending.call(_call("a", "x.py")) == []
    assert pending.call(_call("b", "y.py")) == []
    second = pending.result(ToolResult(tool_call_id="b", output="y"))
    first = pending.result(ToolResult(tool_call_id="a", output="x"))
    assert second is not None and second[0].id == "b"
    assert first is not None and first[0].id == "a"


def test_a_result_without_an_id_answers_the_latest_call() -> None:
    pending = PendingCalls()
    pending.call(_call("", "x.py"))
    paired = pending.result(ToolResult(output="x"))
    assert paired is not None and paired[0].input == {"file_path": "x.py"}


def test_the_same_call_while_it_still_waits_means_results_are_not_reported() -> None:
    pending = PendingCalls()
    assert pending.call(_call("a", "x.py")) == []
    assert pending.call(_call("b", "y.py")) == []
    steps = pending.call(_call("c", "x.py"))  # x.py again while the first still waits
    assert [(call.id, unanswered(result)) for call, result, _ in steps] == [("a", True), ("b", True), ("c", True)]
    later = pending.call(_call("d", "z.py"))  # from now on every call is a step at once
    assert [call.id for call, _, _ in later] == ["d"]


def test_a_result_for_a_call_counted_without_one_resumes_pairing() -> None:
    pending = PendingCalls()
    pending.call(_call("a", "x.py"))
    pending.call(_call("b", "x.py"))
    assert pending.result(ToolResult(tool_call_id="b", output="x")) is None  # counted already, not twice
    assert pending.call(_call("c", "x.py")) == []  # results do come: wait for this one's
    paired = pending.result(ToolResult(tool_call_id="c", output="x"))
    assert paired is not None and paired[0].id == "c" and not unanswered(ToolResult(output="x"))


def test_a_harness_error_answers_the_latest_call() -> None:
    pending = PendingCalls()
    pending.call(_call("a", "x.py"))
    pending.failed()  # timed out: it waits no more
    assert pending.call(_call("b", "x.py")) == []  # so the same call again is no sign of lost results
