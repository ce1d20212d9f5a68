"""The peers' own loop-detector test cases, translated to watcher transcripts, through the ``stuck`` role.

Each ``vectors/stuck_peers/PEER.json`` holds cases written after one peer's test suite (OpenHands
V0 and the V1 SDK, Gemini CLI, Roo Code, Cline, OpenClaw): the peer test it follows, what the peer
says (``stuck`` or ``not_stuck``), the strongest action the watcher takes (``none``, ``nudge``,
``pause``, ``abort``) and, where the watcher and the peer disagree, ``why`` (a documented default)
and ``agrees_with``: the role's settings under which it takes the peer's side (null where the
peer's own cases pull apart, which ``why`` explains).
Transcripts are written compactly and expanded here (see ``expand``); only interjections made after
a ``{"mark": "judge"}`` record, if there is one, count for the verdict.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from watcher.core.interjection import Interject
from watcher.core.observations import Observation, observation_from_dict
from watcher.roles.stuck import StuckRole

PEERS = Path(__file__).parent / "vectors" / "stuck_peers"
RANK = {"none": 0, "nudge": 1, "pause": 2, "abort": 3}


def _cases() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in sorted(PEERS.glob("*.json")):
        suite = json.loads(path.read_text())
        found += [(f"{path.stem}/{case['name']}", case) for case in suite["cases"]]
    return found


CASES = _cases()


def _fill(value: Any, i: int) -> Any:
    """``{i}`` in any string becomes the repetition index: ids, pids and counters that change each time."""
    if isinstance(value, str):
        return value.replace("{i}", str(i))
    if isinstance(value, list):
        return [_fill(v, i) for v in value]
    if isinstance(value, dict):  # a nested repeat keeps its own {i}
        return {k: v if k == "records" and "repeat" in value else _fill(v, i) for k, v in value.items()}
    return value


def _text(spec: str | dict[str, Any]) -> str:
    if isinstance(spec, str):
        return spec
    return "".join(part * times for part, times in spec["parts"])


def expand(records: list[dict[str, Any]], counter: Iterator[int]) -> Iterator[dict[str, Any] | None]:
    """Transcript records from the compact form; None stands for the judging mark."""
    for record in records:
        if "repeat" in record:
            for i in range(record["repeat"]):
                yield from expand(_fill(record["records"], i), counter)
        elif "mark" in record:
            yield None
        elif "user" in record:
            yield {"kind": "user_message", "text": record["user"]}
        elif "say" in record:
            yield {"kind": "assistant_message", "text": _text(record["say"])}
        elif "harness" in record:
            yield {"kind": "error", "text": record["harness"]}
        elif "condense" in record:
            yield {"kind": "condensation"}
        elif "call" in record:
            call_id = f"call_{next(counter)}"
            yield {"kind": "tool_call", "id": call_id, "name": record["call"], "input": record.get("input", {})}
            if record.get("pending"):  # the peer records the call only: no result follows
                continue
            result: dict[str, Any] = {
                "kind": "tool_result",
                "tool_call_id": call_id,
                "output": record.get("output", ""),
            }
            result["is_error"] = bool(record.get("error", False))
            if "exit" in record:
                result["exit_code"] = record["exit"]
            yield result
        else:
            raise AssertionError(f"unknown compact record {record!r}")


def verdict(case: dict[str, Any], **settings: int) -> str:
    """The strongest action the stuck role takes on the case, evaluating after every observation."""
    role = StuckRole(None, **settings)
    buffer: list[Observation] = []
    judging = not any("mark" in r for r in case["transcript"])
    strongest = "none"
    for record in expand(case["transcript"], iter(range(10**6))):
        if record is None:
            judging = True
            continue
        buffer.append(observation_from_dict(record))
        decision = role.evaluate(buffer[-200:], 1)
        if judging and isinstance(decision, Interject) and RANK[decision.interjection.action] > RANK[strongest]:
            strongest = decision.interjection.action
    return strongest


def test_the_translation_is_broad_enough() -> None:
    peers = {name.split("/")[0] for name, _ in CASES}
    assert peers == {"openhands_v0", "openhands_v1", "gemini_cli", "roo_code", "cline", "openclaw"}
    assert len(CASES) >= 150
    assert sum(case["peer"] == "not_stuck" for _, case in CASES) >= 50


@pytest.mark.parametrize(("name", "case"), CASES, ids=[name for name, _ in CASES])
def test_peer_case(name: str, case: dict[str, Any]) -> None:
    assert case["peer"] in ("stuck", "not_stuck")
    got = verdict(case)
    assert got == case["watcher"], f"{name}: the watcher says {got}, the vector says {case['watcher']}"
    agrees = (got != "none") == (case["peer"] == "stuck")
    assert agrees == ("why" not in case), f"{name}: agreement with the peer is {agrees}; 'why' must say why not"
    assert ("agrees_with" in case) == ("why" in case), f"{name}: a disagreement says which settings agree"


DISAGREEING = [(name, case) for name, case in CASES if case.get("agrees_with")]


@pytest.mark.parametrize(("name", "case"), DISAGREEING, ids=[name for name, _ in DISAGREEING])
def test_the_peers_side_is_a_setting_away(name: str, case: dict[str, Any]) -> None:
    """Where a default disagrees with a peer, the peer's behaviour is reachable through ``StuckConfig``."""
    got = verdict(case, **case["agrees_with"])
    assert (got != "none") == (case["peer"] == "stuck"), f"{name}: with {case['agrees_with']} the watcher says {got}"


def test_agreement_with_the_peers() -> None:
    """Most peer cases agree; every disagreement is a documented default (checked per case above)."""
    agreeing = sum("why" not in case for _, case in CASES)
    rate = agreeing / len(CASES)
    for peer in sorted({name.split("/")[0] for name, _ in CASES}):
        cases = [case for name, case in CASES if name.startswith(f"{peer}/")]
        agree = sum("why" not in case for case in cases)
        print(f"  {peer}: {agree}/{len(cases)} ({agree / len(cases):.1%})")
    print(f"stuck role agrees with the peers on {agreeing}/{len(CASES)} cases ({rate:.1%})")
    assert rate >= 0.93
