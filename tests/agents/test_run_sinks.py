"""The run's output fans out to every sink at once; a slow one never starves the others (seed 004)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from run_helpers import start

from watcher.agents import RunEvent
from watcher.runtime import Journal
from watcher.testing import Reply, StubAnthropicServer

SLOW_S = 0.02


async def test_a_slow_sink_does_not_starve_the_display_the_watchers_or_the_journal(tmp_path: Path) -> None:
    text = " ".join(f"word{i}" for i in range(600))
    quick: list[tuple[float, RunEvent]] = []
    slow: list[tuple[float, RunEvent]] = []
    blocking: list[tuple[float, RunEvent]] = []

    async def slow_sink(event: RunEvent) -> None:
        await asyncio.sleep(SLOW_S)
        slow.append((time.perf_counter(), event))

    def blocking_sink(event: RunEvent) -> None:  # blocks its worker thread, never the event loop
        time.sleep(SLOW_S)
        blocking.append((time.perf_counter(), event))

    async def quick_sink(event: RunEvent) -> None:
        quick.append((time.perf_counter(), event))

    journal = Journal(tmp_path / "journal.sqlite3")
    with StubAnthropicServer(Reply.text(text)) as stub:
        result = await start(stub, "talk", output=[slow_sink, blocking_sink, quick_sink], journal=journal, name="sinks")
    assert result.status == "completed"

    deltas = [e for _, e in quick if e.kind == "text"]
    assert "".join(e.text for e in deltas) == text, "the quick sink saw all the text"
    for received in (slow, blocking):
        chunks = [e for _, e in received if e.kind == "text"]
        assert "".join(e.text for e in chunks) == text, "a slow sink loses no text: its backlog is coalesced"
        assert len(chunks) <= len(deltas)
        assert received[-1][1].kind == "status"
    first_delta = quick[0][0]
    quick_done = next(t for t, e in quick if e.kind == "turn_end")
    assert quick_done < min(slow[-1][0], blocking[-1][0]), "the quick sink was not held back by the slow ones"
    uncoalesced = len(text.split()) // 3 * SLOW_S  # the stub streams about three words per delta
    assert slow[-1][0] - first_delta < uncoalesced and blocking[-1][0] - first_delta < uncoalesced

    said = [r.payload["observation"] for r in journal.read(session="sinks") if r.kind == "observation"]
    assert {"kind": "assistant_message", "text": text} in [{k: o[k] for k in ("kind", "text") if k in o} for o in said]
    journal.close()
