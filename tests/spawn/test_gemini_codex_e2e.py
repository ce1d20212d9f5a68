"""End to end with the real Gemini CLI and Codex against their stubs: no live channel, so the resume path."""

from __future__ import annotations

import pytest
from spawn_helpers import Project, cli

from watcher.spawn import SpawnConfig, run_spawn
from watcher.testing import StubGeminiServer, StubResponsesServer
from watcher.testing.scripted_agents import CommitTask, LoginTask

pytestmark = pytest.mark.slow

TASK = "Add a login(username, password) to src/auth/login.js that checks the users table with db.query, and commit it."


def check_fixed_and_proposed(project: Project, result: object, model: LoginTask) -> None:
    from watcher.spawn import SpawnResult

    assert isinstance(result, SpawnResult)
    assert result.status == "completed", (result.status, result.detail, model.steps)
    (interjection,) = result.interjections
    assert interjection["watcher"] == "security" and interjection["via"] == "resume"
    assert result.runs == 2
    # journaled queued when the watcher spoke, delivered when the resumed session took it
    project.journal.flush()
    rows = project.journal.read(session=f"spawn-{result.id}", limit=10_000)
    fates = [(r.payload["outcome"], r.payload["detail"]) for r in rows if r.kind == "delivery"]
    assert [f[0] for f in fates] == ["queued", "delivered"] and fates[1][1] == "carried by the resumed CLI session"
    # the message reached the model in the first request of the resumed session
    assert model.seen_supervisor_at is not None and model.steps[model.seen_supervisor_at] == "fix"
    assert model.steps[: model.seen_supervisor_at] == ["write", "commit", "summary"]
    assert result.pr is not None and project.forge.pulls[0]["head"] == result.branch
    pushed = project.forge_file(result.branch, "src/auth/login.js")
    assert "${username}" not in pushed and "[username, password]" in pushed
    assert "`src/auth/login.js` (+" in result.markdown()


async def test_gemini_cli_is_corrected_by_resuming_its_session(project: Project) -> None:
    gemini = cli("gemini")
    model = LoginTask("gemini", wait_for_supervisor=False)
    with StubGeminiServer(*model.replies()) as stub:
        env = project.env(GOOGLE_GEMINI_BASE_URL=stub.root_url, GEMINI_API_KEY="dummy")
        result = await run_spawn(
            SpawnConfig(
                TASK, agent="gemini", repo=project.repo, cli_path=str(gemini), forge_api=project.forge.api_url,
                env=env, journal=project.journal, idle_timeout_s=60, total_timeout_s=120, watchers=("security",),
            )
        )  # fmt: skip
    check_fixed_and_proposed(project, result, model)


async def test_codex_is_corrected_by_resuming_its_thread(project: Project) -> None:
    codex = cli("codex")
    model = LoginTask("codex", wait_for_supervisor=False)
    with StubResponsesServer(*model.replies()) as stub:
        env = project.env(OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="dummy")
        result = await run_spawn(
            SpawnConfig(
                TASK, agent="codex", repo=project.repo, cli_path=str(codex), forge_api=project.forge.api_url,
                env=env, journal=project.journal, idle_timeout_s=60, total_timeout_s=120, watchers=("security",),
            )
        )  # fmt: skip
    check_fixed_and_proposed(project, result, model)


async def test_codex_read_only_git_is_widened_with_its_git_dirs_and_resumed(project: Project) -> None:
    codex = cli("codex")
    model = CommitTask("codex")
    with StubResponsesServer(*model.replies()) as stub:
        env = project.env(OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="dummy")
        result = await run_spawn(
            SpawnConfig(
                "Write NOTES.md with a heading.", agent="codex", repo=project.repo, cli_path=str(codex), env=env,
                journal=project.journal, pr=False, idle_timeout_s=60, total_timeout_s=120,
            )
        )  # fmt: skip
    assert result.status == "completed", (result.detail, model.steps, result.permission_errors)
    assert result.recoveries[0]["outcome"] == "resumed" and result.runs == 2
    assert "writing " in result.recoveries[0]["fix"] and ".git" in result.recoveries[0]["fix"]
    assert [c.split(" ", 1)[1] for c in result.commits] == ["Add NOTES.md"]


async def test_gemini_policy_violation_is_widened_and_the_session_resumed(project: Project) -> None:
    gemini = cli("gemini")
    model = CommitTask("gemini")
    with StubGeminiServer(*model.replies()) as stub:
        env = project.env(GOOGLE_GEMINI_BASE_URL=stub.root_url, GEMINI_API_KEY="dummy")
        result = await run_spawn(
            SpawnConfig(
                "Write NOTES.md with a heading.", agent="gemini", repo=project.repo, cli_path=str(gemini), env=env,
                journal=project.journal, pr=False, idle_timeout_s=60, total_timeout_s=120,
            )
        )  # fmt: skip
    assert result.status == "completed", (result.detail, model.steps, result.permission_errors)
    assert model.steps == ["write", "commit", "summary_refused", "commit_again", "summary_committed"]
    assert result.recoveries[0]["outcome"] == "resumed" and result.runs == 2
    assert [c.split(" ", 1)[1] for c in result.commits] == ["Add NOTES.md"]
