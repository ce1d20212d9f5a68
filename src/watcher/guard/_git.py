"""Force-pushes and mirror pushes to shared branches.

A push is judged by the branches it would overwrite: the refspecs given, else the current branch
(read from the repository's ``HEAD``, as text: no git process). Shared branches are the pack's
``git.protected`` globs plus the remote's default branch (``refs/remotes/origin/HEAD``).
"""

from __future__ import annotations

import os
import re
import shlex
from fnmatch import fnmatchcase

from watcher.guard._files import Finding, regular_text
from watcher.guard._lazy import lazy
from watcher.guard._paths import Place
from watcher.guard._policy import Policy
from watcher.guard._simple import Command

__all__ = ["aliased", "clean_finding", "current_branch", "push_finding", "shell_aliased"]

_GLOBAL_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"})
_PUSH_VALUE = frozenset({"--repo", "--receive-pack", "--exec", "-o", "--push-option", "--signed"})


def _git_dir(start: str) -> str | None:
    folder = start
    while True:
        candidate = os.path.join(folder, ".git")
        if os.path.isdir(candidate):
            return candidate
        if os.path.isfile(candidate):
            try:
                with open(candidate, encoding="utf-8") as f:
                    line = f.read(4096).strip()
            except OSError:
                return None
            if line.startswith("gitdir:"):
                return os.path.normpath(os.path.join(folder, line[7:].strip()))
            return None
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _read_ref(path: str) -> str:
    try:
        text = regular_text(path)[:4096].strip()
    except OSError:  # missing, or not a regular file (a FIFO would hold the guard)
        return ""
    return text[5:].strip() if text.startswith("ref:") else ""


def current_branch(cwd: str) -> tuple[str, str]:
    """(the checked-out branch, the remote's default branch); "" where unknown."""
    git_dir = _git_dir(cwd)
    if git_dir is None:
        return "", ""
    head = _read_ref(os.path.join(git_dir, "HEAD")).removeprefix("refs/heads/")
    common = git_dir
    if os.path.isfile(os.path.join(git_dir, "commondir")):
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as f:
            common = os.path.normpath(os.path.join(git_dir, f.read().strip()))
    default = _read_ref(os.path.join(common, "refs", "remotes", "origin", "HEAD")).rsplit("/", 1)[-1]
    return head, default


_TAG = re.compile(r"refs/tags/.+|v?\d+\.\d+(?:\.\d+)*(?:[-+][\w.]+)?")  # a tag by its ref or a version's shape
_ALIAS = re.compile(r"^alias\.([\w-]+)=(.*)$", re.S)


def aliased(script: str, cmds: list[Command]) -> list[Command]:
    """The git commands the line runs through an alias it defines itself (``git config alias.pf
    'push --force' && git pf origin main``, ``git -c alias.pf='push --force' pf …``), written out."""
    return [c for c in _through_aliases(script, cmds) if isinstance(c, Command)]


def shell_aliased(script: str, cmds: list[Command]) -> list[str]:
    """The shell lines the line runs through a shell alias it defines itself (``git -c alias.x='!rm -rf ~'
    x``: git hands ``rm -rf ~`` to the shell, with the alias's arguments after it)."""
    lines = [c for c in _through_aliases(script, cmds) if isinstance(c, str)]
    if "-c" in script:  # git -c core.pager='rm -rf ~' log: git hands the setting's command to the shell
        lines += [
            m.group(2).removeprefix("!")
            for c in cmds
            if c.name == "git"
            for before, a in zip(c.args, c.args[1:], strict=False)
            if before == "-c" and (m := _RUN_SETTING.match(a))
        ]
    return lines


# settings whose value git runs as a shell command
_RUN_SETTING = re.compile(
    r"(?i)(core\.(?:pager|editor|sshcommand|fsmonitor|askpass)|sequence\.editor|diff\.external|gpg\.program"
    r"|credential\.helper|pager\.\w+|(?:diff|merge)tool\.\w+\.cmd|filter\.\w+\.(?:clean|smudge|process))=(.+)",
    re.S,
)


