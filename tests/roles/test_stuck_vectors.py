"""The ``stuck`` role's test vectors, each run through the real CLI in a subprocess.

Every ``vectors/stuck/NAME.jsonl`` transcript has a ``NAME.expect.json`` beside it listing the
interjections ``watcher replay NAME.jsonl --watcher stuck --json`` must print: the observation index
each is made at, its action, severity and urgency, phrases its content must contain and, where
given, its exact locations. Every other evaluation must be a plain continue.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

VECTORS = Path(__file__).parent / "vectors" / "stuck"
CASES = sorted(p.name.removesuffix(".jsonl") for p in VECTORS.glob("*.jsonl"))
FIELDS = {
    "session",
    "watcher",
    "index",
    "decision",
    "urgent",
    "severity",
    "action",
    "content",
    "locations",
    "note",
    "error",
}


def _replay(transcript: Path) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "watcher", "replay", str(transcript), "--watcher", "stuck", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_there_are_enough_vectors() -> None:
    benign = [c for c in CASES if not json.loads((VECTORS / f"{c}.expect.json").read_text())["interjections"]]
    assert len(CASES) >= 55
    assert len(benign) >= 22


@pytest.mark.parametrize("case", CASES)
def test_vector(case: str) -> None:
    expected = json.loads((VECTORS / f"{case}.expect.json").read_text())["interjections"]
    lines = _replay(VECTORS / f"{case}.jsonl")
    observations = sum(1 for line in (VECTORS / f"{case}.jsonl").read_text().splitlines() if line.strip())

    assert lines or not expected, "no evaluation at all, yet an interjection was expected"
    for line in lines:
        assert set(line) == FIELDS
        assert line["watcher"] == "stuck"
        assert line["error"] is None
        assert 0 <= line["index"] < observations
        if line["decision"] == "continue":
            assert (line["action"], line["severity"], line["content"], line["urgent"], line["locations"]) == (
                None,
                None,
                None,
                False,
                [],
            )
    said = [line for line in lines if line["decision"] == "interject"]
    got = [(s["index"], s["action"], s["severity"], s["urgent"]) for s in said]
    want = [(e["index"], e["action"], e["severity"], e["urgent"]) for e in expected]
    assert got == want, f"{case}: {[s['content'] for s in said]}"
    for s, e in zip(said, expected, strict=True):
        for phrase in e["contains"]:
            assert phrase in s["content"], f"{phrase!r} not in {s['content']!r}"
        if "locations" in e:
            assert s["locations"] == e["locations"]
        if s["action"] == "nudge":
            assert any(
                word in s["content"] for word in ("different approach", "change the code", "wait longer", "Act on it")
            )


# each class of loop: a vector where it is flagged, and a counterpart that must stay silent (after
# the nudge and pause it sets up on purpose, for the re-arm class)
CLASSES = {
    "re-arm after a pause or a person's message": ("rearm_after_user_message", "benign_user_redirects_after_pause", 2),
    "empty replies repeated": ("monologue_empty_replies", "benign_empty_replies_between_tools", 0),
    "replies repeated across the harness's nudges": (
        "monologue_empty_replies_between_harness_nudges",
        "benign_same_answer_to_a_person",
        0,
    ),
    "cycles of 3 to 5 steps": ("cycle_three_reads", "benign_three_reads_twice", 0),
    "volatile values": ("volatile_ids_send_loop", "benign_same_request_new_data", 0),
    "a missing tool": ("missing_tool_varying_arguments", "benign_missing_tool_probed_a_few_times", 0),
    "the same error under varying arguments": (
        "same_error_varying_arguments",
        "benign_batch_edit_failures_different_files",
        0,
    ),
    "waiting by intent": ("poll_by_parameter_over_budget", "benign_poll_by_parameter_within_budget", 0),
    "waiting that brings nothing new": ("status_reads_nothing_new", "benign_status_reads_with_news", 0),
    "polling a background run": ("polling_over_budget", "benign_polling_with_progress", 0),
    "chanting": ("chant_in_one_reply", "benign_repetition_in_table_and_code", 0),
    "chanting right after a code block": (
        "chant_after_a_code_block_on_the_same_line",
        "benign_repetition_in_table_and_code",
        0,
    ),
    "calls whose results are not reported": (
        "calls_without_results_repeated",
        "benign_calls_without_results_varied",
        0,
    ),
    "parallel calls, results in any order": ("parallel_pair_same_results", "benign_parallel_results_progress", 0),
    "a result lost once": ("calls_without_results_repeated", "benign_one_result_lost_then_paired", 0),
    "a reply streamed in parts": ("chant_streamed_in_parts", "benign_reply_streamed_in_parts", 0),
    "one line said with a counter": ("chant_lines_with_a_counter", "benign_numbered_report_lines", 0),
    "harness failures interleaved": (
        "harness_errors_interleaved_with_failing_command",
        "benign_harness_error_then_new_command_works",
        0,
    ),
    "the same failure with edits between": (
        "recurring_failure_edits_between",
        "benign_failure_moves_with_each_edit",
        0,
    ),
    "the same brief to a sub-agent again": ("respawn_same_brief", "benign_subagents_with_different_briefs", 0),
    "waiting whose output only ages": ("waiting_only_the_age_moves", "benign_waiting_steps_move_on", 0),
    "waiting whose output only spins": ("waiting_only_the_spinner_moves", "benign_waiting_steps_move_on", 0),
    "the same answer to a query reworded": (
        "same_answer_reworded_search",
        "benign_searches_find_new_pages_and_rewrites",
        0,
    ),
}


@pytest.mark.parametrize("loop", sorted(CLASSES))
def test_each_class_has_a_loop_and_a_benign_counterpart(loop: str) -> None:
    flagged, benign, set_up = CLASSES[loop]
    assert json.loads((VECTORS / f"{flagged}.expect.json").read_text())["interjections"]
    assert len(json.loads((VECTORS / f"{benign}.expect.json").read_text())["interjections"]) == set_up
