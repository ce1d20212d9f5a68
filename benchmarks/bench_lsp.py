"""Latency from an interjection committed to the journal to the editor receiving its diagnostic.

A real ``watcher-lsp`` subprocess and a real LSP client (pygls, over stdio). This process commits
200 interjections one at a time through ``Journal`` (append + flush: the commit), each on its own
file, and times how long until the client receives ``publishDiagnostics`` for that file.

    BENCH lsp_diag_ms_p50 <ms> ms     (target <= 150)
    BENCH lsp_diag_ms_p99 <ms> ms     (target <= 400)
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

from watcher.core.interjection import Interjection, Location
from watcher.runtime.events import InterjectionEvent
from watcher.runtime.journal import Journal

N = 200


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        (repo / ".git").mkdir()
        env = {k: v for k, v in os.environ.items() if k != "WATCHER_JOURNAL"}
        config = ClientServerConfig(
            [sys.executable, "-m", "watcher.lsp_bridge", "--log-level", "WARNING"], server_env=env
        )
        client = await config.start()
        client.feature("watcher/interjection")(lambda params: None)  # announced too; not measured here
        await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                workspace_folders=[types.WorkspaceFolder(repo.as_uri(), "bench")],
            )
        )
        journal = Journal(repo / ".watcher" / "journal.sqlite3")
        latencies: list[float] = []
        try:
            for i in range(N):
                name = f"f{i}.py"
                (repo / name).write_text("x = 1\n")
                uri = (repo / name).as_uri()
                published = client.protocol.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
                interjection = Interjection(
                    content=f"finding {i}",
                    severity="warning",
                    locations=(Location(path=name),),
                    watcher="bench",
                    id=f"b{i}",
                )
                journal.append(
                    InterjectionEvent(session="bench", watcher="bench", interjection=interjection, status="queued")
                )
                await asyncio.to_thread(journal.flush)
                committed = time.perf_counter()
                params = await asyncio.wait_for(asyncio.wrap_future(published), 10)
                latencies.append((time.perf_counter() - committed) * 1000)
                assert params.uri == uri and params.diagnostics, params
        finally:
            journal.close()
            await client.shutdown_session()
            await client.stop()
        latencies.sort()
        p50 = statistics.median(latencies)
        p99 = latencies[min(len(latencies) - 1, round(0.99 * len(latencies)) - 1)]
        print(f"BENCH lsp_diag_ms_p50 {p50:.1f} ms")
        print(f"BENCH lsp_diag_ms_p99 {p99:.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
