"""watcher's own commit of what the agent left uncommitted, under the repository's hooks and signing policy.

The commit runs the repository's hooks (``pre-commit``, ``commit-msg``) and signs as the user's
config says (``commit.gpgsign``): a spawn never bypasses either. It runs in watcher's own
environment, so the user's global git config counts (``core.hooksPath``, signing, identity).
The agent's own commits are made with a private HOME (no global config: no global hooks path)
and may skip the hooks (``git commit --no-verify``): ``check_agent_commits`` runs the hooks
over them before anything is pushed. A hook that only reformatted
files (a formatter refuses once, then passes) gets a second commit of what it changed. When the
commit is still refused, ``CommitRefused`` says what refused it, in git's and the hook's words,
and how to finish by hand; the work stays staged in the worktree, and nothing is pushed.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from watcher.core.errors import SpawnError
from watcher.core.redact import redact
from watcher.spawn import _gitproc
from watcher.spawn.provision import Sandbox, git

__all__ = ["CommitRefused", "check_agent_commits", "commit_leftovers", "identity", "unsigned_note"]

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


def commit_leftovers(sandbox: Sandbox, message: str = "") -> str | None:
    """Commit anything the agent left uncommitted; the new commit's hash, or None when there was nothing.

    ``CommitRefused`` when the repository's hooks or its signing refuse it (twice, for a hook
    that reformatted files the first time).
    """
    if not git(sandbox.worktree, "status", "--porcelain"):
        return None
    message = message or f"spawn {sandbox.id}: changes the agent left uncommitted"
    for _ in range(2):
        git(sandbox.worktree, "add", "-A")
        try:
            argv = ["git", "-C", str(sandbox.worktree), *identity(sandbox.worktree), "commit", "-q", "-m", message]
            done = _gitproc.run(argv, timeout=_HOOK_TIMEOUT_S)  # stopped with the spawn, its hooks too
        except subprocess.TimeoutExpired:
            raise _refused(sandbox, f"the commit did not finish within {_HOOK_TIMEOUT_S}s (a hook hung?)") from None
        if done.returncode == 0:
            return git(sandbox.worktree, "rev-parse", "HEAD")
        changed = subprocess.run(
            ["git", "-C", str(sandbox.worktree), "diff", "--quiet"], timeout=120, env=_gitproc.environ()
        ).returncode
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
        sandbox.worktree,
        "log",
        "--pretty=raw",
        "--abbrev-commit",
        f"{sandbox.base_ref}..{sandbox.branch_ref}",
        check=False,
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


def check_agent_commits(sandbox: Sandbox, ours: str | None) -> str | None:
    """Run the repository's ``pre-commit`` and ``commit-msg`` hooks over the commits the agent made itself.

    The agent's git could skip them (``--no-verify``) or not see them (a ``core.hooksPath`` in the
    user's global config, which its private HOME hides), and the hooks are what the user counts on
    to gate what is pushed. ``pre-commit`` runs once over the agent's whole change (HEAD detached at
    where the branch began, the index at its tip: what the hook would see of one commit of it all);
    ``commit-msg`` over each message. A hook that only reformatted files gets a commit of its fixes
    (its hash is returned). ``ours``: watcher's commit of the leftovers, which ran the hooks already.
    ``CommitRefused`` when a hook refuses; nothing is changed on the branch then.
    """
    hooks = _active_hooks(sandbox.worktree)
    tip = git(sandbox.worktree, "rev-parse", "HEAD")
    start = git(sandbox.worktree, "merge-base", sandbox.start or sandbox.base_ref, tip, check=False)
    if not hooks or not start:
        return None
    commits = git(sandbox.worktree, "rev-list", "--no-merges", f"{start}..{tip}").split()
    agents = [c for c in commits if c != ours]
    if not agents:
        return None
    shown = ", ".join(git(sandbox.worktree, "log", "-1", "--format=%h %s", c) for c in agents[:3])
    shown += f" and {len(agents) - 3} more" if len(agents) > 3 else ""
    for commit in agents if "commit-msg" in hooks else []:
        done = _message_hook(sandbox, commit)
        if done.returncode != 0:
            raise _agent_refused(
                sandbox, "commit-msg", git(sandbox.worktree, "log", "-1", "--format=%h %s", commit), done
            )
    if "pre-commit" not in hooks:
        return None
    done = _pre_commit_over(sandbox, start, tip)
    if done.returncode == 0:
        return None
    if git(sandbox.worktree, "status", "--porcelain"):  # a formatter: its fixes are committed, under the hooks
        try:
            fixed = commit_leftovers(
                sandbox, f"spawn {sandbox.id}: the repository's hooks' fixes to the agent's commits"
            )
        except CommitRefused:
            fixed = None
        if fixed is not None and _pre_commit_over(sandbox, start, fixed).returncode == 0:
            return fixed
    raise _agent_refused(sandbox, "pre-commit", shown, done)


def _active_hooks(worktree: Path) -> set[str]:
    """Which of ``pre-commit`` and ``commit-msg`` a commit in ``worktree`` would run (``core.hooksPath`` counted)."""
    folder = Path(git(worktree, "rev-parse", "--git-path", "hooks"))
    folder = folder if folder.is_absolute() else worktree / folder
    return {name for name in ("pre-commit", "commit-msg") if os.access(folder / name, os.X_OK)}


def _pre_commit_over(sandbox: Sandbox, start: str, tip: str) -> subprocess.CompletedProcess[str]:
    """``pre-commit`` run as for one commit from ``start`` to ``tip``; the branch never moves (HEAD is detached)."""
    git(sandbox.worktree, "checkout", "-q", "--detach", tip)
    git(sandbox.worktree, "reset", "-q", "--soft", start)
    try:
        return _hook(sandbox.worktree, "pre-commit")
    finally:
        git(sandbox.worktree, "reset", "-q", "--soft", tip)
        git(sandbox.worktree, "checkout", "-q", sandbox.branch)  # what a formatter changed stays in the worktree


def _message_hook(sandbox: Sandbox, commit: str) -> subprocess.CompletedProcess[str]:
    with tempfile.NamedTemporaryFile("w", suffix=".msg", dir=sandbox.directory, delete=False) as file:
        file.write(git(sandbox.worktree, "log", "-1", "--format=%B", commit) + "\n")
    try:
        return _hook(sandbox.worktree, "commit-msg", file.name)
    finally:
        os.unlink(file.name)


def _hook(worktree: Path, name: str, *args: str) -> subprocess.CompletedProcess[str]:
    argv = ["git", "-C", str(worktree), "hook", "run", "--ignore-missing", name, *(["--", *args] if args else [])]
    try:
        return _gitproc.run(argv, timeout=_HOOK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, 1, "", f"the {name} hook did not finish within {_HOOK_TIMEOUT_S}s")


def _agent_refused(sandbox: Sandbox, hook: str, commits: str, done: subprocess.CompletedProcess[str]) -> CommitRefused:
    said = _said(done.stdout + "\n" + done.stderr)
    if "is not a git command" in said:  # git before 2.36 cannot run a hook alone
        said = "this git cannot run a hook alone (git hook run needs git 2.36 or later): " + said
    return CommitRefused(
        f"the agent's own commits ({commits}) do not pass the repository's {hook} hook, which the agent's git "
        f"skipped (git commit --no-verify) or could not see (a core.hooksPath in your global git config); the hook "
        f"said: {said}. Nothing was pushed: fix the commits on {sandbox.branch} (in {sandbox.worktree}), then push "
        "it and open the pull request",
        signing=False,
    )
