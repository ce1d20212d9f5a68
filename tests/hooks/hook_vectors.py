"""Running a wire-contract vector (``data/wire/*.json``): hook payloads in, answers out.

A vector is a sequence of hook calls of one session. Each call names its ``event``, the
``payload`` fields beyond the common ones (``session_id``, ``cwd``, ``transcript_path``,
``prompt_id`` default to the vector's), the ``answer`` expected on stdout (``null``: nothing), and
optional journal ``commands`` a person submits before it (``inject`` with ``content``; ``accept``
or ``dismiss`` of ``"last-pending"``). A string in an expected answer that starts with ``~`` only
has to occur in the actual one. A vector's optional ``session_end`` lists the evaluations expected
at the session's end (``watcher``, ``decision``, the interjection's ``content``), in the journal.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from watcher.hooks import Desk, HookCall, HookConfig
from watcher.runtime.journal import Journal

DATA = Path(__file__).parent / "data" / "wire"
SESSION_ID = "5c1e7a2b-0000-4000-8000-00000000hook"

Answerer = Callable[[str, dict[str, Any], bytes], "dict[str, Any] | None"]


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def payload(vector: dict[str, Any], call: dict[str, Any], cwd: Path) -> dict[str, Any]:
    base = {
        "session_id": SESSION_ID,
        "transcript_path": str(cwd / "transcript.jsonl"),
        "cwd": str(cwd),
        "prompt_id": "turn-0",
        "permission_mode": "default",
        "hook_event_name": call["event"],
    }
    return {**base, **call.get("payload", {})}


def matches(expected: Any, actual: Any) -> bool:
    if isinstance(expected, str) and expected.startswith("~"):
        return isinstance(actual, str) and expected[1:] in actual
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and expected.keys() == actual.keys()
            and all(matches(v, actual[k]) for k, v in expected.items())
        )
    return bool(expected == actual)


def submit(journal_path: Path, agent: str, commands: list[dict[str, Any]]) -> None:
    """Submit a person's commands the way the editor and the notebook panel do: into the journal."""
    journal = Journal(journal_path)
    try:
        for command in commands:
            session = f"{agent}:{SESSION_ID}"
            if command.get("session", "").startswith("child:"):
                session += "/" + command["session"].removeprefix("child:")
            target = ""
            if command.get("interjection") == "last-pending":
                rows = [r for r in journal.read(0, session=session) if r.kind == "interjection"]
                pending = [r for r in rows if r.payload["status"] == "pending"]
                target = pending[-1].payload["interjection"]["id"]
            body = {"content": command["content"]} if "content" in command else {}
            journal.submit_command(session, command["kind"], target, watcher=command.get("watcher", ""), payload=body)
    finally:
        journal.close()


def run_with_desk(vector: dict[str, Any], tmp: Path) -> list[tuple[Any, Any]]:
    """Every call through one long-lived desk, as the daemon answers them: (expected, actual) pairs."""
    config = HookConfig.from_dict({**vector.get("config", {}), "agent": vector.get("agent", "claude")})
    journal_path = tmp / "journal.sqlite3"

    async def run() -> list[tuple[Any, Any]]:
        journal = Journal(journal_path)
        desk = Desk(journal)
        out = []
        try:
            for call in vector["calls"]:
                if call.get("commands"):
                    await asyncio.to_thread(journal.flush)  # what the person reacts to is on disk
                    await asyncio.to_thread(submit, journal_path, config.agent, call["commands"])
                hook = HookCall(config.agent, call["event"], payload(vector, call, tmp))
                answer = await desk.handle(hook, config)
                out.append((call["answer"], answer.wire(hook.event, hook.agent)))
        finally:
            await desk.close()
            journal.close()
        return out

    return asyncio.run(run())


def run_each_alone(vector: dict[str, Any], tmp: Path, answer: Answerer) -> list[tuple[Any, Any]]:
    """Every call judged from scratch (no daemon): the history comes back from the journal."""
    options = {
        **vector.get("config", {}),
        "agent": vector.get("agent", "claude"),
        "journal": str(tmp / "journal.sqlite3"),
    }
    out = []
    for call in vector["calls"]:
        if call.get("commands"):
            submit(tmp / "journal.sqlite3", options["agent"], call["commands"])
        raw = json.dumps(payload(vector, call, tmp)).encode()
        out.append((call["answer"], answer(call["event"], options, raw)))
    return out


def session_end_evaluations(journal_path: Path, agent: str) -> list[dict[str, Any]]:
    """The journaled evaluations at the hooked session's end: watcher, decision, interjection content."""
    journal = Journal(journal_path, create=False)
    try:
        rows = journal.read(0, limit=100_000, session=f"{agent}:{SESSION_ID}")
    finally:
        journal.close()
    return [
        {
            "watcher": row.watcher,
            "decision": row.payload["decision"],
            "content": ((row.payload.get("interjection") or {}).get("content") or ""),
        }
        for row in rows
        if row.kind == "evaluation" and row.payload["breakpoint"] == "session_end"
    ]
