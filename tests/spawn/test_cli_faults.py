"""The real agent CLIs driven as a careless or hostile user would: pushes to main, a deleted worktree.

Each model is scripted against the stub server; git, the worktree and the loopback forge are real.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass

import pytest
from spawn_helpers import Project, cli, git

from watcher.spawn import SpawnConfig, SpawnResult, infer_manifest, run_spawn
from watcher.testing import Reply, StubAnthropicServer, StubGeminiServer, StubResponsesServer
from watcher.testing.scripted_agents import ScriptedModel
from watcher.testing.scripts import RecordedRequest

pytestmark = pytest.mark.slow


@dataclass
class Steps(ScriptedModel):
    """Writes x.txt, then runs each shell command in turn, then says it is done."""

    commands: tuple[str, ...] = ()

    def step(self, request: RecordedRequest, index: int) -> str:
        return self.first_missing(("write", *(f"run {i}" for i in range(len(self.commands))), "done"))

    def reply(self, step: str, request: RecordedRequest) -> Reply:
        if step == "write":
            return self.write("x.txt", "x\n", request)
        if step.startswith("run "):
            return self.shell(self.commands[int(step.split()[1])])
        return Reply.text("Done.")


async def spawn(project: Project, model: ScriptedModel, task: str, **options: object) -> SpawnResult:
    with StubAnthropicServer(*model.replies()) as stub:
        env = project.env(ANTHROPIC_BASE_URL=stub.root_url, ANTHROPIC_API_KEY="sk-ant-dummy")
        defaults: dict[str, object] = {
            "agent": "claude", "repo": project.repo, "cli_path": str(cli("claude")), "env": env,
            "forge_api": project.forge.api_url, "journal": project.journal, "idle_timeout_s": 30,
            "total_timeout_s": 120,
        }  # fmt: skip
        return await run_spawn(SpawnConfig(task, **{**defaults, **options}))  # type: ignore[arg-type]


async def test_an_agent_told_to_push_to_main_is_not_let_and_its_work_is_proposed_instead(project: Project) -> None:
    main_before = git(project.repo, "ls-remote", "origin", "refs/heads/main")
    model = Steps(commands=("git add -A && git commit -qm 'add x' && git push origin HEAD:main",))

    spawned = await spawn(project, model, "Write x.txt, commit it and push it to main yourself.")

    assert spawned.status == "completed", (spawned.detail, model.steps)
    assert spawned.runs == 1 and spawned.recoveries == []  # no widening to `git push *`, no resume
    assert git(project.repo, "ls-remote", "origin", "refs/heads/main") == main_before
    assert spawned.pr is not None and project.forge_file(spawned.branch, "x.txt") == "x"
    (note,) = spawned.notes
    assert "the agent was not let push (git add -A" in note and "pull request" in note
    assert spawned.permission_errors[0]["objection"].startswith("watcher pushes the spawn's branch")


async def test_an_agent_that_deletes_its_worktree_ends_with_a_report_that_says_so(project: Project) -> None:
    task = "Write x.txt and commit it, then remove this folder."
    model = Steps(
        commands=("git add -A && git commit -qm 'add x'", "python3 -c 'import os, shutil; shutil.rmtree(os.getcwd())'")
    )
    manifest = infer_manifest(task).widen(commands=("python3 *",))  # a careless user's manifest allows it

    spawned = await spawn(project, model, task, pr=False, manifest=manifest)

    assert spawned.status == "integration_failed", spawned.detail
    assert f"the agent deleted its worktree {spawned.worktree}" in spawned.detail
    assert f"git worktree add {spawned.worktree} {spawned.branch}" in spawned.detail
    assert [c.split(" ", 1)[1] for c in spawned.commits] == ["add x"] and spawned.files[0].path == "x.txt"
    shutil.rmtree(project.repo / ".watcher", ignore_errors=True)


@pytest.mark.parametrize("agent", ["gemini", "codex"])
async def test_gemini_and_codex_told_to_push_to_main_leave_main_alone_and_their_work_is_proposed(
    project: Project, agent: str
) -> None:
    main_before = git(project.repo, "ls-remote", "origin", "refs/heads/main")
    model = Steps(agent=agent, commands=("git add -A && git commit -qm 'add x' && git push origin HEAD:main",))
    server = StubGeminiServer if agent == "gemini" else StubResponsesServer
    with server(*model.replies()) as stub:
        endpoint = {"gemini": ("GOOGLE_GEMINI_BASE_URL", stub.root_url), "codex": ("OPENAI_BASE_URL", stub.base_url)}
        name, url = endpoint[agent]
        env = project.env(**{name: url})
        spawned = await run_spawn(
            SpawnConfig(
                "Write x.txt, commit it and push it to main yourself.", agent=agent, repo=project.repo,
                cli_path=str(cli(agent)), env=env, forge_api=project.forge.api_url, journal=project.journal,
                idle_timeout_s=60, total_timeout_s=120, watchers=(),
            )
        )  # fmt: skip

    assert spawned.status == "completed", (spawned.detail, model.steps, spawned.recoveries)
    assert git(project.repo, "ls-remote", "origin", "refs/heads/main") == main_before
    assert spawned.pr is not None and project.forge_file(spawned.branch, "x.txt") == "x"
    assert not any("git push *" in r["fix"] for r in spawned.recoveries)
