"""Taint flows in JavaScript/TypeScript handlers and pages, one labelled handler per vector.

Each file in ``vectors/security/js/`` holds the vectors of one sink class (TOML, ``[[case]]``):
the code and its file name (``.js``, ``.ts``, ``.tsx``). In a vulnerable handler a ``sink``
comment marks the line of the sink and a ``source`` comment the line the value enters on, and
``via`` names the variable it goes through; a safe look-alike (sanitised, constant, validated,
another key, a dead branch, a whole-value allow-list) has no marks and must draw no finding at
all. The vectors are written for these tests.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from watcher.core.interjection import Interject
from watcher.core.observations import ToolCall, ToolResult
from watcher.roles._security_js_review import CLASSES, javascript_findings
from watcher.roles.security import SecurityRole

_DIR = Path(__file__).parent / "vectors" / "security" / "js"


def _marked(case: dict[str, Any], cls: str) -> dict[str, Any]:
    """The case with the lines its ``sink`` and ``source`` comments mark (1-based)."""
    lines = case["code"].splitlines()
    for mark in ("sink", "source"):
        at = [n for n, line in enumerate(lines, 1) if f"// {mark}" in line or f"/* {mark} */" in line]
        if at:
            case[mark] = at[0]
    if "sink" in case:
        case.setdefault("source", case["sink"])
    return {**case, "class": cls}


CASES: list[dict[str, Any]] = [
    _marked(case, file.stem)
    for file in sorted(_DIR.glob("*.toml"))
    for case in tomllib.loads(file.read_text(encoding="utf-8"))["case"]
]
_RULES = {"front": None, **{cls: rule for cls, (rule, *_rest) in CLASSES.items()}}


@pytest.mark.parametrize("case", CASES, ids=[f"{c['class']}-{c['name']}" for c in CASES])
def test_js_flow_vector(case: dict[str, Any]) -> None:
    found = javascript_findings(case["code"], case["path"])
    if "sink" not in case:
        assert found == [], [(f.rule, f.start_line, f.explanation) for f in found]
        return
    rule = case.get("rule") or _RULES[case["class"]]
    at = [f for f in found if f.rule == rule and f.start_line <= case["sink"] <= f.last_line]
    assert at, [(f.rule, f.start_line, f.explanation) for f in found]
    story = at[0].explanation
    assert f"line {case['source']})" in story and f"(line {case['sink']})" in story, story
    if "via" in case:
        assert f"through `{case['via']}`" in story, story
    assert at[0].title.endswith(f"({CLASSES[next(c for c, v in CLASSES.items() if v[0] == rule)][2]})")


def test_each_class_has_ten_of_each() -> None:
    """Every sink class: at least 10 vulnerable handlers and 10 safe look-alikes; TypeScript among them."""
    assert {c["class"] for c in CASES} == set(CLASSES)
    for cls in CLASSES:
        cases = [c for c in CASES if c["class"] == cls]
        assert sum("sink" in c for c in cases) >= 10, cls
        assert sum("sink" not in c for c in cases) >= 10, cls
        assert any(c["path"].endswith((".ts", ".tsx")) for c in cases), cls


def test_flow_story_reaches_the_interjection() -> None:
    """The role's interjection carries the class, the CWE, the source and its line, and the variable."""
    case = next(c for c in CASES if c["class"] == "redirect" and "via" in c)
    calls = [
        ToolCall(id="w1", name="Write", input={"file_path": case["path"], "content": case["code"]}),
        ToolResult(tool_call_id="w1", output="ok"),
    ]
    decision = SecurityRole().evaluate(calls, len(calls))
    assert isinstance(decision, Interject)
    content = decision.interjection.content
    assert "CWE-601" in content and f"line {case['source']})" in content and f"`{case['via']}`" in content
    assert any(loc.start_line <= case["sink"] <= loc.last_line for loc in decision.interjection.locations)
