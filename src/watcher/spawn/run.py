"""One spawn, phase by phase: Evaluate → Provision → Execute/Monitor → Recover → Integrate → Report.

``run_spawn(config)`` is the whole lifecycle of seed 002 on the caller's event loop. The
attached watchers see the CLI's stream live and their interjections reach the CLI (the session
is a ``SpawnSession``); messages that could not go live continue the same CLI session by
resuming it; permission denials go through the recovery strategy; a successful run is committed,
pushed and proposed as a pull request. Every phase is a typed journal event.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

from watcher.core.errors import ConfigurationError, SpawnError
from watcher.core.spec import WatcherSpec
from watcher.evaluators.preflight import check_reachable, check_url
from watcher.evaluators.registry import make_evaluator
from watcher.roles import spec_for_role
from watcher.runtime.hub import Runtime
from watcher.runtime.session import EndState
from watcher.spawn import _gitproc
from watcher.spawn._adapter import AgentCLI, agent_path, find_executable
from watcher.spawn._link import relink
from watcher.spawn._version import cli_version, version_note
from watcher.spawn.config import SpawnConfig
from watcher.spawn.events import PermissionDenied, RecoveryAttempt, SandboxCreated
from watcher.spawn.execute import RunOutcome, execute
from watcher.spawn.finish import forge_target, integrate
from watcher.spawn.integrate import changed_files
from watcher.spawn.monitor import ProgressState
from watcher.spawn.plan import Plan, plan_manifest
from watcher.spawn.provision import Sandbox, create, git, hold, locate, release
from watcher.spawn.recover import PUSHED_BY_WATCHER, Recovery, pushes_for_watcher
from watcher.spawn.report import SpawnResult
from watcher.spawn.session import SpawnSession

__all__ = ["SpawnConfig", "adapter_for", "run_spawn", "watcher_spec"]

_MAX_RUNS = 12  # resumes for interjections and recoveries together: a runaway loop ends here


def watcher_spec(text: str) -> WatcherSpec:
    """``security`` or ``security:manual`` (a person accepts or dismisses its interjections)."""
    role, _, mode = text.partition(":")
    if mode not in ("", "manual", "autonomous"):
        raise ConfigurationError(f"watcher {text!r}: the mode after ':' is manual or autonomous")
    return spec_for_role(role, mode="manual" if mode == "manual" else "autonomous")


def adapter_for(agent: str) -> AgentCLI:
    """The adapter of ``agent``: claude, gemini or codex."""
    from watcher.spawn.claude import ClaudeCode
    from watcher.spawn.codex import Codex
    from watcher.spawn.gemini import GeminiCLI

    adapters: dict[str, type[AgentCLI]] = {"claude": ClaudeCode, "gemini": GeminiCLI, "codex": Codex}
    if agent not in adapters:
        raise ConfigurationError(f"unknown agent {agent!r}; choose one of {', '.join(adapters)}")
    return adapters[agent]()


async def run_spawn(config: SpawnConfig) -> SpawnResult:
    """Run one spawn to its end and return the report's data (it never leaves the CLI running)."""
    started = time.monotonic()
    settings = config.settings()
    parent_env = dict(settings.environ)
    # everything that can be checked is checked before a worktree, a branch or a journal row exists
    adapter = adapter_for(config.agent)
    search = agent_path(parent_env, config.manifest)  # the CLI is looked up where the agent will run it from
    executable = find_executable(
        adapter.binary, config.cli_path, Path(config.repo), adapter.package, adapter.checked_version, path=search
    )
    adapter.check_credentials(parent_env)
    adapter.check_task(config.task)
    if adapter.endpoint and parent_env.get(adapter.endpoint):
        check_url(parent_env[adapter.endpoint], who=f"the {adapter.name} CLI's model server", fix=adapter.endpoint)
    if config.pr and not (config.token or settings.github_token):
        raise ConfigurationError(
            "opening a pull request needs a token: set GITHUB_TOKEN (or GH_TOKEN), or pass --no-pr"
        )
    recovery = Recovery(config.recovery, config.max_escalations, config.ask)
    specs = [item if isinstance(item, WatcherSpec) else watcher_spec(item) for item in config.watchers]
    sandbox = await asyncio.to_thread(locate, config.repo, base=config.base, spawn_id=config.spawn_id)
    if config.pr:
        await asyncio.to_thread(_check_remote, sandbox.repo, config.remote)
        await asyncio.to_thread(forge_target, config, settings, sandbox.repo)  # (before asking the remote anything)
        await asyncio.to_thread(_check_base_on_remote, sandbox.repo, config.remote, sandbox.base)
    reads = {"worktree": sandbox.worktree} if config.evaluator != "rules" else {}  # edits numbered as files read
    evaluators = [make_evaluator(config.evaluator, spec.role, settings=settings, **reads) for spec in specs]
    if evaluators:  # an LLM watcher's key and model, proved with one models request before the paid run
        await asyncio.to_thread(check_reachable, evaluators[0])
    planned = (
        Plan(config.manifest, "given")
        if config.manifest
        else await plan_manifest(config.task, config.planner, settings=settings)
    )
    manifest = planned.manifest.with_timeouts(config.idle_timeout_s, config.total_timeout_s)
    if agent_path(parent_env, manifest) != search:  # the plan gives the agent a PATH of its own: the CLI is found there
        executable = find_executable(
            adapter.binary, config.cli_path, Path(config.repo), adapter.package, adapter.checked_version,
            path=agent_path(parent_env, manifest),
        )  # fmt: skip
    version = await asyncio.to_thread(cli_version, executable, adapter.package)
    other_version = version_note(adapter.name, adapter.package, version, adapter.checked_version)
    sandbox = await asyncio.to_thread(create, sandbox, parent_env)  # the first thing a spawn leaves behind
    hold(sandbox)  # `watcher spawn --cleanup` in another shell leaves it alone until it ends
    runtime = config.runtime or Runtime(journal=config.journal)  # a fleet's runtime is shared, and left open
    session = SpawnSession(config.session_name or f"spawn-{sandbox.id}", adapter, runtime.publish)
    runtime.add_session(session, detail=config.task[:500])
    runtime.publish(
        SandboxCreated(
            session=session.name,
            spawn_id=sandbox.id,
            branch=sandbox.branch,
            worktree=str(sandbox.worktree),
            base=sandbox.base,
            agent=adapter.name,
            provision_ms=round(sandbox.provision_ms, 2),
            notes=sandbox.notes,
        )
    )
    for spec, evaluator in zip(specs, evaluators, strict=True):
        runtime.attach(spec, evaluator, session)
    runtime.start_command_poller()  # Inject/Dismiss from an editor, a panel or `watcher` in another process
    progress = ProgressState(sandbox.id, sandbox.worktree)
    result = SpawnResult(
        sandbox.id,
        config.task,
        adapter.name,
        EndState.FAILED,
        0.0,
        sandbox.branch,
        sandbox.base,
        str(sandbox.worktree),
        str(sandbox.directory),
    )
    result.notes = [*sandbox.notes, *([other_version] if other_version else [])]
    result.plan = {"source": planned.source, "note": planned.note, "manifest": manifest.to_dict()}
    prompt, resume = config.task, None
    outcome = RunOutcome(EndState.CRASHED, None)
    interrupted: BaseException | None = None
    try:
        for attempt in range(_MAX_RUNS):
            result.runs = attempt + 1
            try:
                outcome = await execute(
                    runtime=runtime, session=session, sandbox=sandbox, manifest=manifest, executable=executable,
                    prompt=prompt, resume=resume, parent_env=parent_env, progress=progress, attempt=attempt,
                    on_progress=config.on_progress, at_boundary=config.at_boundary, spent_s=outcome.spent_s,
                )  # fmt: skip
            except SpawnError as exc:  # the CLI could not even start: a crash, reported like one
                outcome = RunOutcome(EndState.CRASHED, None, cli_session=resume or "", detail=str(exc))
                break
            resume = outcome.cli_session or resume
            over = bool(session.stopped_by) or outcome.status in (EndState.TIMEOUT, EndState.CRASHED)
            if config.at_boundary is not None and not adapter.live and not over:
                await config.at_boundary(progress.boundary())  # a headless run's end: a resume may follow
            if over or session.stopped_by:  # (an abort may come at that boundary)
                break
            if session.queued and resume:
                prompt = session.resume_prompt()
                continue
            for push in [d for d in outcome.denials if pushes_for_watcher(d, manifest)]:
                outcome.denials.remove(push)  # integration pushes the branch and proposes it instead
                runtime.publish(
                    PermissionDenied(
                        session=session.name, spawn_id=sandbox.id, tool=push.tool, detail=push.command,
                        objection=PUSHED_BY_WATCHER,
                    )
                )  # fmt: skip
                result.permission_errors.append(
                    {"tool": push.tool, "command": push.command, "fix": "", "objection": PUSHED_BY_WATCHER}
                )
                result.notes.append(f"the agent was not let push ({push.command}): {PUSHED_BY_WATCHER}")
            if not outcome.denials:
                break
            decision = recovery.decide(outcome.denials, manifest, sandbox.worktree, sandbox.git_dirs)
            for denial, fix, why in decision.fixes:
                runtime.publish(
                    PermissionDenied(
                        session=session.name, spawn_id=sandbox.id, tool=denial.tool, detail=denial.command or denial.detail,
                        fix=fix.describe() if fix else "", objection=why,
                    )
                )  # fmt: skip
                result.permission_errors.append(
                    {
                        "tool": denial.tool,
                        "command": denial.command,
                        "fix": fix.describe() if fix else "",
                        "objection": why,
                    }
                )
            fixes = "; ".join(fix.describe() for _, fix, _ in decision.fixes if fix) or "none"
            runtime.publish(
                RecoveryAttempt(
                    session=session.name, spawn_id=sandbox.id, strategy=recovery.strategy, attempt=recovery.escalations,
                    fix=fixes, outcome=decision.outcome, detail=decision.detail,
                )
            )  # fmt: skip
            result.recoveries.append(
                {"strategy": recovery.strategy, "fix": fixes, "outcome": decision.outcome, "detail": decision.detail}
            )
            if decision.manifest is None or not resume:
                outcome.status, outcome.detail = EndState.PERMISSION_DENIED, decision.detail
                break
            manifest, prompt = decision.manifest, decision.message
    except BaseException as exc:  # Ctrl-C, a signal, a fault: the CLI is stopped and the session still ends
        interrupted = exc
        raise
    finally:
        if session.process is not None:
            await session.process.stop("the spawn ended")
        await runtime.settle()
        if interrupted is not None:
            release(sandbox)
            runtime.end_session(session, *_cut_short(interrupted))  # settles what still waits undeliverable
            await (runtime.close() if config.runtime is None else runtime.settle())
            _took(result, session, outcome, progress)
            _report_cut_short(config, result, sandbox, interrupted, started)
    _took(result, session, outcome, progress)
    result.status = session.stopped_as or outcome.status
    result.detail = session.stopped_by or outcome.detail
    if result.status == EndState.CRASHED and other_version:  # the likeliest cause of a CLI that would not run
        result.detail += f" ({other_version})"
    progress.phase = "integrate"

    async def repair(prompt: str) -> bool:
        """A repair run of the same CLI in the worktree: a fresh session that may merge and commit."""
        widened = manifest.widen(commands=("git add *", "git commit *", "git merge *"))
        result.runs += 1
        done = await execute(
            runtime=runtime, session=session, sandbox=sandbox, manifest=widened, executable=executable,
            prompt=prompt, resume=None, parent_env=parent_env, progress=progress, attempt=result.runs - 1,
            on_progress=config.on_progress, spent_s=outcome.spent_s,
        )  # fmt: skip
        return done.status == EndState.COMPLETED

    cut: BaseException | None = None
    try:
        await integrate(config, sandbox, session.name, runtime, result, repair)
    except SpawnError as exc:  # the work is on the branch; say why it was not proposed
        result.status, result.detail = EndState.INTEGRATION_FAILED, str(exc)
    except BaseException as exc:  # stopped while committing, pushing or proposing: journaled as such
        result.status, result.detail = _cut_short(exc)
        cut = exc
        raise
    finally:
        release(sandbox)
        session.end(result.status)
        if cut is None:  # the run's end is a breakpoint: its last records are judged (not once told to stop)
            await runtime.evaluate_session_end(session)
        runtime.end_session(session, detail=result.detail[:500])
        await (runtime.close() if config.runtime is None else runtime.settle())
        if cut is not None:
            _report_cut_short(config, result, sandbox, cut, started)
    result.duration_s = round(time.monotonic() - started, 3)
    if config.on_end is not None:
        config.on_end(result)
    return result


