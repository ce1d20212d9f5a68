"""The git commands a spawn runs, as processes that a stopped spawn stops too.

Git runs in worker threads (``asyncio.to_thread``), which a cancel cannot stop: a Ctrl-C or a
SIGTERM while git waited on a remote that does not answer (``ls-remote``, ``fetch``, ``push``,
a submodule clone) left watcher waiting for it, up to its timeout, before it could exit. Every
git process is registered here while it runs; ``stop_all`` kills them (for ``watcher spawn``,
one spawn per process).

Every git command runs without the variables that point git at a repository, an index or a
work tree (``GIT_DIR``, ``GIT_INDEX_FILE``, ...: ``environ``): a spawn started from a git hook,
an alias or ``git rebase -x`` inherits them, and git obeys them over ``-C``, so the spawn's
branches, worktrees and commits went into another repository.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["environ", "run", "stop_all"]

# what locates a repository for git (``git rev-parse --local-env-vars``, less the ``-c`` config it passes on)
_LOCATING = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_PREFIX", "GIT_SHALLOW_FILE", "GIT_GRAFT_FILE",
    "GIT_NAMESPACE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE",
)  # fmt: skip

_RUNNING: set[subprocess.Popen[str]] = set()
_LOCK = threading.Lock()


def run(
    argv: Sequence[str], *, timeout: float, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` (stdin closed) to its end; ``subprocess.TimeoutExpired`` after ``timeout`` (it is killed).

    ``env`` (default: this process's) is passed without what would point git at another repository.
    """
    proc = subprocess.Popen(
        list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        errors="surrogateescape",  # a file or branch name that is not UTF-8 round-trips back into git's arguments
        env=environ(env),
    )  # fmt: skip
    with _LOCK:
        _RUNNING.add(proc)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    finally:
        with _LOCK:
            _RUNNING.discard(proc)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def environ(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) without the variables that locate a repository for git."""
    return {name: value for name, value in (os.environ if env is None else env).items() if name not in _LOCATING}


def stop_all() -> None:
    """Kill every git process still running, with its helpers: the spawn was stopped, nothing waits for them.

    git talks to an HTTP remote through a child (``git-remote-http``) that holds the output pipes
    open: killing git alone would still leave its reader waiting on them.
    """
    with _LOCK:
        running = list(_RUNNING)
    for proc in running:
        for pid in [*_descendants(proc.pid), proc.pid]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid``, from ``/proc`` (none where there is no ``/proc``)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            parents[int(entry.parent.name)] = int(entry.read_text().rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found
