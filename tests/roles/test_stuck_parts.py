"""Unit tests of the ``stuck`` role's parts: what counts as the same, waiting, cycles, chanting, re-arming."""

from __future__ import annotations

import json

import pytest

from watcher.core.errors import ConfigurationError
from watcher.core.interjection import Interject
from watcher.core.observations import (
    AssistantMessage,
    Condensation,
    Observation,
    ToolCall,
    ToolResult,
    UserMessage,
)
from watcher.roles._stuck_actions import action_key, scrolling, wait_kind
from watcher.roles._stuck_cycles import CycleDetector
from watcher.roles._stuck_levels import Levels
from watcher.roles._stuck_nudges import empty_reply_nudge, harness_nudge
from watcher.roles._stuck_recurring import Redelegations, delegating
from watcher.roles._stuck_reruns import Reruns
from watcher.roles._stuck_results import error_key, missing_tool, result_key
from watcher.roles._stuck_text import chant
from watcher.roles.stuck import StuckRole

# --- the same result, the same action, the same error ----------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ('{"ok": true, "messageId": "om_1", "runId": "run_1"}', '{"ok": true, "messageId": "om_2", "runId": "run_2"}'),
        ("Command still running (session sess-4, pid 1004)", "Command still running (session sess-5, pid 1005)"),
        ("request 3f1c9a2e-7b4d-4c1e-9f00-000000000001 queued", "request 9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d queued"),
        ('{"created_at": "2026-11-23T13:00:01Z", "ok": true}', '{"created_at": "2026-11-23T13:05:44Z", "ok": true}'),
        ("built in 812ms at 1763910000", "built in 790ms at 1763910042"),
        ("wrote /tmp/run-17/out.csv", "wrote /tmp/run-18/out.csv"),
        ('{"durationMs": 104, "rows": 3}', '{"durationMs": 131, "rows": 3}'),
        ("digest 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b", "digest 2c26b46b68ffc68ff99b453c1d30413413422d70"),
        ("api   0/1   Pending   0   5m12s", "api   0/1   Pending   0   5m27s"),  # kubectl's AGE
        ("⠋ [3/7] RUN pip install", "⠙ [3/7] RUN pip install"),  # a spinner's frame
        ("Waiting for the deploy... Elapsed: 00:42", "Waiting for the deploy... Elapsed: 01:07"),
        ("Status: pending (ETA 3:10)", "Status: pending (ETA 2:55)"),
    ],
)
def test_volatile_details_do_not_make_results_differ(first: str, second: str) -> None:
    assert result_key(first, False) == result_key(second, False)
    assert result_key(first, False) != result_key(second, True)  # failing or not still tells results apart


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("line 7", "line 8"),
        ("12 passed", "13 passed"),
        ("rows: 3", "rows: 4"),
        ('{"count": 1}', '{"count": 2}'),
        ("[3/7] RUN pip install", "[4/7] COPY . /app"),
        ("src/app.ts:12:5 error", "src/app.ts:14:5 error"),
    ],
)
def test_progress_counters_are_kept(first: str, second: str) -> None:
    assert result_key(first, False) != result_key(second, False)


def test_harness_fields_and_minted_ids_do_not_make_actions_differ() -> None:
    base = {"path": "src/main.ts"}
    assert action_key("read_file", {**base, "task_progress": "- [ ] a"}) == action_key(
        "read_file", {**base, "task_progress": "- [x] a\n- [ ] b"}
    )
    post = {"channel": "C1", "text": "done"}
    assert action_key("post", {**post, "client_msg_id": "a"}) == action_key("post", {**post, "client_msg_id": "b"})
    uuid_a, uuid_b = "3f1c9a2e-7b4d-4c1e-9f00-000000000001", "9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d"
    assert action_key("post", {**post, "nonce": uuid_a}) == action_key("post", {**post, "nonce": uuid_b})
    # a time that names what is asked for is not volatile: two threads are two actions
    assert action_key("replies", {"ts": "1763910000.1"}) != action_key("replies", {"ts": "1763910042.7"})
    assert action_key("read_file", base) != action_key("read_file", {"path": "src/app.ts"})


