"""How long a Claude Code hook call takes: ``watcher hook PreToolUse`` from process start to answer.

The hook command the installer writes (``watcher hook``: the console script, as PATH finds it) is
run as a process, as the CLI runs it, with a 100-line ``Write`` payload and the security, stuck and
errors watchers attached. Each trial writes a different file (so no finding is deduplicated away)
into a temporary journal. The watcher timed is the one a user has: this checkout's wheel installed
in a fresh venv (``user_install.py``; the development venv's ``.pth`` files cost every interpreter
start a few milliseconds no install pays); the first line says which. ``--dev`` times the
development venv instead (its bytecode compiled first, as an install has it).

    BENCH hook_ms_p50               warm daemon: median wall time of one hook process (target <= 20 ms)
    BENCH hook_ms_p99               warm daemon: 99th percentile over 100 calls (target <= 60 ms)
    BENCH hook_server_ms_p50        warm daemon: the daemon's own share (journaled per call)
    BENCH hook_nodaemon_ms_p50      no daemon: answered by the guard alone, its imports included; the
                                    watchers judge the call after the answer (target <= 80 ms)
    BENCH hook_nodaemon_ms_p99      no daemon: 99th percentile over 20 calls
    BENCH hook_burst_cold_ms_p50    50 concurrent calls with no daemon running (each starts to exit): the
                                    first of them starts one daemon, the rest are answered by the guard
    BENCH hook_burst_cold_ms_p99    their 99th percentile (the hook budget: 2000 ms)
    BENCH hook_burst_daemons        how many daemons the burst started (target: 1)
    BENCH python_start_ms_p50       the floor: ``python -I -S -c pass`` on this machine, for comparison
    BENCH hook_cpu_ms_p50           warm daemon: CPU time (user + system) of the hook process itself
    BENCH hook_nodaemon_cpu_ms_p50  no daemon: the same; CPU time hardly grows with the machine's load,
                                    wall time does (other work takes the cores), so both are shown
    BENCH guard_longest_line_ms     the slowest of the guard's verdicts (in this process) on lines
                                    built to be slow to read: a chain of 200,000 commands, one
                                    command of 500,000 words, a 5 MB word, broken syntax the parser
                                    recovers from in quadratic time; each is answered within
                                    the guard's 1 s read budget plus its parse (target <= 1500 ms)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from user_install import Interpreter, development, installed
from watcher.hooks._settings import HOOK_PROGRAM
from watcher.runtime.journal import Journal

WARM_TRIALS = 100
COLD_TRIALS = 20
BURST = 50
CLIENT: list[str] = []  # exactly the command `watcher hooks install` writes, in the venv timed
OPTIONS = ["--watcher", "security", "--watcher", "stuck", "--watcher", "errors"]


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def _payload(i: int, cwd: str) -> bytes:
    content = "\n".join(
        f"def handler_{i}_{n}(request):\n    return {{'status': {200 + n % 5}, 'id': {n}}}" for n in range(50)
    )
    assert len(content.splitlines()) == 100
    payload = {
        "session_id": f"bench-{i // 10}",
        "transcript_path": f"{cwd}/t.jsonl",
        "cwd": cwd,
        "prompt_id": f"turn-{i // 10}",
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": f"{cwd}/app/handlers_{i}.py", "content": content},
        "tool_use_id": f"toolu_bench{i:04d}",
    }
    return json.dumps(payload).encode()


CPU: dict[str, list[float]] = {"warm": [], "cold": []}


def _time_hook(env: dict[str, str], payload: bytes, kind: str = "") -> float:
    started = time.perf_counter()
    argv = [*CLIENT, "PreToolUse", *OPTIONS]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(payload)
    proc.stdin.close()
    proc.stdout.read()  # the answer; EOF when the hook exits (a detached judge keeps no copy of it)
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)  # reaped here, for its resource usage
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = (time.perf_counter() - started) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"the hook exited {proc.returncode}")
    if kind:
        CPU[kind].append((usage.ru_utime + usage.ru_stime) * 1000)
    return elapsed


def _burst(tmp: str) -> tuple[list[float], int]:
    """``BURST`` cold calls at once on a socket no daemon serves: each call's wall time, daemons started."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WATCHER_")}
    sock = f"{tmp}/burst/serve.sock"
    env.update(WATCHER_SOCKET=sock, WATCHER_JOURNAL=f"{tmp}/burst.sqlite3", WATCHER_SERVE_IDLE="60")
    mark = f"WATCHER_SOCKET={sock}\0".encode()

    def ours() -> dict[int, bytes]:
        found = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) != os.getpid():
                try:
                    if mark in (entry / "environ").read_bytes():
                        found[int(entry.name)] = (entry / "cmdline").read_bytes()
                except OSError:
                    continue
        return found

    started = time.perf_counter()
    calls = [
        subprocess.Popen([*CLIENT, "PreToolUse", *OPTIONS], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        for _ in range(BURST)
    ]
    for i, call in enumerate(calls):
        assert call.stdin is not None
        call.stdin.write(_payload(30_000 + i, tmp))
        call.stdin.close()
    times, daemons = [0.0] * BURST, set()
    waiting = set(range(BURST))
    while waiting:
        daemons |= {pid for pid, cmd in ours().items() if b"watcher\0serve" in cmd}
        for i in list(waiting):
            if calls[i].poll() is not None:
                times[i] = (time.perf_counter() - started) * 1000
                waiting.discard(i)
        time.sleep(0.005)
    for call in calls:
        assert call.stdout is not None
        call.stdout.close()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:  # a daemon started late would show in these seconds
        daemons |= {pid for pid, cmd in ours().items() if b"watcher\0serve" in cmd}
        time.sleep(0.05)
    for pid in sorted(daemons):  # stop what the burst started, by pid: the daemon, then any judge left
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    while ours() and time.monotonic() < deadline:  # the daemon settles its journal
        time.sleep(0.1)
    for pid in ours():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    while ours():
        time.sleep(0.05)
    return times, len(daemons)


def warm_calls(
    timed: Interpreter, env: dict[str, str], tmp: str, trials: int = WARM_TRIALS
) -> tuple[list[float], list[float]]:
    """``trials`` hook calls answered by a warm daemon of ``timed``: each call's wall time, the daemon's share."""
    CLIENT[:] = [str(timed.bin / HOOK_PROGRAM[0]), *HOOK_PROGRAM[1:]]
    daemon = subprocess.Popen(
        [timed.python, "-m", "watcher", "serve", "--idle", "120"], env=env, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 30
        while not Path(env["WATCHER_SOCKET"]).exists():
            if time.monotonic() > deadline:
                raise SystemExit("the daemon did not start")
            time.sleep(0.05)
        for i in range(5):  # warm: imports, the journal, the security engines
            _time_hook(env, _payload(10_000 + i, tmp))
        warm = [_time_hook(env, _payload(i, tmp), "warm") for i in range(trials)]
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=30)
    journal = Journal(env["WATCHER_JOURNAL"], create=False)
    server = [float(r.payload["latency_ms"]) for r in journal.read(0, limit=100_000) if r.kind == "hook"]
    journal.close()
    return warm, server[-trials:]


def _longest_line_ms() -> float:
    """The guard's slowest verdict on lines built to be slow to read (each a harmless ``ls``/``echo``)."""
    from watcher.guard import judge

    lines = ["ls; " * 200_000 + "ls", "echo " + "a " * 500_000, "echo " + "a" * 5_000_000, "for(;;) " * 100_000]
    times = []
    with tempfile.TemporaryDirectory() as cwd:
        for line in lines:
            started = time.perf_counter()
            judge("Bash", {"command": line}, cwd=cwd)
            times.append((time.perf_counter() - started) * 1000)
    return max(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dev", action="store_true", help="time the development venv, not an installed wheel")
    dev = parser.parse_args().dev
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        timed = development() if dev else installed(Path(tmp) / "install")
        CLIENT[:] = [str(timed.bin / HOOK_PROGRAM[0]), *HOOK_PROGRAM[1:]]  # the burst and the cold calls
        print(f"timed: {timed.describe()}", flush=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("WATCHER_")}
        env.update(WATCHER_SOCKET=f"{tmp}/run/serve.sock", WATCHER_JOURNAL=f"{tmp}/journal.sqlite3")
        floor = []
        for _ in range(20):
            started = time.perf_counter()
            subprocess.run([timed.python, "-I", "-S", "-c", "pass"], check=True)
            floor.append((time.perf_counter() - started) * 1000)

        warm, server = warm_calls(timed, env, tmp)

        env["WATCHER_HOOK_DAEMON"] = "0"
        cold = [_time_hook(env, _payload(20_000 + i, tmp), "cold") for i in range(COLD_TRIALS)]
        burst, burst_daemons = _burst(tmp)

    print(f"BENCH hook_ms_p50 {statistics.median(warm):.1f} ms")
    print(f"BENCH hook_ms_p99 {_p(warm, 0.99):.1f} ms")
    print(f"BENCH hook_server_ms_p50 {statistics.median(server):.2f} ms")
    print(f"BENCH hook_nodaemon_ms_p50 {statistics.median(cold):.1f} ms")
    print(f"BENCH hook_nodaemon_ms_p99 {_p(cold, 0.99):.1f} ms")
    print(f"BENCH hook_burst_cold_ms_p50 {statistics.median(burst):.1f} ms")
    print(f"BENCH hook_burst_cold_ms_p99 {_p(burst, 0.99):.1f} ms")
    print(f"BENCH hook_burst_daemons {burst_daemons} daemons")
    print(f"BENCH python_start_ms_p50 {statistics.median(floor):.1f} ms")
    print(f"BENCH hook_cpu_ms_p50 {statistics.median(CPU['warm']):.1f} ms")
    print(f"BENCH hook_nodaemon_cpu_ms_p50 {statistics.median(CPU['cold']):.1f} ms")
    print(f"BENCH guard_longest_line_ms {_longest_line_ms():.0f} ms")
    print(f"BENCH load_average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