def _through_aliases(script: str, cmds: list[Command]) -> list[Command | str]:
    if "alias." not in script:
        return []
    aliases: dict[str, str] = {}
    for c in cmds:
        args = list(c.args)
        if c.name != "git":
            continue
        aliases.update((m.group(1), m.group(2)) for a in args if (m := _ALIAS.match(a)))  # git -c alias.x=…
        at = next((i for i, a in enumerate(args) if a == "config"), None)
        if at is not None:
            words = [a for a in args[at + 1 :] if not a.startswith("-")]
            if len(words) >= 2 and words[0].startswith("alias."):
                aliases[words[0][6:]] = words[1]
    out: list[Command | str] = []
    for c in cmds:
        if c.name != "git":
            continue
        args = list(c.args)
        i = 0
        while i < len(args) and args[i].startswith("-"):
            i += 2 if args[i] in _GLOBAL_VALUE else 1
        value = aliases.get(args[i]) if i < len(args) else None
        if value and value.startswith("!"):  # a shell alias: the shell runs the rest, then the arguments
            out.append(" ".join([value[1:], *(shlex.quote(a) for a in args[i + 1 :])]))
        elif value:
            try:
                out.append(c._replace(argv=(c.argv[0], *args[:i], *shlex.split(value), *args[i + 1 :])))
            except ValueError:
                continue
    return out


def clean_finding(args: list[str], place: Place) -> Finding | None:
    """``git clean -fdx`` run in the home or a folder above the project: everything git does not
    track there is deleted (a home kept in git tracks a few dotfiles, not the files beside them)."""
    cwd = place.cwd
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "-C" and i + 1 < len(args):
            cwd = place.moved(args[i + 1]).cwd
        i += 2 if args[i] in _GLOBAL_VALUE else 1
    if i >= len(args) or args[i] != "clean":
        return None
    short = "".join(a[1:] for a in args[i + 1 :] if a.startswith("-") and not a.startswith("--"))
    forced = "f" in short or "--force" in args
    if not forced or "n" in short or "--dry-run" in args or not ("d" in short or "x" in short):
        return None
    if cwd in ("/", place.home) or (cwd != place.project and place.holds_project(cwd)):
        where = "your home folder" if cwd == place.home else cwd
        return "destructive-delete", f"runs git clean in {where}: every file git does not track there is deleted"
    return None


_PUSH_CONFIG = lazy(r"remote\.[^.\s]+\.push=(\S+)$")