def test_errors_are_the_same_whatever_they_were_about() -> None:
    same = [
        "<tool_use_error>File does not exist: tests/fixtures/users.json</tool_use_error>",
        "<tool_use_error>File does not exist: tests/fixtures/accounts.json</tool_use_error>",
    ]
    assert error_key(same[0]) == error_key(same[1])
    assert error_key("KeyError: 'month' at line 3") == error_key("KeyError: 'year' at line 7")
    assert error_key("Permission denied: /etc/shadow") != error_key("File does not exist: /etc/shadow")


@pytest.mark.parametrize(
    ("output", "missing"),
    [
        ("Error: No such tool available: git_log", True),
        ('Tool "exec" not found in registry', True),
        ("unknown tool: search_web", True),
        ("Function run_sql is not available in this session", True),
        ("String to replace not found in file.", False),
        ("File not found: src/tool.py", False),
        ("bash: jq: command not found", False),
    ],
)
def test_missing_tools_are_recognised(output: str, missing: bool) -> None:
    assert missing_tool(output) is missing


@pytest.mark.parametrize(
    ("name", "tool_input", "kind"),
    [
        ("process", {"action": "poll", "sessionId": "s1"}, "sleep"),
        ("jobs", {"op": "Status", "id": 4}, "status"),
        ("background", {"mode": "wait"}, "sleep"),
        ("write_stdin", {"session_id": 3, "chars": ""}, "sleep"),
        ("write_stdin", {"session_id": 3, "chars": "y\n"}, None),
        ("message", {"action": "send", "text": "hi"}, None),
        ("process", {"action": "kill", "sessionId": "s1"}, None),
        ("process", {"action": "log", "sessionId": "s1"}, "sleep"),  # more of a running process's output
        ("command_status", {"CommandId": "c7", "WaitDurationSeconds": 30}, "status"),
        ("update_status", {"status": "done"}, None),  # setting a status is work
    ],
)
def test_waiting_is_recognised_by_intent(name: str, tool_input: dict[str, object], kind: str | None) -> None:
    assert wait_kind(name, tool_input) == kind


@pytest.mark.parametrize(
    ("name", "tool_input", "scrolls"),
    [
        ("browser_action", {"action": "scroll_down"}, True),
        ("browser_action", {"action": "scroll_up"}, True),
        ("computer", {"action": "scroll", "coordinate": [640, 400], "scroll_direction": "down"}, True),
        ("mcp__playwright__browser_scroll", {"delta_y": 600}, True),
        ("browser", {"action": "page_down"}, True),
        ("browser_action", {"action": "click", "coordinate": "[100, 200]"}, False),
        ("scroll_logs", {"n": 5}, False),  # a tool of its own, not a scroll
        ("Read", {"file_path": "scroll.py"}, False),
    ],
)
def test_scrolling_is_recognised_by_name_or_action(name: str, tool_input: dict[str, object], scrolls: bool) -> None:
    assert scrolling(name, tool_input) == scrolls


def test_scrolling_neither_makes_nor_breaks_a_loop() -> None:
    down = [
        ToolCall(id="d", name="browser_action", input={"action": "scroll_down"}),
        ToolResult(tool_call_id="d", output="Visible: features"),
    ]
    up = [
        ToolCall(id="u", name="browser_action", input={"action": "scroll_up"}),
        ToolResult(tool_call_id="u", output="Visible: header"),
    ]
    assert _run([UserMessage(text="Find the pricing table."), *(down + up) * 6]) == []
    health = [
        ToolCall(id="h", name="execute_command", input={"command": "curl -s :3000/health"}),
        ToolResult(tool_call_id="h", output="ok"),
    ]
    assert _run([*(health + down) * 4]) == [(13, "nudge")]  # the 4th health check, scrolls between


# --- cycles ------------------------------------------------------------------------------------------


def _new_loop() -> int:
    return 0


