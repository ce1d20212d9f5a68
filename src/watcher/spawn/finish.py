"""The Integrate phase of a spawn: leftovers committed, conflicts checked, branch pushed, PR opened.

Leftovers are committed whatever the outcome (nothing the agent wrote is lost); the branch is
pushed and proposed only after a successful run, and only when ``pr`` is on. A base that moved
and conflicts is merged: a small conflict (at most ``SMALL_CONFLICT_HUNKS`` hunks) goes to a
repair run of the same CLI in the worktree; a large one, or a failed repair, is reported with
its files instead of a pull request.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import subprocess
import threading
import urllib.parse
from collections.abc import Awaitable, Callable
from pathlib import Path

from watcher.core.errors import ConfigurationError, SpawnError
from watcher.core.redact import redact, redact_url
from watcher.runtime.hub import Runtime
from watcher.runtime.session import EndState
from watcher.settings import Settings
from watcher.spawn import _gitproc
from watcher.spawn._commit import CommitRefused, check_agent_commits, unsigned_note
from watcher.spawn._git_state import changed
from watcher.spawn._link import relink
from watcher.spawn._scrub import Scrubber, secret_values
from watcher.spawn.config import SpawnConfig
from watcher.spawn.events import PRCreated
from watcher.spawn.integrate import (
    GITHUB_API,
    Connections,
    PullRequest,
    abort_merge,
    changed_files,
    commit_leftovers,
    conflicting_files,
    finish_merge,
    forge_repo,
    open_pull_request,
    printable,
    push,
    rejoin_branch,
    remote_url,
    start_merge,
)
from watcher.spawn.provision import Sandbox, git
from watcher.spawn.report import SpawnResult

__all__ = ["FORGE_DEADLINE_S", "SMALL_CONFLICT_HUNKS", "Repair", "forge_target", "integrate"]

SMALL_CONFLICT_HUNKS = 3  # at most this many conflicting hunks go to a repair run; more are reported
Repair = Callable[[str], Awaitable[bool]]
_BODY_LIMIT = 60_000  # characters of a pull request's description
_NAME = re.compile(r"[\w.-]+")  # an owner's or a repository's name on a forge
FORGE_DEADLINE_S = 120.0  # the whole pull-request call, answer included
_LOOK = "see whether the forge opened the pull request, else open it by hand"


def forge_target(config: SpawnConfig, settings: Settings, repo: Path) -> tuple[str, str, str]:
    """(REST API base, owner, repository) the pull request goes to; ``ConfigurationError`` when unclear.

    Checked before the agent runs, so a typo in ``--forge-api`` or ``--forge-repo`` costs no run.
    """
    api = config.forge_api or settings.forge_api or GITHUB_API
    parts = urllib.parse.urlsplit(api)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(
            f"the forge API {redact_url(api)!r} is not an http(s) URL; pass --forge-api with the forge's REST API "
            f"base, such as {GITHUB_API}"
        )
    if "@" in parts.netloc:  # (it would be sent nowhere as a login, and shown in every message naming the URL)
        raise ConfigurationError(
            f"the forge API {redact_url(api)!r} holds a user or password; watcher signs in with the token "
            "(GITHUB_TOKEN or GH_TOKEN): give the address without them"
        )
    url = remote_url(repo, config.remote)
    host = _host(url)
    if api == GITHUB_API and host != "github.com":  # GitHub's API would be asked about another forge's repository
        raise ConfigurationError(
            f"the remote {config.remote!r} is {f'at {host}' if host else 'a local path'}, not on github.com, and no "
            "forge API is named: pass --forge-api with its forge's REST API (or set WATCHER_FORGE_API), or --no-pr"
        )
    if config.forge_repo is None:
        try:
            owner, name = forge_repo(url)
        except SpawnError as exc:
            raise ConfigurationError(str(exc)) from None
        return api, owner, name
    owner, _, name = config.forge_repo.partition("/")
    if not (_NAME.fullmatch(owner) and _NAME.fullmatch(name)):
        raise ConfigurationError(
            f"--forge-repo {config.forge_repo!r} is not OWNER/REPO; give the forge repository as acme/shop"
        )
    return api, owner, name


def _host(url: str) -> str:
    """The host a remote URL names (``https://host/...``, ``ssh://git@host/...``, ``git@host:...``); '' for a path."""
    if "://" in url:
        return (urllib.parse.urlsplit(url).hostname or "").lower()
    scp = re.match(r"(?:[^@/]+@)?([^:/]+):", url)  # git's scp-like syntax (a path has a slash before any colon)
    return scp[1].lower() if scp else ""


async def _repaired(sandbox: Sandbox, conflicts: list[str], repair: Repair | None, result: SpawnResult) -> bool:
    """Merge the moved base; a small conflict goes to a repair run of the same CLI. True when merged."""
    hunks = await asyncio.to_thread(start_merge, sandbox)
    if repair is None or hunks > SMALL_CONFLICT_HUNKS:
        await asyncio.to_thread(abort_merge, sandbox)
        result.detail = f"{hunks} conflicting hunk(s), more than a repair run takes ({SMALL_CONFLICT_HUNKS})"
        return False
    prompt = (
        f"The base branch {sandbox.base!r} moved and merging it left conflict markers in: {', '.join(conflicts)}. "
        "Resolve each conflict keeping the intent of both sides, remove the markers, then `git add` the files "
        "and `git commit --no-edit` to conclude the merge."
    )
    if await repair(prompt) and await asyncio.to_thread(finish_merge, sandbox):
        result.repaired = conflicts
        return True
    await asyncio.to_thread(abort_merge, sandbox)
    return False


def _bounded(body: str, limit: int = _BODY_LIMIT) -> str:
    """A pull request's description within what forges take (GitHub refuses a body over 65,536 characters)."""
    if len(body) <= limit:
        return body
    return body[: limit - 200].rsplit("\n", 1)[0] + "\n\n(cut here: the whole report is in the spawn's logs)\n"


def _base_moved_onto_branch(sandbox: Sandbox) -> str:
    """A note when the base branch was moved onto the spawn's own commits during the run ('' otherwise).

    Nobody but the agent makes the base point into the spawn's branch (``git branch -f main``,
    ``git update-ref``): the pull request would then show no change, and the user's base moved unreviewed.
    """
    now = git(sandbox.repo, "rev-parse", "--verify", "-q", f"{sandbox.base_ref}^{{commit}}", check=False)
    if not sandbox.start or not now or now == sandbox.start:
        return ""
    onto = ["git", "-C", str(sandbox.repo), "merge-base", "--is-ancestor", now, sandbox.branch]
    if subprocess.run(onto, capture_output=True, timeout=120, env=_gitproc.environ()).returncode != 0:
        return ""
    return (
        f"the base branch {sandbox.base} was moved during the spawn from {sandbox.start[:10]} to {now[:10]}, one of "
        f"the spawn's own commits: the agent moved it, unreviewed. If that was not you, put it back with "
        f"`git branch -f {sandbox.base} {sandbox.start[:10]}` (git reflog {sandbox.base} shows its moves)"
    )


def _worktree_gone(sandbox: Sandbox, result: SpawnResult) -> None:
    """Report a spawn whose agent deleted its worktree: its commits, and how to get the worktree back."""
    result.files = changed_files(sandbox)
    log = git(sandbox.repo, "log", "--format=%h %s", f"{sandbox.base_ref}..{sandbox.branch_ref}")
    result.commits = [printable(line) for line in log.splitlines()]
    result.status = EndState.INTEGRATION_FAILED
    result.detail = (
        f"the agent deleted its worktree {sandbox.worktree}, so what it left uncommitted is gone and nothing was "
        f"pushed or proposed; what it committed is on {sandbox.branch} ({len(result.commits)} commit(s)): "
        f"read it with `git log -p {sandbox.base}..{sandbox.branch}`, or bring the worktree back with "
        f"`git worktree prune && git worktree add {sandbox.worktree} {sandbox.branch}`"
    )


async def _propose(request: Callable[[Connections], PullRequest], api: str) -> PullRequest:
    """``request(connections)`` (the forge call) in a thread of its own, cut off by a cancel or after ``FORGE_DEADLINE_S``.

    The forge's answer is awaited, not its thread: on a cancel (Ctrl-C, SIGTERM, SIGHUP) or the
    deadline its connection is shut down and the thread left to end alone. Run in asyncio's
    executor, a request to a forge that did not answer (or trickled its answer, which no socket
    timeout catches) kept watcher alive after it was told to stop: ``asyncio.run`` waits for
    every executor thread before it returns.
    """
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[PullRequest] = loop.create_future()
    connections = Connections()

    def settle(done: PullRequest | None, failed: Exception | None) -> None:
        if answer.done():  # cancelled, or given up on
            return
        if done is not None:
            answer.set_result(done)
        else:
            answer.set_exception(failed or SpawnError("the forge call ended without an answer"))

    def work() -> None:
        try:
            done, failed = request(connections), None
        except Exception as exc:  # noqa: BLE001 - handed to the awaiting task, which raises it
            done, failed = None, exc
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits for the answer any more
            loop.call_soon_threadsafe(settle, done, failed)

    threading.Thread(target=work, name="watcher-forge", daemon=True).start()
    try:
        return await asyncio.wait_for(answer, FORGE_DEADLINE_S)
    except TimeoutError:
        raise SpawnError(
            f"the forge {redact_url(api)} did not answer the pull request within {FORGE_DEADLINE_S:g}s"
        ) from None
    finally:
        connections.cut()


def _git_tampered(sandbox: Sandbox, result: SpawnResult, paths: list[str]) -> None:
    """Report a spawn whose agent changed what git runs (config, hooks): watcher runs no git in its worktree."""
    result.status = EndState.INTEGRATION_FAILED
    result.detail = (
        f"the agent changed {', '.join(paths)} while it worked: git run there now would run programs the agent "
        f"chose (the repository's hooks, a core.fsmonitor, a filter) outside its sandbox, so watcher ran no git in "
        f"{sandbox.worktree} and committed and pushed nothing. Review that change (git -C {sandbox.repo} config "
        f"--list --show-origin, and the hooks), undo what you do not want, then commit and push {sandbox.branch} by hand"
    )


async def integrate(
    config: SpawnConfig,
    sandbox: Sandbox,
    session: str,
    runtime: Runtime,
    result: SpawnResult,
    repair: Repair | None = None,
) -> None:
    """Fill ``result`` with files and commits, and push + open the PR when the run succeeded.

    ``repair(prompt)`` runs the same CLI once more in the worktree (a small conflict with a moved
    base); True when it ended well.
    """
    if not sandbox.worktree.is_dir():  # the agent removed it: what it committed is still on the branch
        await asyncio.to_thread(_worktree_gone, sandbox, result)
        return
    broken = await asyncio.to_thread(relink, sandbox)  # else git there would act on the main checkout
    if broken:
        await asyncio.to_thread(_worktree_gone, sandbox, result)
        result.detail = broken
        return
    if tampered := await asyncio.to_thread(changed, sandbox.git_state):  # before any git runs there again
        _git_tampered(sandbox, result, tampered)
        return
    moved = await asyncio.to_thread(rejoin_branch, sandbox)
    refused: CommitRefused | None = None
    try:
        ours = await asyncio.to_thread(commit_leftovers, sandbox)
        await asyncio.to_thread(check_agent_commits, sandbox, ours)  # the hooks the agent skipped, or did not see
    except CommitRefused as exc:  # the work stays in the worktree; nothing unverified is pushed
        refused = exc
    result.files = await asyncio.to_thread(changed_files, sandbox)
    log = await asyncio.to_thread(
        git, sandbox.worktree, "log", "--format=%h %s", f"{sandbox.base_ref}..{sandbox.branch_ref}"
    )
    result.commits = [printable(line) for line in log.splitlines()]
    unsigned = await asyncio.to_thread(unsigned_note, sandbox)
    result.notes += [unsigned] if unsigned else []
    moved_base = await asyncio.to_thread(_base_moved_onto_branch, sandbox)
    if moved_base:
        result.notes.append(moved_base)
    if moved:
        result.detail = result.detail or f"the agent moved the worktree to {moved}; its commits are on {sandbox.branch}"
    if refused is not None:
        if result.ok:
            result.status, result.detail = EndState.INTEGRATION_FAILED, str(refused)
        else:  # the run's own end stays the status; the refused commit is said beside it
            result.notes.append(str(refused))
        return
    if not result.ok or not config.pr:
        return
    if not result.commits:
        result.detail = "the agent changed nothing, so there is nothing to propose"
        return
    settings = config.settings()
    token = config.token or (settings.github_token.reveal() if settings.github_token else None)
    if not token:
        raise SpawnError("opening a pull request needs a token: set GITHUB_TOKEN (or GH_TOKEN), or pass --no-pr")
    conflicts = await asyncio.to_thread(conflicting_files, sandbox, config.remote)
    if conflicts and not await _repaired(sandbox, conflicts, repair, result):
        result.status, result.conflicts = EndState.CONFLICT, conflicts
        why = f" ({result.detail})" if result.detail else ""
        result.detail = f"the base {sandbox.base!r} moved and {len(conflicts)} file(s) conflict{why}; resolve them on {sandbox.branch}"
        return
    api, owner, repo = await asyncio.to_thread(forge_target, config, settings, sandbox.repo)
    await asyncio.to_thread(push, sandbox, config.remote)
    # the forge publishes both: no key the task names or the agent's summary quotes goes with them
    scrub = Scrubber(secret_values(settings.environ, ()))
    title = scrub(redact(config.task.strip().splitlines()[0]))[:72]
    body = _bounded(scrub(redact(result.markdown(proposal=True))))
    try:
        pr = await _propose(
            lambda connections: open_pull_request(
                api, owner, repo, token=token, title=title, body=body, head=sandbox.branch, base=sandbox.base,
                connections=connections,
            ),
            api,
        )  # fmt: skip
    except SpawnError as exc:
        raise SpawnError(f"{exc}; {sandbox.branch} is pushed to {config.remote!r}: {_LOOK}") from None
    except asyncio.CancelledError:  # Ctrl-C or a signal while the forge had the request: it may have opened it
        result.notes.append(f"the spawn was stopped while the forge was opening the pull request; {sandbox.branch} "
                            f"is pushed to {config.remote!r}: {_LOOK}")  # fmt: skip
        raise
    result.pr = pr
    runtime.publish(
        PRCreated(
            session=session, spawn_id=sandbox.id, number=pr.number, url=pr.url, head=sandbox.branch, base=sandbox.base
        )
    )
