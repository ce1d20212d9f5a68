"""What watcher's own git would run in a spawn's worktree, as it was before the agent worked there.

After the agent ends, watcher runs git in the worktree with your environment, outside the agent's
sandbox: its commit runs the repository's hooks, ``git status`` a ``core.fsmonitor`` program,
``git add`` a filter driver. The agent can write some of what decides those: Codex's writable roots
hold the main repository's git dir once commits are allowed, and a ``core.hooksPath`` inside the
project (``.githooks``) is the agent's to edit. ``git_state`` is taken when the worktree is made;
``changed`` names what differs after the agent, and the spawn then runs no git there.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

__all__ = ["changed", "git_state"]

GitState = tuple[tuple[str, str], ...]


def git_state(common: Path, own: Path, hooks: Path) -> GitState:
    """(path, digest) of each file that configures or hooks git in a worktree, missing ones included.

    ``common`` and ``own``: the repository's git dir and the worktree's own; ``hooks``: the folder
    its hooks are run from (``core.hooksPath`` counted).
    """
    watched = [common / "config", common / "config.worktree", own / "config.worktree", own / "commondir", hooks]
    return tuple((str(path), _digest(path)) for path in dict.fromkeys(watched))


def changed(state: GitState) -> list[str]:
    """The paths of ``state`` whose content (or, for the hooks folder, any hook's) is not what it was."""
    return [path for path, digest in state if _digest(Path(path)) != digest]


def _digest(path: Path) -> str:
    """A file's content and whether it is executable; a folder's entries, each so; "-" for nothing there."""
    h = hashlib.blake2b(digest_size=16)
    try:
        info = path.lstat()
    except OSError:
        return "-"
    if stat.S_ISLNK(info.st_mode):
        h.update(b"link\0" + os.fsencode(os.readlink(path)))
    elif stat.S_ISDIR(info.st_mode):
        for entry in sorted(path.iterdir()):
            h.update(os.fsencode(entry.name) + b"\0" + _digest(entry).encode() + b"\0")
    else:
        h.update(b"x" if info.st_mode & stat.S_IXUSR else b"-")
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"\0unreadable")
    return h.hexdigest()
