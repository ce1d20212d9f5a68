"""What a spawn costs and how reliably it ends where it should (real git, loopback forge, offline).

BENCH spawn_provision_ms     median time to a ready worktree (branch + git worktree add); ours <= 500 ms
BENCH spawn_pr_ms            median push + pull request on the loopback forge; ours <= 1000 ms
BENCH spawn_overhead_ratio   wall time of a supervised run with three watchers / the bare CLI on the
                             same scripted task, alternated; target <= 1.10. The real Claude Code
                             CLI when installed, else the fake CLI (then labelled simulated)
BENCH spawn_scenarios_ok     scripted scenarios that ended in their expected outcome, of all of them (target: all)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from watcher.runtime.journal import Journal
from watcher.spawn import SpawnConfig, provision, run_spawn
from watcher.spawn.claude import ClaudeCode
from watcher.spawn.integrate import commit_leftovers, open_pull_request, push
from watcher.spawn.manifest import infer_manifest
from watcher.spawn.provision import remove
from watcher.testing import LoopbackForge, StubAnthropicServer
from watcher.testing.fake_cli import launcher
from watcher.testing.scripted_agents import CommitTask
from watcher.testing.spawn_scenarios import SCENARIOS

CLAUDE = Path(__file__).resolve().parents[1] / "node_modules" / ".bin" / "claude"
TASK = "Write NOTES.md with a heading and commit it."


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


def _repo(root: Path, forge: LoopbackForge, name: str) -> Path:
    repo = root / name
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "b@example.com")
    _git(repo, "config", "user.name", "bench")
    (repo / "README.md").write_text("# bench\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "init")
    _git(repo, "remote", "add", "origin", forge.create_repo("bench", name, seed=repo))
    return repo


def bench_provision(root: Path, forge: LoopbackForge) -> float:
    repo = _repo(root, forge, "provision")
    times = []
    for _ in range(15):
        sandbox = provision(repo)
        times.append(sandbox.provision_ms)
        remove(sandbox, delete_branch=True)
    return statistics.median(times)


def bench_pr(root: Path, forge: LoopbackForge) -> float:
    repo = _repo(root, forge, "pr")
    times = []
    for i in range(7):
        sandbox = provision(repo)
        (sandbox.worktree / f"f{i}.txt").write_text("x\n")
        commit_leftovers(sandbox)
        started = time.perf_counter()
        push(sandbox, "origin")
        open_pull_request(
            forge.api_url, "bench", "pr", token="t", title="t", body="b", head=sandbox.branch, base="main"
        )
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _fake_script(root: Path) -> Path:
    records = [
        {"type": "system", "subtype": "init", "cwd": "@CWD@", "session_id": "s1"},
        {"fake": "sleep", "s": 0.5},  # stands for the model's latency
        {"fake": "write", "path": "NOTES.md", "content": "# Notes\n"},
        {"type": "result", "subtype": "success", "result": "done", "session_id": "s1", "permission_denials": []},
    ]
    path = root / "bench_script.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


async def _supervised(repo: Path, cli: str, env: dict[str, str]) -> float:
    journal = Journal(repo.parent / "bench-journal.sqlite3")
    started = time.perf_counter()
    result = await run_spawn(
        SpawnConfig(
            TASK, repo=repo, cli_path=cli, env=env, pr=False, journal=journal, watchers=("security", "stuck", "errors")
        )
    )
    elapsed = time.perf_counter() - started
    journal.close()
    assert result.ok, result.detail
    return elapsed


def _bare(repo: Path, cli: str, env: dict[str, str]) -> float:
    adapter = ClaudeCode()
    manifest = infer_manifest(TASK)
    sandbox = provision(repo)
    started = time.perf_counter()
    child_env = adapter.environment(sandbox, manifest, env)
    argv = adapter.argv(cli, sandbox, manifest, TASK, resume=None)
    task_line = json.dumps(adapter.message(TASK)) + "\n"
    subprocess.run(
        argv,
        cwd=sandbox.worktree,
        env=child_env,
        input=task_line,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return time.perf_counter() - started


def bench_overhead(root: Path, forge: LoopbackForge, pairs: int = 5) -> tuple[float, str]:
    """Supervised spawn / bare CLI, ``pairs`` times, alternating which runs first (the machine is shared)."""
    repo = _repo(root, forge, "overhead")
    real = CLAUDE.exists()
    ratios = []
    for n in range(pairs):
        with contextlib.ExitStack() as stubs:
            if real:
                one = stubs.enter_context(StubAnthropicServer(*CommitTask("claude").replies()))
                two = stubs.enter_context(StubAnthropicServer(*CommitTask("claude").replies()))
                env = {"PATH": os.environ["PATH"], "ANTHROPIC_API_KEY": "sk-ant-bench"}
                bare_env = {**env, "ANTHROPIC_BASE_URL": one.root_url}
                supervised_env = {**env, "ANTHROPIC_BASE_URL": two.root_url}
                cli = str(CLAUDE)
            else:
                cli = str(launcher(_fake_script(root), root))
                bare_env = supervised_env = {"PATH": os.environ["PATH"]}
            if n % 2:
                supervised = asyncio.run(_supervised(repo, cli, supervised_env))
                bare = _bare(repo, cli, bare_env)
            else:
                bare = _bare(repo, cli, bare_env)
                supervised = asyncio.run(_supervised(repo, cli, supervised_env))
        ratios.append(supervised / bare)
        print(f"  pair {n}: bare {bare:.2f}s, supervised {supervised:.2f}s", file=sys.stderr)
    label = "real Claude Code CLI" if real else "simulated: fake CLI, npm absent"
    return statistics.median(ratios), f"median of {pairs} pairs, {label}"


async def _scenario(scenario, root: Path, forge: LoopbackForge, index: int) -> bool:  # type: ignore[no-untyped-def]
    repo = _repo(root, forge, f"scenario{index}")
    if scenario.prepare is not None:
        scenario.prepare(repo)
    cli = str(launcher(scenario.script(root), root, name=f"fake-{index}"))
    options = {"idle_timeout_s": 10.0, "total_timeout_s": 30.0, **scenario.options}
    env = {"PATH": os.environ["PATH"], "GITHUB_TOKEN": "t"}
    result = await run_spawn(
        SpawnConfig(scenario.task, repo=repo, cli_path=cli, forge_api=forge.api_url, env=env, **options)
    )
    if result.status != scenario.expected:
        print(
            f"  scenario {scenario.name}: expected {scenario.expected}, got {result.status} ({result.detail})",
            file=sys.stderr,
        )
    return result.status == scenario.expected


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="watcher-bench-spawn-") as tmp, LoopbackForge() as forge:
        root = Path(tmp)
        print(f"BENCH spawn_provision_ms {bench_provision(root, forge):.1f} ms")
        print(f"BENCH spawn_pr_ms {bench_pr(root, forge):.1f} ms")
        ratio, label = bench_overhead(root, forge)
        print(f"BENCH spawn_overhead_ratio {ratio:.3f} ratio ({label})")
        ok = sum(asyncio.run(_scenario(s, root, forge, i)) for i, s in enumerate(SCENARIOS))
        print(f"BENCH spawn_scenarios_ok {ok}/{len(SCENARIOS)} scenarios")


if __name__ == "__main__":
    main()