def push_finding(args: list[str], place: Place, policy: Policy) -> Finding | None:
    """A push that would overwrite or delete a shared branch (any force-push under ``strict``)."""
    cwd = place.cwd
    i = 0
    while i < len(args) and args[i].startswith("-"):  # git's own options come before the subcommand
        if args[i] == "-C" and i + 1 < len(args):
            cwd = place.moved(args[i + 1]).cwd
        i += 2 if args[i] in _GLOBAL_VALUE else 1
    if i >= len(args) or args[i] != "push" or "--dry-run" in args or "-n" in args[i + 1 :]:
        return None
    rest = args[i + 1 :]
    flags, positional = [], []
    j = 0
    while j < len(rest):
        a = rest[j]
        if a.startswith("-"):
            flags.append(a)
            j += 2 if a in _PUSH_VALUE else 1
            continue
        positional.append(a)
        j += 1
    short = "".join(f[1:] for f in flags if not f.startswith("--"))
    force = "f" in short or any(
        f == "--force" or f.startswith(("--force=", "--force-with-lease", "--force-if-includes")) for f in flags
    )
    lease_only = force and "f" not in short and not any(f == "--force" or f.startswith("--force=") for f in flags)
    if "--mirror" in flags:
        return (
            "force-push",
            "pushes with --mirror: every branch and tag of the remote is overwritten or deleted to match this clone",
        )
    if "--prune" in flags and (len(positional) < 2 or any("*" in p for p in positional[1:])):
        return (  # with a branch named, only that branch's counterpart is pruned
            "force-push",
            "pushes with --prune: every branch of the remote this clone does not have is deleted (main too, if it is missing here)",
        )
    deleting = "-d" in flags or "--delete" in flags
    refspecs = positional[1:]
    if not refspecs:  # git -c remote.origin.push=+HEAD:main push: the configured refspec is pushed
        refspecs = [m.group(1) for a in args[:i] if (m := _PUSH_CONFIG.match(a))]
    head, default = current_branch(cwd)
    head = dict(place.values).get("{git-branch}") or head  # switched to earlier in the line
    protected = [*policy.data["git"]["protected"], *([default] if default else [])]
    targets = []
    for spec in refspecs:
        plus = spec.startswith("+")
        src, _, dst = spec.lstrip("+").partition(":")
        if ":" in spec and not src:
            deleting = True
        name = (dst or src).removeprefix("refs/heads/")
        if (var := re.fullmatch(r"\$\{?([A-Za-z_]\w*)\}?", name)) and (value := dict(place.values).get(var.group(1))):
            name = value.removeprefix("refs/heads/")  # b=main; git push -f origin "$b": the line set it
        if name.startswith(("$", "`")):
            name = "$"  # "$(git symbolic-ref …)", "$BRANCH": known only when it runs
        if name == "HEAD":
            name = head or "?"  # the current branch, unknown here: judged as a push without a refspec is
        targets.append((name, plus))
    if not refspecs:
        targets = [(head or "?", False)] if "--all" not in flags and "--branches" not in flags else [("*", False)]
    if "--prune" in flags and ("--all" in flags or "--branches" in flags or any("*" in r for r in refspecs)):
        return "force-push", "pushes with --prune: every remote branch this clone does not have is deleted"
    if not refspecs and any(a.replace(" ", "") == "push.default=matching" for a in args[:i]):
        targets = [("*", False)]  # -c push.default=matching: every branch with a namesake on the remote
    if any(spec.startswith(":refs/tags/") for spec in refspecs) or (deleting and any("tags/" in r for r in refspecs)):
        return "force-push", "deletes a published tag on the remote: what others built from it no longer matches"
    moved_tag = next((r for r in refspecs if _TAG.fullmatch(r.lstrip("+").split(":")[-1])), None)
    if (force or any(r.startswith("+") for r in refspecs)) and moved_tag:
        return "force-push", f"force-pushes the tag {moved_tag}: a published release moves under those who use it"
    if force and "--tags" in flags:
        return (
            "force-push",
            "force-pushes every tag: releases others build from would be moved; push a new tag instead",
        )
    any_force = policy.data["git"]["any_force"]
    for name, plus in targets:
        unknown = name == "*" or (name in ("?", "$") and not lease_only)  # a lease on an unknown branch: theirs is safe
        shared = unknown or any(fnmatchcase(name, p) for p in protected)
        forced = force or plus
        if deleting and shared and name not in ("?", "*", "$"):
            return "force-push", f"deletes the shared branch {name} on the remote"
        if forced and (shared or any_force):
            which = {
                "?": "the current branch (unknown here)",
                "*": "every branch",
                "$": "a branch named only as it runs",
            }.get(name, name)
            how = "force-pushes (with lease)" if lease_only else "force-pushes"
            if not (unknown or shared):  # the strict pack: every force-push is the team's call
                return (
                    "force-push",
                    f"{how} to {which}: the team's policy allows no force-push (rewrite history locally, then push a new branch)",
                )
            why = "may be shared" if unknown else "is shared"
            return (
                "force-push",
                f"{how} to {which}, which {why}: others' commits on it would be overwritten; push a branch of your own and open a pull request",
            )
    return None
