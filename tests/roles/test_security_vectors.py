"""The security role's test vectors, each replayed through the real CLI.

Every case in ``vectors/security/cases.json`` is a transcript (``observations``) and the
interjections expected from ``python -m watcher replay CASE.jsonl --watcher security --json``, in
order: severity, urgency, locations and phrases of the content. Benign cases expect none. Secrets
a case lists must not appear anywhere in the command's output.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

CASES: list[dict[str, Any]] = json.loads((Path(__file__).parent / "vectors" / "security" / "cases.json").read_text())


def _replay(case: dict[str, Any], tmp_path: Path) -> tuple[str, list[dict[str, Any]]]:
    transcript = tmp_path / f"{case['name']}.jsonl"
    transcript.write_text("".join(json.dumps(o) + "\n" for o in case["observations"]))
    run = subprocess.run(
        [sys.executable, "-m", "watcher", "replay", str(transcript), "--watcher", "security", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout, [json.loads(line) for line in run.stdout.splitlines()]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_security_vector(case: dict[str, Any], tmp_path: Path) -> None:
    stdout, evaluations = _replay(case, tmp_path)
    assert evaluations, "the watcher never evaluated"
    assert all(e["watcher"] == "security" and e["error"] is None for e in evaluations)
    assert [e["index"] for e in evaluations] == sorted(e["index"] for e in evaluations)
    interjections = [e for e in evaluations if e["decision"] == "interject"]
    expected = case["expect"]
    assert len(interjections) == len(expected), [i["content"] for i in interjections]
    for got, want in zip(interjections, expected, strict=True):
        assert got["action"] == "guidance"
        assert got["severity"] == want["severity"]
        assert got["urgent"] is want["urgent"]
        if "locations" in want:
            assert got["locations"] == want["locations"]
        for phrase in want["contains"]:
            assert phrase in got["content"]
    for secret in case.get("secrets", ()):
        assert secret not in stdout


def test_vectors_cover_the_issue() -> None:
    """At least 25 cases, benign ones included, and the seed's login() among them."""
    assert len(CASES) >= 25
    assert sum(not c["expect"] for c in CASES) >= 10
    assert {"js_login_template_literal", "js_login_parameterised", "bash_rm_build_dirs_benign"} <= {
        c["name"] for c in CASES
    }