@pytest.mark.parametrize("period", [2, 3, 4, 5])
def test_cycles_of_two_to_five_steps_are_nudged_at_three_cycles_and_paused_at_five(period: int) -> None:
    detector = CycleDetector(cycles=3, pause_cycles=5)
    block = [(f"action {k}", k) for k in range(period)]
    reported = []
    for n in range(1, period * 11 + 1):
        level, steps = detector.feed(block[(n - 1) % period], _new_loop)
        if level:
            assert steps == block[n % period :] + block[: n % period]  # the block as it last came round
            reported.append((n // period, level))
    # a nudge at the third cycle, a pause at the fifth, and a pause at every further cycle
    assert reported == [(3, 1), (5, 2), *[(n, 2) for n in range(6, 12)]]


@pytest.mark.parametrize(("period", "nudged_at"), [(2, 3), (3, 4), (4, 4), (5, 4)])
def test_a_cycle_of_more_than_two_steps_is_nudged_a_round_later(period: int, nudged_at: int) -> None:
    detector = CycleDetector(cycles=3, pause_cycles=5, long_cycles=4)
    block = [(f"action {k}", k) for k in range(period)]
    reported = [
        (n // period, level)
        for n in range(1, period * 6 + 1)
        if (level := detector.feed(block[(n - 1) % period], _new_loop)[0])
    ]
    assert reported == [(nudged_at, 1), (5, 2), (6, 2)]


def test_the_same_action_whatever_its_results_is_nudged_every_budget() -> None:
    reruns = Reruns(budget=10)
    due = [n for n in range(1, 31) if reruns.feed("make fixture", _new_loop)[0]]
    assert due == [10, 20, 30]
    assert not reruns.feed("other", _new_loop)[0] and reruns.count == 1  # another action starts a new run
    reruns.clear()
    assert [n for n in range(1, 10) if reruns.feed("make fixture", _new_loop)[0]] == []


def test_one_action_repeated_is_not_a_cycle_and_a_break_resets() -> None:
    detector = CycleDetector(cycles=3, pause_cycles=5)
    assert not any(detector.feed(("same", 1), _new_loop)[0] for _ in range(12))
    steps = [("a", 1), ("b", 2)] * 2 + [("c", 3)] + [("a", 1), ("b", 2)] * 2
    assert not any(detector.feed(step, _new_loop)[0] for step in steps)
    detector.clear()
    assert [detector.feed(step, _new_loop)[0] for step in [("a", 1), ("b", 2)] * 3][-1] == 1


def test_a_cycle_flagged_before_a_person_speaks_counts_afresh() -> None:
    detector = CycleDetector(cycles=3, pause_cycles=5)
    levels = [detector.feed(s, _new_loop)[0] for s in [("a", 1), ("b", 2)] * 3]
    assert levels == [0] * 5 + [1]
    detector.rearm(_new_loop, at_once=False)
    # spoken to: the cycle going on is not flagged again at once, only after three more cycles
    levels = [detector.feed(s, _new_loop)[0] for s in [("a", 1), ("b", 2)] * 3]
    assert levels == [0] * 5 + [1]
    detector.rearm(_new_loop, at_once=True)  # nudged by the harness instead: its next full cycle is flagged
    assert [detector.feed(s, _new_loop)[0] for s in [("a", 1), ("b", 2)]] == [0, 1]


def test_a_cycle_whose_results_progress_is_not_a_cycle() -> None:
    detector = CycleDetector(cycles=3, pause_cycles=5)
    steps = [(action, f"{action} {n}") for n in range(10) for action in ("read", "list")]
    assert not any(detector.feed(step, _new_loop)[0] for step in steps)


# --- chanting ----------------------------------------------------------------------------------------


def test_chanting_is_found_and_quoted_from_a_sentence_start() -> None:
    text = "I found it. " + "Now I will update the cache key to include the locale. " * 12
    assert chant(text, 10, 5) == ("Now I will update the cache key to include the locale.", 12, True)
    assert chant("Working... Finished. " * 30, 10, 5) == ("Working... Finished.", 30, True)


def test_one_line_said_again_and_again_is_chanting() -> None:
    lines = ["I'll note that the tests confirmed the fix.", "I'll note that I rolled back the test changes."] * 5
    assert chant("\n".join(["The code is correct.", *lines]), 10, 5) == (lines[0], 5, False)
    spaced = ["  I'll  note that the tests CONFIRMED the fix. ", "Something else entirely, said once."] * 5
    assert chant("\n".join(spaced), 10, 5) == ("I'll note that the tests CONFIRMED the fix.", 5, False)
    assert chant("\n".join(["Yes."] * 12), 10, 5) is None  # short lines are not chanting
    assert chant("\n".join(lines[:8]), 10, 5) is None  # four times is not yet


@pytest.mark.parametrize(
    "text",
    [
        "Now I will update the cache key. " * 9,  # nine times is not yet chanting
        "```\n" + "assert render(page) == 'fr'\n" * 20 + "```\n",  # code
        "| case | fr |\n" * 20,  # a table
        "".join(f"- projects/acme/locations/eu/services/api-{i}\n" for i in range(20)),  # a list
        "-" * 800,  # a divider
        " ".join(f"Step {i} copies shard {i} of the dataset to the replica." for i in range(30)),  # similar, not equal
        ("Same note. " + "x" * 400 + " ") * 12,  # repeats too far apart
        "The log says:\n" + "WARNING: connection to db:5432 refused, retrying\n" * 6,  # pasted log lines
        "The log says:\n" + "[pool] waiting for a free connection slot\n" * 6,
        "Before:\n" + "    assert render(page, locale='fr').lang == 'fr'\n" * 12,  # indented code
    ],
)
def test_structure_and_near_repeats_are_not_chanting(text: str) -> None:
    assert chant(text, 10, 5) is None


# --- re-arming ---------------------------------------------------------------------------------------


def test_levels_flag_every_occurrence_past_the_top_and_count_afresh_when_a_person_speaks() -> None:
    levels = Levels(nudge_at=3, top_at=4, loop=1)
    assert [levels.level(n) for n in range(1, 7)] == [0, 0, 1, 2, 2, 2]
    assert levels.rearm(6)  # spoken to after a pause: not flagged again at once...
    assert [levels.level(n) for n in range(7, 11)] == [0, 0, 1, 2]  # ...only after its full count again
    assert levels.rearm(10, at_once=True) and levels.level(11) == 2  # nudged by the harness: at once
    fresh = Levels(nudge_at=3, top_at=4, loop=1)
    assert not fresh.rearm(2)  # nothing reported yet: the count goes on across the person's message
    assert [fresh.level(n) for n in (3, 4)] == [1, 2]
    nudged = Levels(nudge_at=3, top_at=4, loop=1)
    assert [nudged.level(n) for n in (1, 2, 3)] == [0, 0, 1]
    assert nudged.rearm(3) and [nudged.level(n) for n in range(4, 8)] == [0, 0, 1, 2]


def _run(observations: list[Observation], **settings: int) -> list[tuple[int, str]]:
    role, buffer, said = StuckRole(None, **settings), [], []
    for obs in observations:
        buffer.append(obs)
        decision = role.evaluate(buffer, 1)
        if isinstance(decision, Interject):
            said.append((len(buffer) - 1, decision.interjection.action))
    return said


def _read(n: int) -> list[Observation]:
    return [
        ToolCall(id=f"c{n}", name="Read", input={"file_path": "a.py"}),
        ToolResult(tool_call_id=f"c{n}", output="x"),
    ]


def test_a_loop_is_nudged_then_paused_and_counts_afresh_after_the_person_speaks() -> None:
    loop = [o for n in range(5) for o in _read(n)]  # nudged at the 4th read, paused at the 5th
    assert _run(loop) == [(7, "nudge"), (9, "pause")]
    after = [o for n in range(10, 15) for o in _read(n)]
    unspoken = _run([*loop, AssistantMessage(text="again"), *after])
    assert unspoken == [(7, "nudge"), (9, "pause"), *[(n, "pause") for n in (12, 14, 16, 18, 20)]]  # each one after
    spoken = _run([*loop, UserMessage(text="carry on"), *after])
    assert spoken == [(7, "nudge"), (9, "pause"), (18, "nudge"), (20, "pause")]  # the 4th and 5th after the person
    # a watcher's (or the harness's) own nudge is not a person: the loop going on is flagged at its next occurrence
    nudge = UserMessage(text="[SUPERVISOR]: Stuck? Read `a.py` has been run 5 times in a row with the same result.")
    assert _run([*loop, nudge, *after]) == unspoken


def test_a_condensation_storm_goes_on_across_a_person_message() -> None:
    storm: list[Observation] = [Condensation()] * 10
    assert _run([*storm[:5], UserMessage(text="continue"), *storm[:5]]) == [(10, "pause")]  # not flagged yet: counted
    assert _run([*storm, *[Condensation()] * 2]) == [(9, "pause"), (10, "pause"), (11, "pause")]
    spoken = _run([*storm, UserMessage(text="continue"), *[Condensation()] * 10])
    assert spoken == [(9, "pause"), (20, "pause")]  # flagged, then spoken to: ten more


def test_empty_replies_are_a_monologue() -> None:
    said = _run([AssistantMessage(text=""), AssistantMessage(text="  "), AssistantMessage(text="\n")])
    assert said == [(2, "pause")]


@pytest.mark.parametrize(
    "between",
    [
        "Your last response did not include a function call or a message. Please use a tool to proceed.",
        "[ERROR] You did not use a tool in your previous response! Please retry with a tool use.",
        "Please go on with the task.",  # a person, even: an empty reply answers nobody
    ],
)
def test_empty_replies_are_a_monologue_whatever_is_said_between(between: str) -> None:
    empty = AssistantMessage(text="")
    said = _run([empty, UserMessage(text=between), empty, UserMessage(text=between), empty])
    assert said == [(4, "pause")]


@pytest.mark.parametrize(
    ("text", "nudge", "empty"),
    [
        ("Your last response did not include a function call or a message. Please use a tool.", True, True),
        ("[ERROR] You did not use a tool in your previous response! Please retry with a tool use.", True, True),
        ("Your previous reply was empty. Respond with a tool call.", True, True),
        ("System: Potential loop detected. Details: a repeated call. Take a step back.", True, False),
        ("[SUPERVISOR]: Stuck? Bash `make` has failed 3 times in a row.", True, False),
        ('<system-nudge severity="warning">Change approach.</system-nudge>', True, False),
        ("<system-reminder>The todo list is empty.</system-reminder>", True, False),
        ("Supervisor:Guidance: ask which branch to use", False, False),  # a person's guidance
        ("Please continue.", False, False),
        ("Why did the tool call fail? The last response said 'timeout'.", False, False),
        ("Use the function call API from the SDK docs to add a retry.", False, False),
    ],
)
def test_the_harness_is_told_from_a_person(text: str, nudge: bool, empty: bool) -> None:
    assert (harness_nudge(text), empty_reply_nudge(text)) == (nudge, empty)


def test_harness_nudges_stand_for_the_empty_replies_a_log_does_not_show() -> None:
    nudge = UserMessage(text="Your last response did not include a function call or a message. Please use a tool.")
    assert _run([UserMessage(text="Fix the bug."), nudge, nudge, nudge]) == [(3, "pause")]
    # a reply was seen before each nudge: those replies count, the nudges add nothing
    reply = AssistantMessage(text="")
    assert _run([UserMessage(text="Fix the bug."), reply, nudge, reply, nudge, reply]) == [(5, "pause")]
    loop_notice = UserMessage(text="System: Potential loop detected. Please take a step back.")
    assert _run([UserMessage(text="Fix the bug."), loop_notice, loop_notice, loop_notice]) == []  # not about a reply


def test_the_same_reply_is_a_monologue_across_harness_nudges_but_not_a_person() -> None:
    reply = AssistantMessage(text="I will now mark the task as complete.")
    nudge = UserMessage(text="Your last response did not include a function call. Please use a tool to proceed.")
    assert _run([reply, nudge, reply, nudge, reply]) == [(4, "pause")]
    person = UserMessage(text="Is it really complete? Show me the test run.")
    assert _run([reply, person, reply, person, reply]) == []


def test_failures_that_say_only_their_exit_status_are_not_the_same_error() -> None:
    greps = [
        o
        for n, pattern in enumerate(["refresh_token", "renew", "rotate_key", "token_expiry", "reauth", "jwt"])
        for o in (
            ToolCall(id=f"g{n}", name="Bash", input={"command": f"grep -rn {pattern} src"}),
            ToolResult(tool_call_id=f"g{n}", output="Exit code 1", is_error=True),
        )
    ]
    assert _run(greps) == []  # six searches that found nothing: exploring, not one error again and again
    missing = [
        o
        for n in range(5)
        for o in (
            ToolCall(id=f"r{n}", name="Read", input={"file_path": f"conf/app{n}.yaml"}),
            ToolResult(tool_call_id=f"r{n}", output=f"File does not exist: conf/app{n}.yaml", is_error=True),
        )
    ]
    assert _run(missing) == [(9, "nudge")]


def test_new_thresholds_are_validated() -> None:
    with pytest.raises(ConfigurationError, match="same_error_pause"):
        StuckRole(same_error_nudge=6, same_error_pause=5)
    assert StuckRole(same_error_nudge=6, same_error_pause=6).config.same_error_pause == 6  # equal: no nudge level
    with pytest.raises(ConfigurationError, match="reply_run_pause"):
        StuckRole(reply_run_pause=1)
    with pytest.raises(ConfigurationError, match="chant_repeats"):
        StuckRole(chant_repeats=1)
    assert json.dumps(StuckRole(chant_repeats=5).config.chant_repeats) == "5"


def test_replies_in_a_row_whatever_they_say_only_when_asked_for() -> None:
    plan = ("Read the config.", "Fix the parser.", "Run the tests.", "Write the notes.")
    replies = [AssistantMessage(text=step) for step in plan]
    thinking = AssistantMessage(text="Hmm.", extra={"thinking": True})
    assert _run([UserMessage(text="Hi"), *replies]) == []  # off by default: a split reply is several replies
    assert _run([UserMessage(text="Hi"), *replies], reply_run_pause=3) == [(3, "pause"), (4, "pause")]
    broken = [replies[0], thinking, replies[1], *_read(1), replies[2], replies[3]]
    assert _run(broken, reply_run_pause=3) == []  # thinking is not a reply; a tool step ends the run


def test_a_repeat_can_count_afresh_after_its_pause() -> None:
    reads = [obs for n in range(12) for obs in _read(n)]
    assert [i for i, _ in _run(reads)] == [7, 9, 11, 13, 15, 17, 19, 21, 23]  # nudge at 4, then every one from 5
    roo = _run(reads, repeat_nudge=4, repeat_pause=4, repeat_again=4)
    assert roo == [(7, "pause"), (15, "pause"), (23, "pause")]  # refused at the 4th, then every 4th


def test_a_message_with_only_a_counter_moving_on_is_the_same_message() -> None:
    counted = [AssistantMessage(text=f"Thinking... {n}") for n in range(3)]
    assert _run([UserMessage(text="Hi"), *counted]) == [(3, "pause")]
    worded = [AssistantMessage(text=f"Step {n}: {step}") for n, step in enumerate(("read", "fix", "test"))]
    assert _run([UserMessage(text="Hi"), *worded]) == []


def test_a_rerun_with_new_results_is_no_change_of_approach_so_its_nudges_climb() -> None:
    role, buffer, said = StuckRole(), [UserMessage(text="Make a fixture of 120 rows.")], []
    for n in range(60):
        buffer += [
            ToolCall(id=f"g{n}", name="Bash", input={"command": "python gen.py --print"}),
            ToolResult(tool_call_id=f"g{n}", output=f"seed={n * 7919 % 10007}", exit_code=0),
        ]
        decision = role.evaluate(buffer, 2)
        if isinstance(decision, Interject):
            said.append((n + 1, decision.interjection.action, decision.interjection.severity))
    assert said == [
        (10, "nudge", "hint"),
        (20, "nudge", "warning"),
        (30, "nudge", "warning"),
        (40, "nudge", "critical"),
        (50, "nudge", "critical"),
        (60, "pause", "critical"),  # five nudges went unanswered
    ]


@pytest.mark.parametrize(
    ("name", "delegates"),
    [
        ("Task", True),
        ("Agent", True),
        ("new_task", True),
        ("spawn_agent", True),
        ("sessions_spawn", True),
        ("run_subagent", True),
        ("TaskCreate", False),
        ("TaskOutput", False),
        ("AgentOutputTool", False),
        ("task_tracker", False),
        ("Bash", False),
    ],
)
def test_which_tools_hand_work_to_a_sub_agent(name: str, delegates: bool) -> None:
    assert delegating(name) is delegates


def test_a_brief_sent_out_together_is_no_retry_but_one_sent_again_later_is() -> None:
    serial = iter(range(1, 100))
    briefs = Redelegations(3)
    for _ in range(3):  # three at once: each handed out while the first is still running
        briefs.called("Task\x00review")
    assert [briefs.feed("Task\x00review", lambda: next(serial)) for _ in range(3)] == [(0, 0)] * 3
    said = []
    for _ in range(3):  # then one after another, each after the last came back
        briefs.called("Task\x00review")
        said.append(briefs.feed("Task\x00review", lambda: next(serial))[0])
    assert said == [0, 0, 3]
