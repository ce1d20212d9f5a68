"""The worktree's link to the repository (its ``.git`` file), checked and restored before watcher runs git there.

An agent may delete the worktree's ``.git`` file (or put a repository of its own in its place).
git run in the worktree would then find the main checkout above it (the worktree lives under
``.watcher/spawns/`` in it) and act there: switch the user's checkout to the spawn's branch and
commit the user's own unfinished changes into the pull request. So the link is checked first,
and a deleted ``.git`` file is written back from the repository's own record of the worktree.
The CLI itself runs with ``GIT_CEILING_DIRECTORIES`` at the spawn's folder, so its git stops
there too.
"""

from __future__ import annotations

from pathlib import Path

from watcher.spawn.provision import Sandbox, git

__all__ = ["relink"]


def relink(sandbox: Sandbox) -> str:
    """'' when the worktree is linked to the repository (restoring a deleted ``.git`` file), else what is wrong."""
    common = Path(git(sandbox.repo, "rev-parse", "--path-format=absolute", "--git-common-dir")).resolve()
    if _linked(sandbox, common):
        return ""
    dotgit = sandbox.worktree / ".git"
    if dotgit.exists() and not dotgit.is_file():
        return (
            f"the agent replaced the worktree's link to the repository ({dotgit}) with a repository of its own, "
            f"so watcher committed and pushed nothing from {sandbox.worktree}; what the agent committed before is "
            f"on {sandbox.branch}"
        )
    admin = next(
        (
            entry
            for entry in sorted((common / "worktrees").glob("*"))
            if (entry / "gitdir").is_file() and Path((entry / "gitdir").read_text().strip()) == dotgit
        ),
        None,
    )
    if admin is None:
        return f"the agent unregistered its worktree {sandbox.worktree} from the repository; its commits are on {sandbox.branch}"
    dotgit.write_text(f"gitdir: {admin}\n")
    return (
        ""
        if _linked(sandbox, common)
        else f"the worktree {sandbox.worktree} could not be linked to the repository again"
    )


def _linked(sandbox: Sandbox, common: Path) -> bool:
    """Whether git in the worktree is git of this worktree (not of the main checkout above it, nor of another)."""
    top = git(sandbox.worktree, "rev-parse", "--show-toplevel", check=False)
    there = git(sandbox.worktree, "rev-parse", "--path-format=absolute", "--git-common-dir", check=False)
    return bool(top and there) and Path(top).resolve() == sandbox.worktree.resolve() and Path(there).resolve() == common
