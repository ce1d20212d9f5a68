"""Provision: a branch ``spawn/<id>`` and a git worktree for it, from the base branch (seed 002).

Everything a spawn leaves on disk lives under ``<repo>/.watcher/spawns/<id>/``: the worktree
(``worktree/``, its submodules checked out), the CLI's private home (``home/``: its config, sessions and caches, so the
user's own CLI history is never touched) and the logs (``stream.jsonl``, ``stderr.log``).
``.watcher/`` is added to the repository's ``info/exclude`` so the main checkout stays clean.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from watcher.core.errors import ConfigurationError, SpawnError
from watcher.spawn import _gitproc
from watcher.spawn._git_state import git_state
from watcher.spawn._submodules import check_out_submodules

__all__ = [
    "Sandbox", "ceiling", "cleanup", "create", "git", "hold", "locate", "provision", "release", "remove", "spawn_directory",
]  # fmt: skip

_RUNNING = "running"  # in a spawn's folder while a process runs it: the pid


def git(cwd: Path, *args: str, check: bool = True) -> str:
    """Run ``git`` in ``cwd``; a failure raises ``SpawnError`` with git's own message."""
    try:
        done = _gitproc.run(["git", "-C", str(cwd), *args], timeout=120)
    except subprocess.TimeoutExpired:
        raise SpawnError(f"git {' '.join(args)} did not finish within 120s in {cwd}") from None
    except FileNotFoundError:
        raise ConfigurationError(
            "git was not found on PATH, and a spawn works in a git worktree: install git"
        ) from None
    if check and done.returncode != 0:
        said = (done.stderr or done.stdout).strip().encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        raise SpawnError(f"git {' '.join(args)} failed in {cwd}: {said}")
    return done.stdout.strip()


@dataclass(frozen=True, slots=True)
class Sandbox:
    """One provisioned spawn: where its worktree is, which branch, from which base."""

    id: str
    repo: Path
    base: str
    branch: str
    directory: Path
    provision_ms: float = 0.0
    notes: tuple[str, ...] = ()  # what provisioning could not do (a submodule it could not check out)
    start: str = ""  # the base's commit when the spawn began
    # the files that configure or hook git in the worktree, with their digests, before the agent ran (``_git_state``)
    git_state: tuple[tuple[str, str], ...] = ()

    @property
    def worktree(self) -> Path:
        return self.directory / "worktree"

    @property
    def base_ref(self) -> str:
        """The base branch as a revision git cannot take for a tag of the same name (``v1.2`` as both)."""
        return f"refs/heads/{self.base}"

    @property
    def branch_ref(self) -> str:
        return f"refs/heads/{self.branch}"

    @property
    def home(self) -> Path:
        return self.directory / "home"

    @property
    def git_dirs(self) -> tuple[Path, Path]:
        """The main repository's git dir and this worktree's own git dir (both written by a commit)."""
        common = Path(git(self.worktree, "rev-parse", "--path-format=absolute", "--git-common-dir"))
        own = Path(git(self.worktree, "rev-parse", "--path-format=absolute", "--git-dir"))
        return common, own


def _root(repo: Path) -> Path:
    try:
        return Path(git(repo, "rev-parse", "--show-toplevel"))
    except SpawnError:
        if git(repo, "rev-parse", "--is-bare-repository", check=False) == "true":
            raise ConfigurationError(
                f"{repo} is a bare repository, with no working tree to branch from; pass --repo with a clone of it"
            ) from None
        raise ConfigurationError(
            f"{repo} is not a git repository; pass --repo with the repository to work in"
        ) from None


def locate(repo: str | Path, *, base: str | None = None, spawn_id: str | None = None) -> Sandbox:
    """Where spawn ``spawn_id`` (default: a new id) would live, from ``base`` (default: the current branch).

    It checks what can fail (not a repository, no such base, the id taken) and creates nothing,
    so a spawn checks the rest of its configuration before a worktree or a branch exists.
    """
    root = _root(Path(repo))
    base = _current_branch(root) if base is None else base
    if not _is_branch(root, base):
        raise ConfigurationError(
            f"base branch {base!r} does not exist in {root}; pass --base with one of its branches (`git branch` lists them)"
        )
    spawn_id = spawn_id or secrets.token_hex(4)
    if "/" in spawn_id or not _is_branch_name(root, f"spawn/{spawn_id}"):  # it names a folder and a branch
        raise ConfigurationError(
            f"the spawn id {spawn_id!r} cannot name both a folder and a git branch: use letters, digits, '-' and '_'"
        )
    directory = _spawns(root) / spawn_id
    for folder in (directory.parent.parent, directory.parent):
        if folder.exists() and not folder.is_dir():
            raise ConfigurationError(
                f"{folder} is a file, and spawns keep their worktrees and logs in a folder there: move the file away"
            )
    if directory.exists():
        raise ConfigurationError(f"spawn {spawn_id!r} already exists at {directory}; choose another id")
    if _is_branch(root, f"spawn/{spawn_id}"):
        raise ConfigurationError(f"the branch spawn/{spawn_id} already exists in {root}; choose another spawn id")
    return Sandbox(spawn_id, root, base, f"spawn/{spawn_id}", directory)


