"""What an idle ``watcher-lsp`` costs with many workspace folders, and how soon it still shows news.

A real ``watcher-lsp`` subprocess and a real LSP client (pygls, over stdio) on 60 workspace
folders, 30 of them with a journal (each holding a few findings). Once every journal's findings
are shown, the server's CPU time (``/proc/PID/stat``) is measured over 10 idle seconds. Then,
after some idle seconds each time, one finding is committed to one journal and timed until the
client receives its diagnostic: an idle server may poll more slowly, but not past the latency the
README promises (``lsp_diag_ms_p99`` <= 400 ms).

    BENCH lsp_idle_cpu_pct_60_folders <pct> %   (CPU of one core, idle; target <= 2)
    BENCH lsp_idle_finding_ms_max <ms> ms         (the slowest of 5 findings after idle; target <= 400)
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from watcher.core.interjection import Interjection, Location
from watcher.runtime.events import InterjectionEvent
from watcher.runtime.journal import Journal

FOLDERS = 60
MEASURE_S = 10.0
IDLE_S = 3.0
FINDINGS_AFTER_IDLE = 5


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _commit(folder: Path, ident: str) -> None:
    """One finding on ``a.py`` of ``folder``, committed to its journal."""
    with Journal(folder / ".watcher" / "journal.sqlite3") as journal:
        interjection = Interjection(
            content=f"finding {ident}",
            severity="warning",
            locations=(Location(path="a.py"),),
            watcher="bench",
            id=ident,
        )
        journal.append(InterjectionEvent(session="bench", watcher="bench", interjection=interjection, status="queued"))
        journal.flush()


async def _wait(condition: object, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError("the server did not show the findings in time")
        await asyncio.sleep(0.01)


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folders = [Path(tmp) / f"folder{i:02d}" for i in range(FOLDERS)]
        with_journal = folders[::2]
        for folder in folders:
            (folder / ".git").mkdir(parents=True)
            (folder / "a.py").write_text("x = 1\n")
        for n, folder in enumerate(with_journal):
            _commit(folder, f"old-{n}")
        env = {k: v for k, v in os.environ.items() if k != "WATCHER_JOURNAL"}
        config = ClientServerConfig(
            [sys.executable, "-m", "watcher.lsp_bridge", "--log-level", "WARNING"], server_env=env
        )
        client: LanguageClient = await config.start()
        client.feature("watcher/interjection")(lambda params: None)
        await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                workspace_folders=[types.WorkspaceFolder(f.as_uri(), f.name) for f in folders],
            )
        )
        try:
            uris = [(f / "a.py").as_uri() for f in with_journal]
            await _wait(lambda: all(client.diagnostics.get(uri) for uri in uris))
            assert client._server is not None
            pid = client._server.pid
            await asyncio.sleep(1.0)  # settled: start-up work done
            cpu, wall = _cpu_seconds(pid), time.perf_counter()
            await asyncio.sleep(MEASURE_S)
            idle_pct = (_cpu_seconds(pid) - cpu) / (time.perf_counter() - wall) * 100
            latencies = []
            for n in range(FINDINGS_AFTER_IDLE):
                await asyncio.sleep(IDLE_S)
                folder = with_journal[(7 * n + 3) % len(with_journal)]
                uri = (folder / "a.py").as_uri()
                await asyncio.to_thread(_commit, folder, f"new-{n}")
                committed = time.perf_counter()
                await _wait(lambda: len(client.diagnostics.get(uri, [])) >= 2, within=10)  # noqa: B023
                latencies.append((time.perf_counter() - committed) * 1000)
        finally:
            await client.shutdown_session()
            await client.stop()
        print(f"BENCH lsp_idle_cpu_pct_60_folders {idle_pct:.2f} %")
        print(f"BENCH lsp_idle_finding_ms_max {max(latencies):.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
