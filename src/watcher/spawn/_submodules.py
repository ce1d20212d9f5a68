"""Submodules in a spawn's worktree: checked out from the main checkout's own clones where it has them.

``git worktree add`` leaves a submodule as an empty folder, so an agent would work without the
code it vendors. Each submodule (nested ones included) is cloned from the main checkout's copy
(``.git/modules/<name>``, hard links, no network), then pointed back at its real URL; one the
main checkout never checked out, or whose copy lacks the commit, is cloned from its URL (with
no terminal prompt: a spawn never waits on a password). Nothing is written to the repository's
shared config (``git submodule init`` would register the submodule in the main checkout too).
A submodule that cannot be checked out is a note, not a failure: the spawn goes on, and says so.
"""

from __future__ import annotations

import posixpath
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from watcher.settings import Settings
from watcher.spawn import _gitproc

__all__ = ["check_out_submodules"]

_TIMEOUT_S = 300  # one submodule's clone from its URL: a large repository over a slow link


@dataclass(frozen=True, slots=True)
class _Submodule:
    name: str
    path: str
    url: str  # as .gitmodules (or the repository's config) gives it; may be relative


def check_out_submodules(
    worktree: Path, modules: Path, remote_url: str, environ: Mapping[str, str] | None = None
) -> list[str]:
    """Check out every submodule of ``worktree``; notes on those that could not be (empty when all were).

    ``modules``: where the main checkout keeps its submodules' git dirs (``<git dir>/modules``);
    ``remote_url``: the superproject's remote (or, without one, its main checkout's folder), which a
    relative submodule URL (``../lib.git``) is relative to; ``environ``: the spawn's environment
    (default: this process's, as the settings read it), which git runs in without its prompts.
    """
    env = {**(environ if environ is not None else Settings.from_env().environ), "GIT_TERMINAL_PROMPT": "0"}
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")  # unless the user set its command
    return _check_out(worktree, modules, remote_url, env)


def _check_out(worktree: Path, modules: Path, remote_url: str, env: dict[str, str]) -> list[str]:
    notes: list[str] = []
    for sub in _submodules(worktree, env):
        url = _resolve(sub.url, remote_url)
        local = modules / sub.name
        said = ""
        if (local / "HEAD").is_file():
            said = _update(worktree, sub, str(local), env, local_copy=True)
            if not said:  # its fetches go where the user's do
                _git(worktree / sub.path, env, "remote", "set-url", "origin", url)
        if not (local / "HEAD").is_file() or said:
            _clear(worktree, sub, env)
            said = _update(worktree, sub, url, env, local_copy=False)
        if said:
            notes.append(
                f"the submodule {sub.path} ({url}) could not be checked out, so the agent sees an empty folder "
                f"there: {said}. Check it out in the main checkout (git submodule update --init {sub.path}) "
                "and spawn again"
            )
            continue
        notes += _check_out(worktree / sub.path, local / "modules", url, env)
    return notes


def _submodules(worktree: Path, env: dict[str, str]) -> list[_Submodule]:
    """The submodules the worktree's commit holds (gitlinks), named and located by ``.gitmodules``."""
    if not (worktree / ".gitmodules").is_file():
        return []
    staged = _git(worktree, env, "ls-files", "-s", "-z").stdout
    links = {entry.split("\t", 1)[1] for entry in staged.split("\0") if entry.startswith("160000 ")}
    listed = _git(worktree, env, "config", "-f", ".gitmodules", "-z", "--get-regexp", r"^submodule\..*\.(path|url)$")
    fields: dict[str, dict[str, str]] = {}
    for entry in listed.stdout.split("\0"):
        key, _, value = entry.partition("\n")
        found = re.fullmatch(r"submodule\.(.+)\.(path|url)", key)
        if found:
            fields.setdefault(found[1], {})[found[2]] = value
    out = []
    for name, values in fields.items():
        path = values.get("path", "").strip("/")
        if path in links and values.get("url"):
            configured = _git(worktree, env, "config", f"submodule.{name}.url").stdout.strip()  # the user's override
            out.append(_Submodule(name, path, configured or values["url"]))
    return out


def _update(worktree: Path, sub: _Submodule, source: str, env: dict[str, str], *, local_copy: bool) -> str:
    """Clone ``source`` into the submodule's folder at the commit the worktree names; '' or git's complaint."""
    options = ["-c", f"submodule.{sub.name}.url={source}", "-c", f"submodule.{sub.name}.active=true"]
    if local_copy:  # the user's own clone, in their own .git: git refuses local submodule clones by default
        options += ["-c", "protocol.file.allow=always"]
    done = _git(worktree, env, *options, "submodule", "update", "--no-recommend-shallow", "--", sub.path)
    if done.returncode == 0:
        return ""
    lines = [line.strip() for line in (done.stderr or done.stdout).splitlines() if line.strip()]
    said = next(
        (line for line in lines if line.startswith(("fatal:", "error:"))), lines[-1] if lines else ""
    )  # the cause
    return said or f"git submodule update exited with status {done.returncode}"


def _clear(worktree: Path, sub: _Submodule, env: dict[str, str]) -> None:
    """Undo a failed clone, so the next attempt starts from an empty folder."""
    own = Path(_git(worktree, env, "rev-parse", "--path-format=absolute", "--git-dir").stdout.strip())
    for target in (own / "modules" / sub.name, worktree / sub.path):
        if target != worktree:
            shutil.rmtree(target, ignore_errors=True)
    (worktree / sub.path).mkdir(parents=True, exist_ok=True)


def _resolve(url: str, remote_url: str) -> str:
    """A submodule URL as git resolves it: ``./x`` and ``../x`` are relative to the superproject's remote."""
    if not url.startswith(("./", "../")):
        return url
    scheme, sep, rest = remote_url.rstrip("/").partition("://")
    if not sep:
        scheme, rest = "", remote_url.rstrip("/")
    joined = posixpath.normpath(posixpath.join(rest, url))
    return f"{scheme}://{joined}" if sep else joined


def _git(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``git`` in ``env``, which never waits on a person (no terminal prompt, ssh in batch mode)."""
    try:
        return _gitproc.run(["git", "-C", str(cwd), *args], timeout=_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, 1, "", f"fatal: git {args[-3:]} took more than {_TIMEOUT_S}s")
