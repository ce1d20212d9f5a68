"""What watching costs a notebook: per-cell latency with three watchers vs. the same kernel without.

Two real ipykernels of this interpreter run side by side: one plain, one with ``%load_ext watcher``
and three watchers (security, errors, stuck; offline rules, journaling to a temporary file). Cells
are sent alternately to both over ZeroMQ, as a frontend sends them, and timed from the request to
the ``execute_reply``.

    BENCH cell_overhead_ms_p50   median added latency of a trivial cell (target <= 1 ms)
    BENCH cell_overhead_ratio    total time of 500 one-millisecond cells, watched / plain (target <= 1.05)
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from jupyter_client.manager import start_new_kernel

TRIVIAL = 300
SLEEPY = 500
CHUNK = 50


def _kernelspec(root: Path) -> str:
    folder = root / "kernels" / "watcher-bench"
    folder.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "bench",
        "language": "python",
    }
    (folder / "kernel.json").write_text(json.dumps(spec))
    return "watcher-bench"


def _run(kc: Any, code: str) -> float:
    """Seconds from sending ``code`` to its execute_reply; raises if the cell failed."""
    started = time.perf_counter()
    msg_id = kc.execute(code, store_history=True)
    while True:
        reply = kc.get_shell_msg(timeout=30)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    elapsed = time.perf_counter() - started
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"benchmark cell failed: {reply['content']}")
    while kc.iopub_channel.msg_ready():  # keep the client's queue short (widget updates included)
        kc.get_iopub_msg(timeout=1)
    return elapsed


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="watcher-bench-") as tmp:
        root = Path(tmp)
        name = _kernelspec(root)
        os.environ["JUPYTER_PATH"] = str(root)  # where this process looks the kernelspec up
        env = {**os.environ, "WATCHER_JOURNAL": str(root / "journal.sqlite3")}
        plain_km, plain = start_new_kernel(kernel_name=name, env=env)
        watched_km, watched = start_new_kernel(kernel_name=name, env=env)
        try:
            _run(watched, "%load_ext watcher")
            for line in ("%watch security", "%watch errors", "%watch stuck"):
                _run(watched, line)
            for kc in (plain, watched):  # warm both: first cells import and compile
                for _ in range(20):
                    _run(kc, "x = 1")
                _run(kc, "import time")
            trivial: dict[str, list[float]] = {"plain": [], "watched": []}
            for i in range(TRIVIAL):
                order = (("plain", plain), ("watched", watched)) if i % 2 else (("watched", watched), ("plain", plain))
                for label, kc in order:
                    trivial[label].append(_run(kc, f"x = {i}"))
            sleepy = {"plain": 0.0, "watched": 0.0}
            for start in range(0, SLEEPY, CHUNK):
                order = (
                    (("plain", plain), ("watched", watched))
                    if start // CHUNK % 2
                    else (("watched", watched), ("plain", plain))
                )
                for label, kc in order:
                    began = time.perf_counter()
                    for _ in range(CHUNK):
                        _run(kc, "time.sleep(0.001)")
                    sleepy[label] += time.perf_counter() - began
            _run(watched, "%watchers")
        finally:
            for km, kc in ((plain_km, plain), (watched_km, watched)):
                kc.stop_channels()
                km.shutdown_kernel(now=True)
    p50 = (statistics.median(trivial["watched"]) - statistics.median(trivial["plain"])) * 1000
    print(
        f"# trivial cell p50: plain {statistics.median(trivial['plain']) * 1000:.3f} ms, watched {statistics.median(trivial['watched']) * 1000:.3f} ms"
    )
    print(f"# {SLEEPY} cells of 1 ms: plain {sleepy['plain']:.3f} s, watched {sleepy['watched']:.3f} s")
    print(f"BENCH cell_overhead_ms_p50 {p50:.3f} ms")
    print(f"BENCH cell_overhead_ratio {sleepy['watched'] / sleepy['plain']:.3f} ratio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
