"""Redaction time on 1 MB of hostile text: redact_ms_p99 (target <= 50 ms).

Redaction runs on every journaled payload and every LLM prompt, on the event loop of a live run,
so its worst case matters more than its average. Each family below is 1 MB built to defeat one
kind of pattern: long runs of word characters (the run that once made one pattern quadratic, 15 s
for 150 KB), a secret keyword repeated without an assignment, assignments that never end, key
prefixes repeated inside one token, an unterminated private key, random base64/hex, digits, and
text dense in every provider's prefix. Every family is redacted ROUNDS times; the figure is the
99th percentile of all those calls, in wall-clock milliseconds, and in thread CPU time (the
slowest family is named).
"""

from __future__ import annotations

import random
import statistics
import string
import time

from watcher.core.redact import redact

SIZE = 1_000_000
ROUNDS = 7


def _families() -> dict[str, str]:
    rnd = random.Random(9)
    prefixes = "sk-ant- sk-proj- ghp_ github_pat_ xoxb- AKIA AIza glpat- sk_live_ SG. npm_ pypi- eyJ sq0csp- AKC ://x:"
    return {
        "word run": "a" * SIZE,
        "keyword run": "token" * (SIZE // 5 - 1) + "=x",
        "open assignments": ("password=" + "x" * 7 + " ") * (SIZE // 17),
        "never-closed quote": "api_key = '" + "x" * (SIZE - 11),
        "prefixes in one token": ("sk-" * 5 + "eyJ" * 5 + "ghp_" * 5) * (SIZE // 50),
        "unterminated private key": "-----BEGIN RSA PRIVATE KEY-----\n" + "-" * SIZE,
        "random base64": "".join(rnd.choices(string.ascii_letters + string.digits + "+/=_-.:", k=SIZE)),
        "random hex": "".join(rnd.choices("0123456789abcdef", k=SIZE)),
        "digits": "1" * SIZE,
        "every prefix": "".join(rnd.choice(prefixes.split()) + " " for _ in range(SIZE // 8))[:SIZE],
    }


def main() -> None:
    timings: list[float] = []
    cpu: list[float] = []
    worst: dict[str, float] = {}
    for name, text in _families().items():
        for _ in range(ROUNDS):
            started, started_cpu = time.perf_counter(), time.thread_time()
            redact(text)
            elapsed = (time.perf_counter() - started) * 1000
            timings.append(elapsed)
            cpu.append((time.thread_time() - started_cpu) * 1000)
            worst[name] = max(worst.get(name, 0.0), elapsed)
    slowest = max(worst, key=lambda k: worst[k])
    print(f"BENCH redact_ms_p99 {_p99(timings):.1f} ms")
    # the same calls in thread CPU time: what the figure is on an idle machine (wall time on a
    # shared one includes waiting for a core)
    print(f"BENCH redact_cpu_ms_p99 {_p99(cpu):.1f} ms")
    print(f"BENCH redact_ms_median {statistics.median(timings):.1f} ms")
    print(f"# slowest family: {slowest} ({worst[slowest]:.1f} ms); {len(timings)} calls on 1 MB each")


def _p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[98]


if __name__ == "__main__":
    main()
