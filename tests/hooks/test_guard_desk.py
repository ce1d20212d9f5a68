"""The guard in the hook path: it answers whatever evaluator the watchers use, and an evaluator that
cannot work is told to the session and journaled for ``hooks status`` (a real desk and journal)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from watcher.hooks import Desk, HookCall, HookConfig
from watcher.hooks._status import last_session_summary
from watcher.runtime.journal import Journal
from watcher.testing import Reply, StubAnthropicServer


def _calls(tmp_path: Path, config: HookConfig, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def run() -> list[Any]:
        journal = Journal(tmp_path / "journal.sqlite3")
        desk = Desk(journal)
        try:
            out = []
            for event, fields in calls:
                payload = {
                    "session_id": "s-1",
                    "cwd": str(tmp_path),
                    "prompt_id": "p",
                    "hook_event_name": event,
                    **fields,
                }
                answer = await desk.handle(HookCall(config.agent, event, payload), config)
                out.append(answer.wire(event, config.agent))
            return out
        finally:
            await desk.close()
            journal.close()

    return asyncio.run(run())


def test_without_a_key_the_rules_judge_the_guard_denies_and_the_session_is_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    config = HookConfig(evaluator="anthropic", roles=("security", "stuck"))
    started, denied, plain = _calls(
        tmp_path,
        config,
        [
            ("SessionStart", {"source": "startup"}),
            ("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "rm -rf ~/"}, "tool_use_id": "t1"}),
            ("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t2"}),
        ],
    )
    told = started["hookSpecificOutput"]["additionalContext"]
    assert told.startswith("[watcher] the anthropic evaluator needs an API key and ANTHROPIC_API_KEY is not set")
    assert "offline rules instead" in told
    print(denied)
    reason = denied["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("[watcher guard] [destructive-delete]") and "ANTHROPIC_API_KEY" not in reason  # told once
    assert plain is None
    summary = last_session_summary(tmp_path / "journal.sqlite3")
    assert summary is not None and summary["answers"] == {"context": 1, "deny": 1, "none": 1}
    assert any("ANTHROPIC_API_KEY is not set" in p for p in summary["problems"])


def test_a_denied_call_is_denied_again_and_still_observed(tmp_path: Path) -> None:
    rm = ("PreToolUse", {"tool_name": "Read", "tool_input": {"file_path": "~/.aws/credentials"}, "tool_use_id": "t"})
    first, second = _calls(tmp_path, HookConfig(roles=("stuck",)), [rm, rm])
    assert first == second and "[secret-read]" in first["hookSpecificOutput"]["permissionDecisionReason"]
    journal = Journal(tmp_path / "journal.sqlite3", create=False)
    try:
        kinds = [r.kind for r in journal.read(0, limit=1000)]
    finally:
        journal.close()
    assert kinds.count("observation") >= 2  # the stuck role sees a retried denial


def test_the_status_summary_is_of_the_newest_session_and_its_subagents_only(tmp_path: Path) -> None:
    ls = {"tool_name": "Bash", "tool_input": {"command": "ls"}}

    async def run() -> None:
        journal = Journal(tmp_path / "journal.sqlite3")
        desk = Desk(journal)
        config = HookConfig(roles=("stuck",))
        try:
            calls = [("old", {}), ("old", {}), ("old", {}), ("new", {}), ("new", {"agent_id": "helper"})]
            for i, (session, extra) in enumerate(calls):
                payload = {"session_id": session, "cwd": str(tmp_path), "hook_event_name": "PreToolUse"}
                payload |= {**ls, "tool_use_id": f"t{i}", **extra}
                await desk.handle(HookCall(config.agent, "PreToolUse", payload), config)
        finally:
            await desk.close()
            journal.close()

    asyncio.run(run())
    summary = last_session_summary(tmp_path / "journal.sqlite3")
    assert summary is not None
    assert summary["session"] == "claude:new" and summary["hook_calls"] == 2  # its subagent's call counts


def test_a_model_failing_every_call_leaves_the_roles_rules_judging_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An LLM watcher whose every call fails: its role's offline rules judge each of its evaluations
    (the finding reaches the session), and the session is told why."""
    injectable = 'def find(conn, name):\n    return conn.execute("SELECT * FROM t WHERE n = \'" + name + "\'")\n'
    write = {"tool_name": "Write", "tool_input": {"file_path": f"{tmp_path}/db.py", "content": injectable}}
    with StubAnthropicServer(default_reply=Reply.error(500, "api_error", should_retry=False)) as stub:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.root_url)
        config = HookConfig(evaluator="anthropic", roles=("security",))
        (answer,) = _calls(tmp_path, config, [("PreToolUse", {**write, "tool_use_id": "t1"})])
    told = answer["hookSpecificOutput"]["additionalContext"]
    assert "[watcher security] [warning] SQL built by string formatting" in told, told  # the rules' finding
    assert "evaluation failed (EvaluationError); its offline rules judge in its place" in told
