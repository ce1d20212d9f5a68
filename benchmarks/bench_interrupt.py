"""How fast an urgent interjection stops an agent's streamed response.

One agent run talks to ``StubAnthropicServer`` through the real ``anthropic`` SDK. Every turn
is a stream that keeps sending text deltas (``Reply.endless``) until the client hangs up. As soon
as a turn's first delta reaches the display, an urgent interjection is injected; the run cancels
the task streaming the response (the SDK closes the connection) and starts the next turn with it.

    BENCH interrupt_ms_p50       median time from the urgent inject() to the cancelled stream (target <= 50 ms)
    BENCH interrupt_ms_p99       99th percentile of the same, over 100 trials (target <= 200 ms)
    BENCH interrupt_wire_ms_p50  from the inject() to the stub seeing the disconnect (includes its 2 ms write interval)
"""

from __future__ import annotations

import asyncio
import math
import statistics
import time

from watcher.agents import RunEvent, agent
from watcher.testing import Reply, StubAnthropicServer

TRIALS = 100
WARMUP = 3
INTERVAL_S = 0.002


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


async def main() -> None:
    injected: list[float] = []
    stepped: set[int] = set()
    holder: dict[str, object] = {}
    with StubAnthropicServer() as stub:
        stub.push(*[Reply.endless(interval_s=INTERVAL_S) for _ in range(WARMUP + TRIALS)], Reply.text("Stopped."))

        async def display(event: RunEvent) -> None:
            step = int(event.data.get("step", 0))
            if event.kind == "text" and step not in stepped and step <= WARMUP + TRIALS:
                stepped.add(step)
                injected.append(time.perf_counter())
                holder["run"].guide(f"stop ({step})", urgent=True)  # type: ignore[attr-defined]

        run = agent(
            "count",
            base_url=stub.base_url,
            api_key="bench",
            max_retries=0,
            max_steps=WARMUP + TRIALS + 1,
            output=display,
        )
        holder["run"] = run
        result = await run
        disconnects = list(stub.disconnects)
    assert result.status == "completed" and result.interrupts == WARMUP + TRIALS, result
    cancelled = list(result.interrupt_ms[WARMUP:])
    wire = [(d - i) * 1000 for i, d in zip(injected[WARMUP:], disconnects[WARMUP:], strict=True)]
    print(f"BENCH interrupt_ms_p50 {statistics.median(cancelled):.2f} ms")
    print(f"BENCH interrupt_ms_p99 {_p(cancelled, 0.99):.2f} ms")
    print(f"BENCH interrupt_wire_ms_p50 {statistics.median(wire):.2f} ms")


if __name__ == "__main__":
    asyncio.run(main())
