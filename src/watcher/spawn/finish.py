"""The Integrate phase of a spawn: leftovers committed, conflicts checked, branch pushed, PR opened.

Leftovers are committed whatever the outcome (nothing the agent wrote is lost); the branch is
pushed and proposed only after a successful run, and only when ``pr`` is on. A base that moved
and conflicts is reported with its files instead of a pull request.
"""

from __future__ import annotations

import asyncio
import os

from watcher.core.errors import SpawnError
from watcher.runtime.events import PRCreated
from watcher.runtime.hub import Runtime
from watcher.spawn.config import SpawnConfig
from watcher.spawn.integrate import (
    GITHUB_API,
    changed_files,
    commit_leftovers,
    conflicting_files,
    forge_repo,
    open_pull_request,
    push,
    remote_url,
)
from watcher.spawn.provision import Sandbox, git
from watcher.spawn.report import SpawnResult

__all__ = ["integrate"]


async def integrate(config: SpawnConfig, sandbox: Sandbox, session: str, runtime: Runtime, result: SpawnResult) -> None:
    """Fill ``result`` with files and commits, and push + open the PR when the run succeeded."""
    await asyncio.to_thread(commit_leftovers, sandbox)
    result.files = await asyncio.to_thread(changed_files, sandbox)
    log = await asyncio.to_thread(git, sandbox.worktree, "log", "--format=%h %s", f"{sandbox.base}..{sandbox.branch}")
    result.commits = log.splitlines()
    if not result.ok or not config.pr:
        return
    if not result.commits:
        result.detail = "the agent changed nothing, so there is nothing to propose"
        return
    env = os.environ if config.env is None else config.env
    token = config.token or env.get("GITHUB_TOKEN") or env.get("GH_TOKEN")
    if not token:
        raise SpawnError("opening a pull request needs a token: set GITHUB_TOKEN (or GH_TOKEN), or pass --no-pr")
    conflicts = await asyncio.to_thread(conflicting_files, sandbox, config.remote)
    if conflicts:
        result.status, result.conflicts = "conflict", conflicts
        result.detail = (
            f"the base {sandbox.base!r} moved and {len(conflicts)} file(s) conflict; resolve them on {sandbox.branch}"
        )
        return
    await asyncio.to_thread(push, sandbox, config.remote)
    owner, repo = (
        config.forge_repo or "/".join(forge_repo(await asyncio.to_thread(remote_url, sandbox.repo, config.remote)))
    ).split("/", 1)
    api = config.forge_api or env.get("WATCHER_FORGE_API") or GITHUB_API
    title = config.task.strip().splitlines()[0][:72] if config.task.strip() else f"spawn {sandbox.id}"
    pr = await asyncio.to_thread(
        open_pull_request,
        api,
        owner,
        repo,
        token=token,
        title=title,
        body=result.markdown(),
        head=sandbox.branch,
        base=sandbox.base,
    )
    result.pr = pr
    runtime.publish(
        PRCreated(
            session=session, spawn_id=sandbox.id, number=pr.number, url=pr.url, head=sandbox.branch, base=sandbox.base
        )
    )
