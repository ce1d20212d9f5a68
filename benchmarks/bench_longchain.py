"""Long-chain benchmark throughput: the default simulated suite through the whole harness.

longchain_tasks_per_s (the issue's figure): tasks per second of the default suite — 200 tasks,
chain lengths 4, 8 and 12, under all four conditions (800 tasks) — through the agent SDK, the
simulated server (a child process speaking the chat-completions API), the tools, the status
computation and the watcher; target: the suite in under 60 s on a 2-core machine.
longchain_suite_s: that suite's wall-clock time. The load average is printed with it, since the
machine may be shared; longchain_suite_cpu_s, the CPU time of the harness and the server process
together, is the steadier figure there (on an idle 2-core machine the wall time is about half of
it or less, the two processes running side by side). The figures are of the harness on simulated
models, not of any model.
"""

from __future__ import annotations

import asyncio
import os
import resource
import time

from watcher.bench import SuiteConfig, run_suite, summarize


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the simulated server)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    config = SuiteConfig()  # the CLI's defaults
    load = os.getloadavg()[0]
    cpu = _cpu()
    started = time.perf_counter()
    rows = asyncio.run(run_suite(config))
    elapsed = time.perf_counter() - started
    cpu = _cpu() - cpu
    assert len(rows) == config.tasks * len(config.conditions)
    rates = ", ".join(f"{s.condition} {s.rate:.0%}" for s in summarize(rows))
    print(
        f"# simulated models; {len(rows)} tasks; success {rates}; load average {load:.2f} -> {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    print(f"BENCH longchain_tasks_per_s {len(rows) / elapsed:.1f} tasks/s")
    print(f"BENCH longchain_suite_s {elapsed:.1f} s")
    print(f"BENCH longchain_suite_cpu_s {cpu:.1f} s")


if __name__ == "__main__":
    main()