def _current_branch(root: Path) -> str:
    """The branch checked out in ``root``; ``ConfigurationError`` when there is none to start from."""
    if git(root, "rev-parse", "--verify", "-q", "HEAD", check=False) == "":
        raise ConfigurationError(
            f"the repository {root} has no commits yet, and a spawn's branch starts from one: commit something first"
        )
    # (not --short: it gives `heads/main` when a tag is named `main` too)
    branch = git(root, "symbolic-ref", "-q", "HEAD", check=False).removeprefix("refs/heads/")
    if not branch or branch.startswith("refs/"):
        raise ConfigurationError(
            f"HEAD is detached in {root}, so there is no current branch to start from and propose to: "
            "check out a branch, or pass --base BRANCH"
        )
    return branch


def _is_branch(root: Path, name: str) -> bool:
    """Whether ``name`` is a local branch (a tag, a commit or ``origin/main`` is not one a pull request can target)."""
    if not name or name.startswith("-"):
        return False
    found = subprocess.run(
        ["git", "-C", str(root), "show-ref", "--verify", "-q", f"refs/heads/{name}"],
        capture_output=True,
        timeout=120,
        env=_gitproc.environ(),
    )
    return found.returncode == 0


def _is_branch_name(root: Path, name: str) -> bool:
    """Whether git takes ``name`` as a branch name (no ``..``, spaces, ``~``, a trailing ``.lock``...)."""
    done = subprocess.run(
        ["git", "-C", str(root), "check-ref-format", "--branch", name],
        capture_output=True,
        timeout=120,
        env=_gitproc.environ(),
    )
    return done.returncode == 0


def _spawns(root: Path) -> Path:
    return root / ".watcher" / "spawns"


def spawn_directory(repo: str | Path, spawn_id: str) -> Path:
    """Where spawn ``spawn_id`` of ``repo`` keeps its worktree, its CLI's home and its logs."""
    return _spawns(_root(Path(repo))) / spawn_id


def create(sandbox: Sandbox, environ: Mapping[str, str] | None = None) -> Sandbox:
    """Create the branch and the worktree ``locate`` placed; the sandbox again, with the time it took.

    ``environ``: the spawn's environment, which the submodules' clones run in (default: this process's).
    A failure leaves nothing behind (no directory that would make the id look taken) and raises ``SpawnError``.
    """
    started = time.perf_counter()
    try:
        _exclude(sandbox.repo)
        sandbox.directory.mkdir(parents=True)
    except OSError as exc:
        raise SpawnError(f"cannot make the spawn's folder {sandbox.directory}: {exc.strerror or exc}") from None
    try:
        _add_worktree(sandbox)
        sandbox.home.mkdir(mode=0o700)  # the CLI keeps its sessions there, and Codex a snapshot of its environment
        common = Path(git(sandbox.repo, "rev-parse", "--path-format=absolute", "--git-common-dir"))
        remote = git(sandbox.repo, "config", "remote.origin.url", check=False) or str(sandbox.repo)
        notes = check_out_submodules(sandbox.worktree, common / "modules", remote, environ) + _lfs_notes(sandbox)
    except BaseException:
        remove(sandbox, delete_branch=True)
        shutil.rmtree(sandbox.directory, ignore_errors=True)
        raise
    start = git(sandbox.repo, "rev-parse", "--verify", f"{sandbox.base_ref}^{{commit}}")
    hooks = Path(git(sandbox.worktree, "rev-parse", "--path-format=absolute", "--git-path", "hooks"))
    return replace(
        sandbox,
        provision_ms=(time.perf_counter() - started) * 1000,
        notes=tuple(notes),
        start=start,
        git_state=git_state(*sandbox.git_dirs, hooks),
    )


def _add_worktree(sandbox: Sandbox) -> None:
    """``git worktree add``; a checkout that fails on a filter the repository configures (Git LFS) says so."""
    try:
        git(sandbox.repo, "worktree", "add", "-q", "-b", sandbox.branch, str(sandbox.worktree), sandbox.base_ref)
    except SpawnError as exc:
        said = str(exc).split(": ", 1)[-1]
        if "filter" not in said and "git-lfs" not in said:
            raise
        lfs = " (for Git LFS: install git-lfs and run `git lfs install`, and let it reach its server)"
        raise SpawnError(
            f"checking out {sandbox.base} in the spawn's worktree failed on a git filter the repository configures: "
            f"{' '.join(said.split())}. Make that filter work here{lfs if 'lfs' in said else ''}, then spawn again"
        ) from None


