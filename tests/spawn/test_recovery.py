"""Permission recovery: the fix computed for each denial, the security role's objections, the strategies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from watcher.core.errors import ConfigurationError
from watcher.spawn._adapter import Denial
from watcher.spawn.manifest import SandboxManifest, infer_manifest
from watcher.spawn.recover import Recovery, compute_fix, objection

CASES = json.loads((Path(__file__).parent / "data" / "recovery_cases.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_fix_and_objection(case: dict[str, str], tmp_path: Path) -> None:
    manifest = SandboxManifest()
    denial = Denial(case["tool"], {"command": case["command"]} if case["command"] else {})
    fix = compute_fix(denial, manifest)
    assert fix is not None and fix.describe() == case["fix"]
    assert objection(fix, denial, tmp_path) == case["objection"]


def commit_denied() -> list[Denial]:
    return [Denial("Bash", {"command": "git commit -m 'add login'"})]


def test_moderate_widens_until_the_escalation_limit(tmp_path: Path) -> None:
    recovery = Recovery("moderate", max_escalations=2)
    manifest = infer_manifest("add a login function")
    assert "git commit *" not in manifest.allowed_commands
    first = recovery.decide(commit_denied(), manifest, tmp_path)
    assert first.outcome == "resumed" and first.manifest is not None
    assert "git commit *" in first.manifest.allowed_commands and "granted" in first.message
    assert recovery.decide(commit_denied(), manifest, tmp_path).outcome == "resumed"
    third = recovery.decide(commit_denied(), manifest, tmp_path)
    assert third.outcome == "refused" and third.detail == "escalation limit reached (2)" and third.manifest is None


def test_aggressive_has_no_limit_but_stops_when_no_fix_can_be_computed(tmp_path: Path) -> None:
    recovery = Recovery("aggressive", max_escalations=0)
    assert all(recovery.decide(commit_denied(), SandboxManifest(), tmp_path).outcome == "resumed" for _ in range(5))
    stuck = recovery.decide([Denial("Bash", {"command": ""})], SandboxManifest(), tmp_path)
    assert stuck.outcome == "refused" and "no fix can be computed" in stuck.detail


def test_a_widening_the_security_role_objects_to_is_refused_whatever_the_strategy(tmp_path: Path) -> None:
    for strategy in ("moderate", "aggressive"):
        decision = Recovery(strategy).decide([Denial("Bash", {"command": "rm -rf /"})], SandboxManifest(), tmp_path)
        assert decision.outcome == "refused" and decision.detail.startswith("the security role objects")


def test_interactive_asks_the_person_and_respects_no(tmp_path: Path) -> None:
    questions: list[str] = []
    answers = iter([True, False])

    def ask(question: str) -> bool:
        questions.append(question)
        return next(answers)

    recovery = Recovery("interactive", ask=ask)
    assert recovery.decide(commit_denied(), SandboxManifest(), tmp_path).outcome == "resumed"
    declined = recovery.decide(commit_denied(), SandboxManifest(), tmp_path)
    assert declined.outcome == "declined" and declined.manifest is None
    assert questions == ["Allow command `git commit *` and resume?"] * 2
    with pytest.raises(ConfigurationError, match="interactive recovery needs a person"):
        Recovery("interactive")
