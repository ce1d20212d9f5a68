"""The security role on one vector per class of problem, benign counterparts included.

Each vector in ``vectors/security/classes.json`` is a piece of code written by a tool call
(``write``, under ``path``), run as a shell command (``bash``) or run as a notebook cell without
a cell id (``cell_no_id``), and the lines the role must locate (none: it must stay quiet).
Optional ``max_severity``, ``urgent`` and ``contains`` pin the interjection's severity, urgency
and a phrase of its text. The vectors are written for these tests, not taken from any corpus.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from watcher.core.interjection import Continue, Interject
from watcher.core.observations import CellExecuted, Observation, ToolCall, ToolResult
from watcher.roles.security import SecurityRole

VECTORS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "vectors" / "security" / "classes.json").read_text(encoding="utf-8")
)


def _observations(vector: dict[str, Any]) -> list[Observation]:
    if vector["form"] == "write":
        return [
            ToolCall(id="w1", name="Write", input={"file_path": vector["path"], "content": vector["code"]}),
            ToolResult(tool_call_id="w1", output=f"Successfully wrote {vector['path']}"),
        ]
    if vector["form"] == "bash":
        return [ToolCall(id="b1", name="Bash", input={"command": vector["code"]}), ToolResult(tool_call_id="b1")]
    assert vector["form"] == "cell_no_id"
    return [CellExecuted(source=vector["code"], execution_count=vector.get("execution_count"))]


@pytest.mark.parametrize("vector", VECTORS, ids=[f"{v['class']}-{v['name']}" for v in VECTORS])
def test_security_class_vector(vector: dict[str, Any]) -> None:
    if "below_python" in vector and sys.version_info >= tuple(int(n) for n in vector["below_python"].split(".")):
        pytest.skip(f"this syntax parses on Python {vector['below_python']} and later")
    observations = _observations(vector)
    decision = SecurityRole().evaluate(observations, len(observations))
    if not vector["lines"]:
        assert isinstance(decision, Continue), decision.interjection and decision.interjection.content
        return
    assert isinstance(decision, Interject), decision.note
    interjection = decision.interjection
    if vector["form"] != "bash":  # a command has no file lines; everything else is located
        for line in vector["lines"]:
            assert any(loc.start_line <= line <= loc.last_line for loc in interjection.locations), (
                line,
                interjection.locations,
            )
    if vector["form"] == "cell_no_id":
        for loc in interjection.locations:
            assert loc.cell_id is None and loc.path is None
            assert loc.execution_count == vector.get("execution_count") and loc.cell_index == 1
    if "max_severity" in vector:
        assert interjection.severity == vector["max_severity"], interjection.content
    if "urgent" in vector:
        assert interjection.urgent is vector["urgent"]
    if "contains" in vector:
        assert vector["contains"] in interjection.content


def test_vectors_cover_every_class_with_benign_counterparts() -> None:
    classes = {v["class"] for v in VECTORS}
    assert classes >= {"occurrences", "js-command", "js-sql", "js-code-exec", "js-tls", "py-sql", "shell", "secrets"}
    benign = {v["class"] for v in VECTORS if not v["lines"]}
    assert {"js-command", "js-sql", "js-code-exec", "js-tls", "py-sql", "py-deser", "shell", "secrets"} <= benign


def test_rewriting_the_same_file_reports_nothing_new() -> None:
    """Every occurrence is located once; the same content written again is not news."""
    role = SecurityRole()
    code = "import os\nos.system('ls ' + d)\nos.system('ls ' + d)\n"
    first = [ToolCall(id="a", name="Write", input={"file_path": "x.py", "content": code})]
    again = [*first, ToolCall(id="b", name="Write", input={"file_path": "x.py", "content": code})]
    decision = role.evaluate(first, 1)
    assert isinstance(decision, Interject)
    assert [loc.start_line for loc in decision.interjection.locations] == [2, 3]
    assert isinstance(role.evaluate(again, 1), Continue)


def test_cell_location_without_id_round_trips() -> None:
    """The Location of a cell without an id survives the journal's JSON form."""
    from watcher.core.interjection import Location

    loc = Location(execution_count=3, cell_index=2, start_line=4, end_line=5)
    assert Location.from_dict(loc.to_dict()) == loc
    assert loc.render() == "In[3]:4-5"
    assert Location(cell_index=2, start_line=1).render() == "cell #2:1"
    with pytest.raises(ValueError):
        Location(start_line=1)


def test_python_that_cannot_be_read_is_a_visible_notice_with_its_lines() -> None:
    """Code no grammar reads does not switch the scan off silently: a finding names the lines."""
    code = "import json\n\ndef broken(:\n    pass\n\nprint(json.dumps({}))\n"
    decision = SecurityRole().evaluate([CellExecuted(source=code, cell_id="c9")], 1)
    assert decision.interjection is not None
    assert "not scanned" in decision.interjection.content
    assert decision.interjection.locations[0].start_line == 3


@pytest.mark.parametrize("path", ["generated.py", "generated.js"])
def test_expression_nested_thousands_deep_does_not_break_the_role(path: str) -> None:
    """Generated code deeper than the parsers' recursion is skipped by the structural rules, not an error."""
    code = 'query = "SELECT id FROM t WHERE a = " + ' + " + ".join(["part"] * 3000) + "\n"
    observations = [ToolCall(id="g", name="Write", input={"file_path": path, "content": code})]
    decision = SecurityRole().evaluate(observations, 1)
    assert decision.error is None
