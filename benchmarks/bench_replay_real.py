"""How fast the transcript readers turn a real agent transcript into observations.

Reads the largest file of the shared corpus of real transcripts (``../shared/corpus/transcripts``
beside this checkout; it is never copied into the repository) with format detection, as
``watcher replay`` does, several times, and reports observations per second of the best run.
Skips with a message when the corpus is not there.

    BENCH replay_real_obs_per_s   observations read per second (target >= 20,000)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from watcher.transcripts import read_file

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus" / "transcripts"
RUNS = 20


def main() -> int:
    files = [p for p in CORPUS.rglob("*") if p.is_file() and p.suffix != ".md"] if CORPUS.is_dir() else []
    if not files:
        print(f"bench_replay_real: skipped, no transcript corpus at {CORPUS.resolve()}", file=sys.stderr)
        return 0
    largest = max(files, key=lambda p: p.stat().st_size)
    best = float("inf")
    observations = 0
    for _ in range(RUNS):
        started = time.perf_counter()
        transcript = read_file(largest)
        best = min(best, time.perf_counter() - started)
        observations = len(transcript.observations)
    print(
        f"# {largest.name}: {largest.stat().st_size} bytes, {transcript.format}, {observations} observations, "
        f"best of {RUNS} runs {best * 1000:.1f} ms",
        file=sys.stderr,
    )
    print(f"BENCH replay_real_obs_per_s {observations / best:.0f} obs/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