def _took(result: SpawnResult, session: SpawnSession, outcome: RunOutcome, progress: ProgressState) -> None:
    """What the CLI's runs gave, into the report: its summary, cost, session and the interjections it took."""
    result.summary, result.cost_usd, result.cli_session = outcome.summary, progress.cost_usd, outcome.cli_session
    result.interjections = [
        {
            "watcher": i.watcher,
            "urgent": i.urgent,
            "severity": i.severity,
            "action": i.action,
            "content": i.content,
            "via": via,
        }
        for i, via in session.delivered
    ]


def _report_cut_short(
    config: SpawnConfig, result: SpawnResult, sandbox: Sandbox, exc: BaseException, started: float
) -> None:
    """Hand ``on_end`` the report of a spawn stopped before its end: what happened so far, and how it ended."""
    if config.on_end is None:
        return
    result.status, result.detail = _cut_short(exc)
    result.duration_s = round(time.monotonic() - started, 3)
    try:  # what is on the branch so far; the uncommitted rest stays in the worktree
        result.files = changed_files(sandbox)
        result.commits = git(
            sandbox.repo, "log", "--format=%h %s", f"{sandbox.base_ref}..{sandbox.branch_ref}"
        ).splitlines()
    except (SpawnError, OSError) as err:
        result.notes.append(f"what the branch holds could not be read: {err}")
    linked = sandbox.worktree.is_dir() and not relink(sandbox)  # (git there must not reach the main checkout)
    if linked and git(sandbox.worktree, "status", "--porcelain", check=False):
        result.notes.append(f"the agent's uncommitted changes stay in {sandbox.worktree}, not committed")
    config.on_end(result)