def _lfs_notes(sandbox: Sandbox) -> list[str]:
    """A note when the repository tracks files with Git LFS and no LFS filter is set up: the agent sees pointers."""
    attributes = sandbox.worktree / ".gitattributes"
    try:
        tracked = "filter=lfs" in attributes.read_text(errors="replace")
    except OSError:
        return []
    if not tracked or git(sandbox.repo, "config", "--get-regexp", r"^filter\.lfs\.", check=False):
        return []
    return [
        "the repository tracks files with Git LFS, and git-lfs is not set up here: the agent sees (and may commit) "
        "pointer files instead of their content; install git-lfs and run `git lfs install` for the real files"
    ]


def hold(sandbox: Sandbox) -> None:
    """Mark the spawn as running in this process, so ``cleanup`` leaves its worktree alone."""
    (sandbox.directory / _RUNNING).write_text(str(os.getpid()))


def release(sandbox: Sandbox) -> None:
    """The spawn no longer runs: ``cleanup`` may remove it."""
    (sandbox.directory / _RUNNING).unlink(missing_ok=True)
    link = _links() / sandbox.id
    if link.is_symlink() and os.readlink(link) == str(sandbox.directory):
        link.unlink(missing_ok=True)


def ceiling(sandbox: Sandbox) -> str:
    """What ``GIT_CEILING_DIRECTORIES`` names so the CLI's git never looks above the spawn's folder.

    The variable is a ``:``-separated list with no escape: a folder whose path holds ``:``
    (``backup 10:30/shop``) split in two, and git then found the main checkout above the
    worktree. Such a folder is named by a link to it in a private temporary folder (git resolves
    links in the list); ``release`` removes it.
    """
    directory = str(sandbox.directory)
    folder = _links()
    if ":" not in directory or ":" in str(folder):
        return directory
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        status = folder.lstat()
        if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.getuid() or status.st_mode & 0o077:
            return directory  # not a folder of ours alone: a link there could be swapped
        link = folder / sandbox.id
        if not (link.is_symlink() and os.readlink(link) == directory):
            link.unlink(missing_ok=True)
            link.symlink_to(directory)
    except OSError:
        return directory
    return str(link)


def _links() -> Path:
    return Path(tempfile.gettempdir()) / f"watcher-spawn-ceilings-{os.getuid()}"


def _running(directory: Path) -> int | None:
    """The pid of the process running the spawn in ``directory``, if it still runs."""
    try:
        pid = int((directory / _RUNNING).read_text())
        os.kill(pid, 0)
    except (OSError, ValueError):  # no mark, a broken one, or its process is gone (a crash, a SIGKILL)
        return None
    return pid


def provision(repo: str | Path, *, base: str | None = None, spawn_id: str | None = None) -> Sandbox:
    """Create ``spawn/<id>`` from ``base`` (default: the current branch) and its worktree."""
    return create(locate(repo, base=base, spawn_id=spawn_id))


def _exclude(root: Path) -> None:
    exclude = Path(git(root, "rev-parse", "--path-format=absolute", "--git-common-dir")) / "info" / "exclude"
    text = exclude.read_text() if exclude.exists() else ""
    if ".watcher/" not in text.splitlines():
        exclude.parent.mkdir(parents=True, exist_ok=True)
        exclude.write_text(text + ("" if text.endswith("\n") or not text else "\n") + ".watcher/\n")


def remove(sandbox: Sandbox, *, delete_branch: bool = False) -> None:
    """Remove the worktree (and the branch when asked); the logs stay."""
    git(sandbox.repo, "worktree", "remove", "--force", str(sandbox.worktree), check=False)
    if delete_branch:
        git(sandbox.repo, "branch", "-D", sandbox.branch, check=False)


def cleanup(repo: str | Path) -> tuple[list[str], list[str]]:
    """Remove every spawn worktree of ``repo`` and its branch (``watcher spawn --cleanup``).

    Returns (the ids removed, notes on branches kept): a branch whose commits are on a remote but
    not merged into any local branch is kept, since it may be an open pull request's head.
    """
    root = _root(Path(repo))
    spawns = _spawns(root)
    removed, kept = [], []
    for directory in sorted(spawns.iterdir()) if spawns.is_dir() else []:
        worktree = directory / "worktree"
        if not worktree.exists():
            continue
        pid = _running(directory)
        if pid is not None and pid != os.getpid():
            kept.append(f"spawn/{directory.name} and its worktree (the spawn is running, in process {pid})")
            continue
        branch = git(worktree, "rev-parse", "--abbrev-ref", "HEAD", check=False)
        git(root, "worktree", "remove", "--force", str(worktree), check=False)
        removed.append(directory.name)
        if not branch.startswith("spawn/"):
            continue
        pushed = git(root, "branch", "-r", "--contains", branch, check=False)
        merged = git(root, "branch", "--merged", "HEAD", "--list", branch, check=False)
        if pushed and not merged:
            kept.append(
                f"{branch} (pushed and not merged: delete it with `git branch -D {branch}` when its pull request is done)"
            )
        else:
            git(root, "branch", "-D", branch, check=False)
    git(root, "worktree", "prune", check=False)
    return removed, kept
