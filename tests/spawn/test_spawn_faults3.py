"""``watcher spawn`` under faults: signals mid-run, hostile streams, bad repositories and options.

Each test drives the command or ``run_spawn`` with the fake CLI or none at all (the fault is in
watcher's own code, before or around the CLI), against real git repositories and the loopback forge.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from asyncio.subprocess import PIPE
from pathlib import Path

import pytest
from spawn_helpers import Project, cli, git, init, result, write_script

from watcher.core.errors import ConfigurationError
from watcher.runtime.journal import Journal
from watcher.spawn import SpawnConfig, run_spawn
from watcher.testing import Reply, StubGeminiServer, StubResponsesServer, wait_until
from watcher.testing.fake_cli import launcher

pytestmark = pytest.mark.slow

WATCHER = str(Path(sys.executable).parent / "watcher")


def spawn_env() -> dict[str, str]:
    return {**os.environ, "GITHUB_TOKEN": "loopback-token", "ANTHROPIC_API_KEY": "sk-ant-test-0000"}


def no_spawn_left(repo: Path) -> None:
    """Nothing of a spawn exists: no spawn directory, no spawn branch, no worktree but the main one."""
    assert not (repo / ".watcher" / "spawns").exists()
    assert git(repo, "branch", "--list", "spawn/*") == ""
    assert git(repo, "worktree", "list").count("\n") == 0


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.parametrize(
    ("sig", "code", "said"),
    [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted"), (signal.SIGHUP, 143, "terminated")],
)
async def test_a_signal_mid_run_stops_the_agent_tree_journals_the_end_and_says_where_the_work_is(
    project: Project, tmp_path: Path, sig: signal.Signals, code: int, said: str
) -> None:
    script = write_script(
        tmp_path / "script.jsonl",
        [
            init(),
            {"fake": "write", "path": "a.txt", "content": "a\n"},
            {"fake": "run", "argv": ["sh", "-c", "echo $$ > sleeper.pid; exec sleep 300"]},
        ],
    )
    journal = tmp_path / "j.sqlite3"
    args = ["spawn", "add a.txt", "--no-pr", "--cli-path", str(launcher(script, tmp_path)), "--journal", str(journal)]
    proc = await asyncio.create_subprocess_exec(
        WATCHER, *args, cwd=project.repo, env=spawn_env(), stdout=PIPE, stderr=PIPE
    )
    try:
        pid_file = await wait_until(
            lambda: next(
                (p for p in project.repo.glob(".watcher/spawns/*/worktree/sleeper.pid") if p.read_text()), None
            ),
            30,
            what="the agent's shell command to start",
        )
        sleeper = int(pid_file.read_text())
        proc.send_signal(sig)
        _, raw = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
    err = raw.decode()
    assert proc.returncode == code, err
    assert "Traceback" not in err and f"watcher: {said}" in err
    spawn_id = pid_file.parents[1].name
    assert f"spawn {spawn_id} was stopped before its end" in err and str(pid_file.parent) in err
    assert "watcher spawn --cleanup" in err
    await wait_until(lambda: not alive(sleeper), 10, what="the agent's child process to be stopped")
    assert (pid_file.parent / "a.txt").read_text() == "a\n"  # the work stays where the message says
    with Journal(journal) as read:
        ends = [r.payload for r in read.read(kinds={"session"}) if r.payload.get("status") != "started"]
    assert ends[-1]["status"] == "interrupted", ends


def config(project: Project, cli: str, task: str = "add a.txt", **options: object) -> SpawnConfig:
    defaults: dict[str, object] = {
        "agent": "claude", "repo": project.repo, "cli_path": cli, "forge_api": project.forge.api_url,
        "env": project.env(), "journal": project.journal, "idle_timeout_s": 20, "total_timeout_s": 60, "pr": False,
    }  # fmt: skip
    return SpawnConfig(task, **{**defaults, **options})  # type: ignore[arg-type]


async def test_a_stream_line_over_the_limit_and_garbage_lines_are_dropped_and_the_run_goes_on(
    project: Project, tmp_path: Path
) -> None:
    huge = {
        "type": "assistant",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "x" * (65 << 20)}]},
    }
    lines = [init(), huge, "not json {{", "[1, 2]", '"\\u0000"', result("after the huge line")]
    script = tmp_path / "script.jsonl"
    script.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    spawned = await run_spawn(config(project, str(launcher(script, tmp_path))))
    assert spawned.status == "completed" and spawned.summary == "after the huge line", spawned.detail
    logged = (Path(spawned.logs) / "stream.jsonl").read_text().splitlines()
    assert "[watcher: a stdout line longer than 64 MiB was dropped]" in logged and "not json {{" in logged
    assert json.loads(logged[-1])["result"] == "after the huge line"


def detach(repo: Path) -> dict[str, object]:
    git(repo, "checkout", "-q", "--detach")
    return {}


def local_branch(repo: Path) -> dict[str, object]:
    git(repo, "branch", "feature")  # never pushed: a pull request could not propose to it
    return {"base": "feature"}


def tag(repo: Path) -> dict[str, object]:
    git(repo, "tag", "v1")
    return {"base": "v1"}


def unreachable_remote(repo: Path) -> dict[str, object]:
    git(repo, "remote", "set-url", "origin", "http://127.0.0.1:9/acme/shop.git")
    return {}


def other_forge(repo: Path) -> dict[str, object]:
    git(repo, "remote", "set-url", "origin", "git@gitlab.example.com:acme/shop.git")  # never asked: refused first
    return {"forge_api": None}


def local_remote(repo: Path) -> dict[str, object]:
    git(repo, "remote", "set-url", "origin", str(repo.parent / "elsewhere.git"))
    return {"forge_api": None}


@pytest.mark.parametrize(
    ("prepare", "said"),
    [
        (detach, "HEAD is detached in "),
        (tag, "base branch 'v1' does not exist in "),
        (lambda repo: {"base": ""}, "base branch '' does not exist in "),
        (local_branch, "the base branch 'feature' is not on the remote 'origin', so no pull request can propose to it"),
        (unreachable_remote, "cannot reach the remote 'origin' to check the base branch 'main' is there"),
        (lambda repo: {"forge_api": "not a url"}, "the forge API 'not a url' is not an http(s) URL"),
        (lambda repo: {"forge_repo": "nobody"}, "--forge-repo 'nobody' is not OWNER/REPO"),
        (lambda repo: {"forge_repo": "a/b/c"}, "--forge-repo 'a/b/c' is not OWNER/REPO"),
        (other_forge, "the remote 'origin' is at gitlab.example.com, not on github.com, and no forge API is named"),
        (local_remote, "the remote 'origin' is a local path, not on github.com, and no forge API is named"),
    ],
    ids=[
        "detached",
        "tag",
        "empty-base",
        "base-not-pushed",
        "remote-down",
        "forge-api",
        "forge-repo",
        "forge-repo-3",
        "other-forge",
        "local-remote",
    ],
)
async def test_a_repository_or_forge_a_spawn_cannot_finish_with_is_refused_before_anything_exists(
    project: Project, prepare: object, said: str
) -> None:
    options = prepare(project.repo)  # type: ignore[operator]
    with pytest.raises(ConfigurationError) as refused:
        await run_spawn(config(project, "/bin/false", pr=True, **options))
    assert said in str(refused.value) and "\n" not in str(refused.value)
    no_spawn_left(project.repo)


async def test_a_repository_with_no_commits_or_a_bare_one_is_named_as_such(project: Project, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    git(tmp_path, "init", "-q", str(empty))
    with pytest.raises(ConfigurationError, match="has no commits yet, and a spawn's branch starts from one"):
        await run_spawn(config(project, "/bin/false", repo=empty))
    with pytest.raises(ConfigurationError, match="is a bare repository, with no working tree to branch from"):
        await run_spawn(config(project, "/bin/false", repo=project.forge.root / "acme" / "shop.git"))
    assert not (empty / ".watcher").exists()


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        ((b"add a.txt", b"--cleanup"), "--cleanup removes the spawn worktrees of --repo and runs nothing"),
        (
            (b"--cleanup", b"--plan"),
            "--cleanup removes the spawn worktrees of --repo and runs nothing: leave out --plan",
        ),
        ((b"add a.txt", b"--cli-path", b""), "--cli-path '' is not an executable file"),
        ((b"\x89PNG\r\n\x1a\n\xff\xfe", b"--cli-path", b"/bin/false"), "the task holds bytes that are not UTF-8 text"),
    ],
    ids=["cleanup-and-task", "cleanup-and-plan", "empty-cli-path", "binary-task"],
)
async def test_conflicting_or_nonsense_arguments_are_refused_before_anything_exists(
    project: Project, tmp_path: Path, argv: tuple[bytes, ...], said: str
) -> None:
    spawned = project.repo / ".watcher" / "spawns" / "kept"
    spawned.mkdir(parents=True)  # what --cleanup would look at: it must not run
    journal = tmp_path / "j.sqlite3"
    proc = await asyncio.create_subprocess_exec(
        WATCHER, "spawn", *argv, "--no-pr", "--journal", str(journal), cwd=project.repo, env=spawn_env(),
        stdout=PIPE, stderr=PIPE,
    )  # fmt: skip
    _, raw = await asyncio.wait_for(proc.communicate(), 30)
    err = raw.decode()
    assert proc.returncode == 2 and said in err and "Traceback" not in err, err
    assert err.count("\n") == 1 and spawned.is_dir()
    assert git(project.repo, "branch", "--list", "spawn/*") == ""


async def test_a_task_too_long_for_a_command_line_is_refused_for_the_clis_that_take_it_there(project: Project) -> None:
    task = "Write the parser this grammar describes:\n" + "rule := term ('|' term)*\n" * 6000  # 150 KB
    for agent in ("gemini", "codex"):
        with pytest.raises(ConfigurationError, match=f"the {agent} CLI takes its task on the command line"):
            await run_spawn(config(project, "/bin/false", task, agent=agent))
    with pytest.raises(ConfigurationError, match="a spawn needs a task, in words"):
        SpawnConfig("  \n")
    no_spawn_left(project.repo)


async def test_gemini_clis_own_reason_for_a_failed_run_is_in_the_report(project: Project, tmp_path: Path) -> None:
    said = '[API Error: {"error":{"code":401,"message":"bad key","status":"UNAUTHENTICATED"}}]'
    lines = [
        {"type": "init", "session_id": "57e8045b-0000-4000-8000-000000000001", "model": "gemini-2.5-flash"},
        {"type": "message", "role": "user", "content": "add a.txt"},
        {"type": "result", "status": "error", "error": {"type": "unknown", "message": said}, "stats": {}},
    ]
    spawned = await run_spawn(
        config(project, str(launcher(write_script(tmp_path / "s.jsonl", lines), tmp_path)), agent="gemini")
    )
    assert spawned.status == "failed" and spawned.detail == f"error: {said}" and spawned.summary == said


async def test_cleanup_leaves_a_running_spawn_alone_and_removes_it_once_it_ended(
    project: Project, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "script.jsonl", [init(), {"fake": "write", "path": "a.txt", "content": "a\n"}, {"fake": "hang"}]
    )
    args = [
        "spawn",
        "add a.txt",
        "--no-pr",
        "--cli-path",
        str(launcher(script, tmp_path)),
        "--journal",
        str(tmp_path / "j"),
    ]
    running = await asyncio.create_subprocess_exec(
        WATCHER, *args, cwd=project.repo, env=spawn_env(), stdout=PIPE, stderr=PIPE
    )
    try:
        written = await wait_until(
            lambda: next(project.repo.glob(".watcher/spawns/*/worktree/a.txt"), None), 30, what="the agent's write"
        )
        cleanup = await asyncio.create_subprocess_exec(
            WATCHER, "spawn", "--cleanup", cwd=project.repo, env=spawn_env(), stdout=PIPE
        )
        out = (await asyncio.wait_for(cleanup.communicate(), 30))[0].decode()
        spawn_id = written.parents[1].name
        assert (
            "removed 0 spawn worktree(s)" in out
            and f"kept the branch spawn/{spawn_id} and its worktree (the spawn is running, in process {running.pid})"
            in out
        )
        assert written.read_text() == "a\n" and git(project.repo, "branch", "--list", f"spawn/{spawn_id}")
        running.send_signal(signal.SIGINT)
        await asyncio.wait_for(running.communicate(), 30)
    finally:
        if running.returncode is None:
            running.kill()
    cleanup = await asyncio.create_subprocess_exec(
        WATCHER, "spawn", "--cleanup", cwd=project.repo, env=spawn_env(), stdout=PIPE
    )
    out = (await asyncio.wait_for(cleanup.communicate(), 30))[0].decode()
    assert f"removed 1 spawn worktree(s) and their branches: {spawn_id}" in out and not written.exists()


async def test_a_file_where_spawns_keep_their_folders_or_a_taken_branch_is_refused_before_anything_exists(
    project: Project,
) -> None:
    git(project.repo, "branch", "spawn/taken")
    with pytest.raises(ConfigurationError, match="the branch spawn/taken already exists in "):
        await run_spawn(config(project, "/bin/false", spawn_id="taken"))
    (project.repo / ".watcher").write_text("not a folder")
    with pytest.raises(
        ConfigurationError, match=r"\.watcher is a file, and spawns keep their worktrees and logs in a folder there"
    ):
        await run_spawn(config(project, "/bin/false"))
    assert git(project.repo, "worktree", "list").count("\n") == 0


async def test_the_pull_request_carries_no_key_and_describes_the_branch_it_proposes(
    project: Project, tmp_path: Path
) -> None:
    key = "sk-ant-api03-" + "Q" * 40
    lines = [
        init(),
        {"fake": "write", "path": "a.txt", "content": "a\n"},
        result("Done; the forge token was loopback-token."),
    ]
    cli = str(launcher(write_script(tmp_path / "s.jsonl", lines), tmp_path))
    spawned = await run_spawn(config(project, cli, f"call the API with {key} and add a.txt", pr=True))
    assert spawned.status == "completed" and spawned.pr is not None
    (pull,) = project.forge.pulls
    assert key not in pull["title"] and key not in pull["body"] and "loopback-token" not in pull["body"]
    assert f"**Branch:** `{spawned.branch}` into `main`" in pull["body"] and "no pull request" not in pull["body"]
    assert "0.0s" not in pull["body"]


async def test_a_child_the_cli_left_holding_its_output_neither_hangs_the_spawn_nor_outlives_it(
    project: Project, tmp_path: Path
) -> None:
    lines = "\n".join(json.dumps(line) for line in (init(), result("done, with a server left running")))
    cli = tmp_path / "agent"
    cli.write_text(f"#!/bin/sh\ncat <<'EOF'\n{lines}\nEOF\nsleep 300 &\necho $! > {tmp_path}/child\nexit 0\n")
    cli.chmod(0o755)
    spawned = await asyncio.wait_for(run_spawn(config(project, str(cli), idle_timeout_s=60, total_timeout_s=120)), 30)
    assert spawned.status == "completed" and spawned.summary == "done, with a server left running"
    child = int((tmp_path / "child").read_text())
    await wait_until(lambda: not alive(child), 10, what="the child the CLI left to be stopped")


@pytest.mark.parametrize("agent", ["gemini", "codex"])
async def test_a_task_that_starts_with_a_dash_reaches_the_model_as_the_task_not_as_an_option(
    project: Project, agent: str
) -> None:
    task = "--yolo: add a.txt"  # a CLI that read it as options would refuse it, or widen its own sandbox
    stub_type, variable = (
        (StubGeminiServer, "GOOGLE_GEMINI_BASE_URL") if agent == "gemini" else (StubResponsesServer, "OPENAI_BASE_URL")
    )
    with stub_type(Reply.text("Nothing to add."), default_reply=Reply.text("Nothing to add.")) as stub:
        url = stub.root_url if agent == "gemini" else stub.base_url
        spawned = await run_spawn(
            config(project, str(cli(agent)), task, agent=agent, env=project.env(**{variable: url}))
        )
        (request, *_) = stub.wait_for_requests(1)
    assert spawned.status == "completed", spawned.detail
    assert task in json.dumps(request.body)


async def test_the_agents_work_is_committed_where_git_knows_no_committer(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"):
        monkeypatch.setenv(variable, os.devnull)  # no identity from the machine either
    monkeypatch.delenv("EMAIL", raising=False)
    git(project.repo, "config", "--unset", "user.name")
    git(project.repo, "config", "--unset", "user.email")
    lines = [init(), {"fake": "write", "path": "a.txt", "content": "a\n"}, result("Added a.txt.")]
    spawned = await run_spawn(config(project, str(launcher(write_script(tmp_path / "s.jsonl", lines), tmp_path))))
    assert spawned.status == "completed", spawned.detail
    assert [f.path for f in spawned.files] == ["a.txt"]
    assert (
        git(project.repo, "log", "-1", "--format=%an <%ae>", spawned.branch) == "watcher spawn <spawn@watcher.invalid>"
    )


async def test_file_names_with_spaces_tabs_or_accents_are_reported_as_they_are(
    project: Project, tmp_path: Path
) -> None:
    names = ["ünï code.txt", "tab\tname.txt"]
    lines = [init(), *[{"fake": "write", "path": name, "content": "x\n"} for name in names]]
    lines += [{"fake": "run", "argv": ["git", "mv", "README.md", "READ ME.md"]}, result()]
    spawned = await run_spawn(config(project, str(launcher(write_script(tmp_path / "s.jsonl", lines), tmp_path))))
    assert sorted(f.path for f in spawned.files) == sorted([*names, "README.md => READ ME.md"])
    assert all(f.summary.endswith("changes the agent left uncommitted") for f in spawned.files)


async def test_a_conflict_in_a_file_with_an_accented_name_is_reported_by_its_name(
    project: Project, tmp_path: Path
) -> None:
    name = "ü big.txt"
    (project.repo / name).write_text("".join(f"line {i}\n" for i in range(40)))
    git(project.repo, "add", "-A")
    git(project.repo, "commit", "-qm", "big")
    git(project.repo, "push", "-q", "origin", "HEAD:main")
    upstream = tmp_path / "upstream"
    git(tmp_path, "clone", "-q", git(project.repo, "remote", "get-url", "origin"), str(upstream))
    (upstream / name).write_text("".join(f"line {i}{' theirs' if i % 8 == 2 else ''}\n" for i in range(40)))
    git(upstream, "-c", "user.name=o", "-c", "user.email=o@e", "commit", "-qam", "upstream")
    git(upstream, "push", "-q", "origin", "HEAD:main")
    mine = "".join(f"line {i}{' mine' if i % 8 == 2 else ''}\n" for i in range(40))
    lines = [init(), {"fake": "write", "path": name, "content": mine}, result()]
    spawned = await run_spawn(
        config(project, str(launcher(write_script(tmp_path / "s.jsonl", lines), tmp_path)), pr=True)
    )
    assert spawned.status == "conflict" and spawned.conflicts == [name], (spawned.detail, spawned.conflicts)


async def test_the_total_timeout_bounds_the_whole_spawn_not_each_resumed_run(project: Project, tmp_path: Path) -> None:
    command = "git commit -qm 'add a'"
    denied = [{"tool_name": "Bash", "tool_use_id": "d1", "tool_input": {"command": command}}]
    first = [init(), {"fake": "sleep", "s": 1.0}, result("I was not allowed to commit.", denials=denied)]
    write_script(tmp_path / "s.resume.jsonl", [init(), {"fake": "sleep", "s": 3.5}, result("Committed.")])
    cli = str(launcher(write_script(tmp_path / "s.jsonl", first), tmp_path))
    spawned = await run_spawn(config(project, cli, idle_timeout_s=30, total_timeout_s=4))  # each run alone fits
    assert spawned.runs == 2 and spawned.recoveries[0]["outcome"] == "resumed"  # the resume did start
    assert spawned.status == "timeout" and spawned.detail == "total timeout (4s)"
    assert spawned.duration_s < 10


async def test_work_the_agent_committed_on_a_branch_of_its_own_is_brought_back_and_proposed(
    project: Project, tmp_path: Path
) -> None:
    lines = [
        init(),
        {"fake": "run", "argv": ["git", "checkout", "-q", "-b", "fix/login"]},
        {"fake": "write", "path": "a.txt", "content": "a\n"},
        {"fake": "run", "argv": ["sh", "-c", "git add -A && git commit -qm 'Add a'"]},
        {"fake": "write", "path": "b.txt", "content": "b\n"},
        result("Added a and b."),
    ]
    spawned = await run_spawn(
        config(project, str(launcher(write_script(tmp_path / "s.jsonl", lines), tmp_path)), pr=True)
    )
    assert spawned.status == "completed" and spawned.pr is not None, spawned.detail
    assert [f.path for f in spawned.files] == ["a.txt", "b.txt"]
    assert spawned.detail == f"the agent moved the worktree to branch fix/login; its commits are on {spawned.branch}"
    assert project.forge_file(spawned.branch, "b.txt") == "b"


async def test_work_on_a_branch_that_does_not_continue_the_spawns_is_named_not_called_nothing(
    project: Project, tmp_path: Path
) -> None:
    lines = [
        init(),
        {"fake": "run", "argv": ["git", "checkout", "-q", "--orphan", "scratch"]},
        {"fake": "write", "path": "a.txt", "content": "a\n"},
        {"fake": "run", "argv": ["sh", "-c", "git add -A && git commit -qm 'Start over'"]},
        result("Started over."),
    ]
    spawned = await run_spawn(config(project, str(launcher(write_script(tmp_path / "s.jsonl", lines), tmp_path))))
    assert spawned.status == "integration_failed"
    assert spawned.detail.startswith(
        f"the agent switched the worktree to branch scratch, which does not continue {spawned.branch}"
    )


async def test_one_ctrl_c_at_interactive_recoverys_question_stops_the_spawn(project: Project, tmp_path: Path) -> None:
    denied = [{"tool_name": "Bash", "tool_use_id": "d1", "tool_input": {"command": "git commit -qm x"}}]
    cli = launcher(write_script(tmp_path / "s.jsonl", [init(), result("Not allowed.", denials=denied)]), tmp_path)
    journal = tmp_path / "j.sqlite3"
    args = [
        "spawn",
        "add a.txt",
        "--no-pr",
        "--recovery",
        "interactive",
        "--cli-path",
        str(cli),
        "--journal",
        str(journal),
    ]
    terminal, tty = os.openpty()  # the question needs a terminal on stdin; stderr shows what a person sees
    proc = await asyncio.create_subprocess_exec(
        WATCHER, *args, cwd=project.repo, env=spawn_env(), stdin=tty, stderr=tty
    )
    try:
        os.set_blocking(terminal, False)
        seen = bytearray()

        def asked() -> bool:
            with contextlib.suppress(BlockingIOError):
                seen.extend(os.read(terminal, 65536))
            return b"[y/N] " in seen

        await wait_until(asked, 30, what="the recovery question")
        proc.send_signal(signal.SIGINT)  # once
        assert await asyncio.wait_for(proc.wait(), 30) == 130
        with contextlib.suppress(BlockingIOError, OSError):
            seen.extend(os.read(terminal, 65536))
    finally:
        if proc.returncode is None:
            proc.kill()
        os.close(tty)
        os.close(terminal)
    shown = seen.decode()
    assert "\nwatcher spawn: Allow command `git commit *` and resume? [y/N] " in shown.replace("\r", "")
    assert "was stopped before its end" in shown and "Traceback" not in shown
    with Journal(journal) as read:
        ends = [r.payload for r in read.read(kinds={"session"}) if r.payload.get("status") != "started"]
    assert ends[-1]["status"] == "interrupted", ends


async def test_a_machine_without_git_is_told_so(project: Project, tmp_path: Path) -> None:
    env = {**spawn_env(), "PATH": str(tmp_path)}  # no git on it
    proc = await asyncio.create_subprocess_exec(
        WATCHER, "spawn", "add a.txt", "--no-pr", "--cli-path", "/bin/false", cwd=project.repo, env=env, stderr=PIPE
    )
    _, raw = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 2 and raw.decode() == (
        "watcher: error: git was not found on PATH, and a spawn works in a git worktree: install git\n"
    )


async def test_the_clis_private_home_is_readable_by_its_owner_only(project: Project, tmp_path: Path) -> None:
    lines = [init(), result()]
    spawned = await run_spawn(config(project, str(launcher(write_script(tmp_path / "s.jsonl", lines), tmp_path))))
    assert (
        Path(spawned.logs) / "home"
    ).stat().st_mode & 0o777 == 0o700  # Codex snapshots its environment, key included


async def test_changes_not_committed_in_the_checkout_are_said_to_stay_out_of_the_spawn(
    project: Project, tmp_path: Path
) -> None:
    (project.repo / "README.md").write_text("# shop, edited and not committed\n")
    cli = launcher(write_script(tmp_path / "s.jsonl", [init(), result()]), tmp_path)
    args = ["spawn", "add a.txt", "--no-pr", "--cli-path", str(cli), "--journal", str(tmp_path / "j.sqlite3")]
    proc = await asyncio.create_subprocess_exec(
        WATCHER, *args, cwd=project.repo, env=spawn_env(), stdout=PIPE, stderr=PIPE
    )
    _, raw = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0
    assert (
        "note: the checkout has changes that are not committed; the agent starts from the last commit" in raw.decode()
    )


async def test_a_timeout_says_what_the_cli_last_complained_of(project: Project, tmp_path: Path) -> None:
    said = 'Attempt 3 failed with status 500. Retrying with backoff... {"error":{"code":500,"message":"boom"}}'
    lines = [init(), {"fake": "stderr", "text": said}, {"fake": "stderr", "text": "  status: 500\n}"}, {"fake": "hang"}]
    cli = str(launcher(write_script(tmp_path / "s.jsonl", lines), tmp_path))
    spawned = await run_spawn(config(project, cli, idle_timeout_s=1))
    assert spawned.status == "timeout"
    assert spawned.detail == f"idle timeout (no output for 1s); the CLI last said: {said}"


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
async def test_json_prints_the_report_so_far_marked_interrupted_when_a_signal_stops_the_spawn(
    project: Project, tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    script = write_script(
        tmp_path / "script.jsonl",
        [
            init(),
            {"fake": "write", "path": "a.txt", "content": "a\n"},
            {"fake": "run", "argv": ["git", "add", "a.txt"]},
            {"fake": "run", "argv": ["git", "commit", "-qm", "add a"]},
            {"fake": "write", "path": "b.txt", "content": "b\n"},
            {"fake": "run", "argv": ["sh", "-c", "echo $$ > sleeper.pid; exec sleep 300"]},
        ],
    )
    journal = tmp_path / "j.sqlite3"
    args = ["spawn", "add a.txt", "--json", "--no-pr", "--cli-path", str(launcher(script, tmp_path))]
    proc = await asyncio.create_subprocess_exec(
        WATCHER, *args, "--journal", str(journal), cwd=project.repo, env=spawn_env(), stdout=PIPE, stderr=PIPE
    )
    try:
        pid_file = await wait_until(
            lambda: next(
                (p for p in project.repo.glob(".watcher/spawns/*/worktree/sleeper.pid") if p.read_text()), None
            ),
            30,
            what="the agent's shell command to start",
        )
        proc.send_signal(sig)
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
    assert proc.returncode == code, err.decode()
    report = json.loads(out)
    assert report["status"] == "interrupted" and report["id"] == pid_file.parents[1].name
    assert "interrupted" in report["detail"] and report["worktree"] == str(pid_file.parent)
    assert [c.split(" ", 1)[1] for c in report["commits"]] == ["add a"]
    assert [f["path"] for f in report["files"]] == ["a.txt"]
    assert any("uncommitted changes stay in" in note for note in report["notes"]), report["notes"]
    assert "Traceback" not in err.decode() and "was stopped before its end" in err.decode()


async def test_sigterm_while_the_remote_does_not_answer_exits_at_once_with_the_json_report(
    project: Project, tmp_path: Path
) -> None:
    import socket
    import threading
    import time

    listener = socket.create_server(("127.0.0.1", 0))  # accepts, then never answers: a remote that hangs
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/acme/shop.git"
    git(project.repo, "remote", "set-url", "origin", url)
    args = ["spawn", "add a.txt", "--json", "--cli-path", sys.executable, "--forge-api", "http://127.0.0.1:9"]
    proc = await asyncio.create_subprocess_exec(
        WATCHER, *args, "--journal", str(tmp_path / "j.sqlite3"), cwd=project.repo, env=spawn_env(),
        stdout=PIPE, stderr=PIPE,
    )  # fmt: skip
    try:
        await wait_until(lambda: accepted, 30, what="the remote check to connect")
        proc.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        out, err = await asyncio.wait_for(proc.communicate(), 30)
        took = time.monotonic() - stopped
    finally:
        if proc.returncode is None:
            proc.kill()
        for sock in (*accepted, listener):
            sock.close()
    assert proc.returncode == 143, err.decode()
    assert took < 10, f"watcher waited {took:.1f}s for git's remote check after SIGTERM"  # it waited out git's 60s
    report = json.loads(out)
    assert report["status"] == "interrupted" and "before its worktree was made" in report["detail"]
    no_spawn_left(project.repo)