def _cut_short(exc: BaseException) -> tuple[EndState, str]:
    """How a spawn that did not reach its end ended: interrupted (Ctrl-C, a signal, a cancel) or crashed (a fault)."""
    if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt | SystemExit):
        return EndState.INTERRUPTED, "the spawn was interrupted before it finished"
    return EndState.CRASHED, f"the spawn stopped on an unexpected error ({type(exc).__name__}: {exc})"[:500]


def _check_remote(repo: Path, remote: str) -> None:
    """The remote the branch is pushed to exists: found before the agent runs, not at the push after it."""
    found = subprocess.run(
        ["git", "-C", str(repo), "remote", "get-url", remote], capture_output=True, text=True, check=False,
        env=_gitproc.environ(),
    )  # fmt: skip
    if found.returncode != 0:
        raise ConfigurationError(
            f"the repository {repo} has no remote {remote!r} to push the spawn's branch to: add one "
            f"(git remote add {remote} URL), name another with --remote, or pass --no-pr to keep the work local"
        )


def _check_base_on_remote(repo: Path, remote: str, base: str) -> None:
    """The remote answers and holds the base branch the pull request will propose to."""
    try:
        listed = _gitproc.run(
            ["git", "-C", str(repo), "ls-remote", "--exit-code", "--heads", remote, f"refs/heads/{base}"], timeout=60
        )
    except subprocess.TimeoutExpired:
        raise ConfigurationError(
            f"the remote {remote!r} did not answer within 60s; check it (git ls-remote {remote}), or pass --no-pr"
        ) from None
    if listed.returncode == 2:
        raise ConfigurationError(
            f"the base branch {base!r} is not on the remote {remote!r}, so no pull request can propose to it: "
            f"push it first (git push -u {remote} {base}), pass --base with a branch that is there, or pass --no-pr"
        )
    if listed.returncode != 0:
        said = (listed.stderr.strip().splitlines() or ["no answer"])[-1]
        raise ConfigurationError(
            f"cannot reach the remote {remote!r} to check the base branch {base!r} is there ({said}); "
            f"fix the remote (git ls-remote {remote}), or pass --no-pr to keep the work local"
        )
