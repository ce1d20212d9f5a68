"""``make demo`` (fleet part): three scripted agent tasks under one fleet, offline, as a timeline.

``waiter`` polls a job that never finishes: the watcher loop nudges it (hint, warning, warning,
critical, critical) and pauses it after the fifth unanswered nudge. ``client`` finds that the API
needs a header; the syncer relays it to ``server`` (a shared tag), never to ``waiter``.
"""

from __future__ import annotations

import asyncio
import itertools
import tempfile
from pathlib import Path

from watcher.agents import tool
from watcher.fleet import Fleet, FleetConfig, TaskSpec
from watcher.runtime.journal import Journal
from watcher.testing import RecordedRequest, Reply, StubAnthropicServer

__all__ = ["main"]


def _bash(command: str) -> str:
    """Run a shell command.

    Args:
        command: the command line
    """
    return "job 42: still running"


def _read(path: str) -> str:
    """Read a file.

    Args:
        path: the file
    """
    return f"contents of {path}"


def _reply(request: RecordedRequest) -> Reply:
    body = request.body or {}
    first = body["messages"][0]["content"]
    prompt = first if isinstance(first, str) else first[0]["text"]
    turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if prompt.startswith("[waiter]"):
        return Reply.tool_use("Bash", {"command": "sleep 1"}, text="Still waiting for job 42.", delay_s=0.03)
    if prompt.startswith("[client]"):
        if turns == 0:
            return Reply.tool_use(
                "Read", {"path": "api/client.py"}, text="Note: found that the API needs the X-Token header."
            )
        return Reply.text("Client done.")
    said = any("<sync-message" in str(m["content"]) for m in body["messages"] if m["role"] == "user")
    if said or turns >= 40:
        return Reply.text("Server done: every request now sends X-Token." if said else "Server done.")
    return Reply.tool_use("Read", {"path": f"api/server{turns}.py"}, delay_s=0.05)


async def _run(journal_path: Path) -> None:
    config = FleetConfig(watch_interval_s=0.05, sync_interval_s=0.05, min_task_age_s=0.0)
    specs = [
        TaskSpec("waiter", "[waiter] wait for job 42", tools=(tool(_bash, name="Bash"),), tags=("ops",), max_steps=200),
        TaskSpec("client", "[client] write the API client", tools=(tool(_read, name="Read"),), tags=("api",)),
        TaskSpec(
            "server", "[server] write the API server", tools=(tool(_read, name="Read"),), tags=("api",), max_steps=60
        ),
    ]
    journal = Journal(journal_path)
    with StubAnthropicServer(*itertools.repeat(Reply.dynamic(_reply), 2000)) as stub:
        fleet = Fleet(specs, config=config, journal=journal, base_url=stub.base_url, api_key="demo")
        await fleet.start()
        for _ in range(500):
            await fleet.roster.refresh()
            if fleet.status("waiter") == "paused" and fleet.status("server") not in ("running", "paused"):
                break
            await asyncio.sleep(0.02)
        await fleet.actions.abort("waiter", "demo over: a person would look at it now", by="person")
        results = await fleet.wait()
    started = None
    print("\n=== A fleet of three scripted agent tasks (offline, against the local stub)")
    for row in journal.read(0, limit=100_000):
        started = started or row.ts
        t = f"+{row.ts - started:5.2f}s"
        p = row.payload
        if row.kind == "watcher_nudge":
            print(f"  {t} {row.session:7} nudge #{p['count']} ({p['severity']}): {p['message']}")
        elif row.kind == "watcher_pause" and not p["resumed"]:
            print(f"  {t} {row.session:7} PAUSED: {p['reason']}")
        elif row.kind == "watcher_abort":
            print(f"  {t} {row.session:7} aborted by {p['by']}: {p['reason']}")
        elif row.kind == "learning_extracted":
            print(f"  {t} {row.session:7} learning ({p['urgency']}): {p['text']}")
        elif row.kind == "sync_message":  # one row may stand for several recipients
            for to in p.get("recipients") or [row.session]:
                print(f"  {t} {to:7} ← sync from {p['source_task']} ({p['status']})")
    print("  results: " + ", ".join(f"{n} {getattr(r, 'status', r)}" for n, r in results.items()))
    s = fleet.stats
    print(
        f"  stats: {s.watcher_cycles} watcher cycles, {s.nudges_sent} nudges, {s.syncs_relayed} syncs relayed, "
        f"{s.tasks_paused} paused, {s.tasks_aborted} aborted"
    )
    journal.close()


def main() -> int:
    """Run the fleet demo in a temporary journal."""
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(_run(Path(folder) / "journal.sqlite3"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
