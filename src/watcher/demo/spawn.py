"""``make demo`` (spawn part): one supervised spawn end to end, offline, through to a pull request.

A throwaway repository with a loopback forge as ``origin``; the task asks an agent to add a
``login()``; the model is *scripted* (a stub server on 127.0.0.1 answers as the model would) and
first writes SQL spliced from user input. The security watcher interrupts the running agent, the
agent fixes the query, and the branch is pushed and proposed. The agent is the real Claude Code
CLI when ``make clis`` installed it, else the fake CLI replaying a recorded Claude Code stream of
the same story (or when ``WATCHER_DEMO_FAKE_CLI`` is set); the demo says which.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from watcher.runtime.journal import Journal
from watcher.settings import Settings
from watcher.spawn import SpawnConfig, run_spawn
from watcher.spawn.monitor import ProgressState
from watcher.testing import LoopbackForge, StubAnthropicServer
from watcher.testing.fake_cli import launcher
from watcher.testing.scripted_agents import LoginTask

TASK = "Add a login(username, password) to src/auth/login.js that checks the users table with db.query, and commit it."
CLAUDE = Path(__file__).resolve().parents[3] / "node_modules" / ".bin" / "claude"
RECORDED = Path(__file__).parents[1] / "testing" / "data" / "claude_login_stream.jsonl"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


def _repository(root: Path, forge: LoopbackForge) -> Path:
    repo = root / "shop"
    (repo / "src").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "dev@example.com")
    _git(repo, "config", "user.name", "Dev")
    (repo / "README.md").write_text("# shop\n")
    (repo / "src" / "db.js").write_text("module.exports = { query: async () => [] };\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "init")
    _git(repo, "remote", "add", "origin", forge.create_repo("acme", "shop", seed=repo))
    return repo


def _progress(state: ProgressState) -> None:
    print("  " + state.line(), flush=True)


async def _run(root: Path, settings: Settings) -> int:
    with LoopbackForge() as forge, StubAnthropicServer(*LoginTask("claude").replies()) as stub:
        repo = _repository(root, forge)
        env = {"PATH": settings.environ.get("PATH", os.defpath), "GITHUB_TOKEN": "loopback-token"}
        env |= {"ANTHROPIC_BASE_URL": stub.root_url, "ANTHROPIC_API_KEY": "sk-ant-offline-demo"}
        if CLAUDE.exists() and not settings.demo_fake_cli:
            print(f"Agent: the real Claude Code CLI ({CLAUDE}), talking to a scripted model on {stub.root_url}")
            cli = str(CLAUDE)
        else:
            why = (
                "WATCHER_DEMO_FAKE_CLI is set"
                if CLAUDE.exists()
                else "npm is not available, so the real CLI is not installed"
            )
            print(f"Agent: the fake CLI replaying a recorded Claude Code stream ({why})")
            cli = str(launcher(RECORDED, root))
        print(f"Task: {TASK}\nWatchers: security, stuck, errors (offline rules)\n")
        journal = Journal(root / "journal.sqlite3")
        try:
            result = await run_spawn(
                SpawnConfig(
                    TASK, agent="claude", repo=repo, cli_path=cli, forge_api=forge.api_url, env=env,
                    journal=journal, idle_timeout_s=30, total_timeout_s=120, on_progress=_progress,
                )
            )  # fmt: skip
            journal.flush()
            kinds = [row.kind for row in journal.read(session=f"spawn-{result.id}", limit=10_000)]
        finally:
            journal.close()
        print()
        for item in result.interjections:
            print(f"Interjection ({item['watcher']}, {'urgent' if item['urgent'] else 'queued'}, {item['via']}):")
            print("  " + item["content"].splitlines()[0][:160])
        print()
        print(result.markdown())
        for pull in forge.pulls:
            print(
                f"Loopback forge received PR #{pull['number']}: {pull['head']} -> {pull['base']} ({pull['head_sha'][:10]})"
            )
        spawn_kinds = [k for k in dict.fromkeys(kinds) if k not in ("observation", "evaluation", "watcher", "session")]
        print("Journal events: " + ", ".join(f"{k} x{kinds.count(k)}" for k in spawn_kinds))
        return 0 if result.ok and result.pr else 1


def main() -> int:
    print("== watcher spawn: one supervised agent run, worktree to pull request (offline, scripted model) ==\n")
    with tempfile.TemporaryDirectory(prefix="watcher-spawn-demo-") as root:
        return asyncio.run(_run(Path(root), Settings.from_env()))


if __name__ == "__main__":
    sys.exit(main())
