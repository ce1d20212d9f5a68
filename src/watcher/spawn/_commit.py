"""watcher's own commit of what the agent left uncommitted, under the repository's hooks and signing policy.

The commit runs the repository's hooks (``pre-commit``, ``commit-msg``) and signs as the user's
config says (``commit.gpgsign``): a spawn never bypasses either. A hook that only reformatted
files (a formatter refuses once, then passes) gets a second commit of what it changed. When the
commit is still refused, ``CommitRefused`` says what refused it, in git's and the hook's words,
and how to finish by hand; the work stays staged in the worktree, and nothing is pushed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from watcher.core.errors import SpawnError
from watcher.core.redact import redact
from watcher.spawn import _gitproc
from watcher.spawn.provision import Sandbox, git

__all__ = ["CommitRefused", "commit_leftovers", "identity", "unsigned_note"]

_HOOK_TIMEOUT_S = 600  # a repository's pre-commit hooks may run its linters or tests


class CommitRefused(SpawnError):
    """git refused watcher's commit of the agent's leftovers: a hook failed, or the commit could not be signed."""

    def __init__(self, message: str, *, signing: bool) -> None:
        super().__init__(message)
        self.signing = signing


def identity(worktree: Path) -> tuple[str, ...]:
    """``-c`` options naming a committer where git knows none, as the CLI is given: the work is committed anyway."""
    options: tuple[str, ...] = ()
    for key, fallback in (("user.name", "watcher spawn"), ("user.email", "spawn@watcher.invalid")):
        if not git(worktree, "config", key, check=False):
            options += ("-c", f"{key}={fallback}")
    return options


def commit_leftovers(sandbox: Sandbox) -> str | None:
    """Commit anything the agent left uncommitted; the new commit's hash, or None when there was nothing.

    ``CommitRefused`` when the repository's hooks or its signing refuse it (twice, for a hook
    that reformatted files the first time).
    """
    if not git(sandbox.worktree, "status", "--porcelain"):
        return None
    message = f"spawn {sandbox.id}: changes the agent left uncommitted"
    for _ in range(2):
        git(sandbox.worktree, "add", "-A")
        try:
            argv = ["git", "-C", str(sandbox.worktree), *identity(sandbox.worktree), "commit", "-q", "-m", message]
            done = _gitproc.run(argv, timeout=_HOOK_TIMEOUT_S)  # stopped with the spawn, its hooks too
        except subprocess.TimeoutExpired:
            raise _refused(sandbox, f"the commit did not finish within {_HOOK_TIMEOUT_S}s (a hook hung?)") from None
        if done.returncode == 0:
            return git(sandbox.worktree, "rev-parse", "HEAD")
        changed = subprocess.run(["git", "-C", str(sandbox.worktree), "diff", "--quiet"], timeout=120).returncode
        if changed == 0:  # the hook changed nothing: trying again would be refused the same way
            break
    raise _refused(sandbox, _said(done.stdout + "\n" + done.stderr))


def _refused(sandbox: Sandbox, said: str) -> CommitRefused:
    signing = git(sandbox.worktree, "config", "--bool", "commit.gpgsign", check=False) == "true" and (
        "sign" in said or "failed to write commit object" in said
    )
    what = (
        "could not sign its commit of the work the agent left uncommitted (commit.gpgsign is on, and watcher "
        "does not commit unsigned behind your back)"
        if signing
        else "could not commit the work the agent left uncommitted: the repository's git hooks refused it"
    )
    return CommitRefused(
        f"watcher {what}; git said: {said}. The work is staged in {sandbox.worktree}, not committed and not "
        f"pushed: {'make signing work' if signing else 'fix what the hooks report'} and commit it there "
        f"(git -C {sandbox.worktree} commit), then push {sandbox.branch} and open the pull request",
        signing=signing,
    )


def _said(output: str, lines: int = 12, limit: int = 1200) -> str:
    """The last lines of a hook's or git's output, on one line, secrets redacted."""
    kept = [line.strip() for line in output.splitlines() if line.strip()][-lines:]
    text = redact(" | ".join(kept)) or "nothing"
    return text if len(text) <= limit else "…" + text[-limit:]


def unsigned_note(sandbox: Sandbox) -> str:
    """A note when the user signs commits and some on the branch are not ('' otherwise).

    The agent commits with a private HOME, so without the user's global config or their key:
    its commits are unsigned even where the user signs every commit, and the report says so.
    """
    if git(sandbox.repo, "config", "--bool", "commit.gpgsign", check=False) != "true":
        return ""
    raw = git(
        sandbox.worktree, "log", "--pretty=raw", "--abbrev-commit", f"{sandbox.base}..{sandbox.branch}", check=False
    )
    unsigned = []
    for commit in raw.split("\ncommit ") if raw else []:  # a signature is a header (no key is needed to see it)
        headers = commit.split("\n\n", 1)[0]
        if "\ngpgsig" not in headers:
            unsigned.append(headers.removeprefix("commit ").split()[0])
    if not unsigned:
        return ""
    return (
        f"{len(unsigned)} commit(s) on {sandbox.branch} are not signed ({', '.join(unsigned[:5])}): the agent "
        "commits without your key, while your config signs every commit (commit.gpgsign); sign them before "
        f"merging: git -C {sandbox.worktree} rebase --exec 'git commit --amend --no-edit -S' {sandbox.base}"
    )
