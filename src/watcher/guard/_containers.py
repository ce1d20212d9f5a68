"""A container run with folders of this machine mounted into it: what its command does to them.

``docker run -v "$PWD":/app alpine rm -rf /app`` deletes the project: the container's ``/app``
is the project. A container's own files are its own (``docker run alpine rm -rf /`` loses
nothing here), so the command a ``docker``/``podman``/``nerdctl run`` starts is read only when a
bind mount (``-v SRC:DST``, ``--mount type=bind,src=…,dst=…``) hands it a folder of this machine,
and then with the mount written back: a path under ``DST`` becomes the same path under ``SRC``
(as written, so ``~``, ``$PWD`` and ``$(pwd)`` resolve as they do on the line), a path outside
every mount is the container's (written as a folder of no consequence), and the working folder
``-w`` given under a mount makes the command's relative paths that folder's. A named volume
(``-v pgdata:/var/lib/postgresql/data``) is Docker's, not a folder here: it maps nothing.
"""

from __future__ import annotations

import posixpath
from typing import NamedTuple

from watcher.guard._simple import Command, program

__all__ = ["ContainerRun", "container_run", "mounted"]

_RUNTIMES = frozenset({"docker", "podman", "nerdctl", "docker-compose", "podman-compose"})
_SHORT_VALUED = frozenset("aceEhlmpuvw")  # -e KEY=V, -v SRC:DST, -w DIR, -p 80:80, -u 1000, …
# long options that take no value (every other long option does: --name x, --network host, …)
_LONG_FLAGS = frozenset(
    {
        "--rm", "--detach", "--interactive", "--tty", "--privileged", "--init", "--publish-all",
        "--read-only", "--no-healthcheck", "--oom-kill-disable", "--quiet", "--help", "--sig-proxy",
        "--disable-content-trust", "--replace", "--rmi", "--tls-verify",
        "--no-deps", "--service-ports", "--use-aliases", "--build", "--remove-orphans", "--quiet-pull", "--no-TTY",
    }
)  # fmt: skip
_OUTSIDE = ".container-own-files"  # where a path of the container's own is written: a folder of the project's


class ContainerRun(NamedTuple):
    """The mounts (container path, this machine's path as written), the working folder, the command."""

    mounts: tuple[tuple[str, str], ...]
    workdir: str
    argv: tuple[str, ...]


def container_run(argv: list[str]) -> ContainerRun | None:
    """``docker run [options] IMAGE COMMAND…`` (or ``docker compose run [options] SERVICE COMMAND…``)
    with at least one bind mount given on the line and a command; else None."""
    if not argv or program(argv[0]) not in _RUNTIMES:
        return None
    args = argv[1:]
    if args[:2] in (["container", "run"], ["compose", "run"]):  # docker compose run -v SRC:DST SERVICE CMD
        args = args[1:]
    if args[:1] != ["run"]:
        return None
    mounts: list[tuple[str, str]] = []
    workdir, i = "", 1
    while i < len(args) and args[i].startswith("-") and args[i] != "-":
        option, value, i = _option(args, i)
        if option in ("-v", "--volume") and value is not None:
            parts = value.split(":")
            if len(parts) >= 2 and _host_path(parts[0]):
                mounts.append((parts[1].rstrip("/") or "/", parts[0]))
        elif option == "--mount" and value is not None:
            fields = dict(f.split("=", 1) for f in value.split(",") if "=" in f)
            source = fields.get("source") or fields.get("src") or ""
            target = fields.get("target") or fields.get("dst") or fields.get("destination") or ""
            if fields.get("type", "volume") == "bind" and source and target:
                mounts.append((target.rstrip("/") or "/", source))
        elif option in ("-w", "--workdir") and value is not None:
            workdir = value.rstrip("/") or "/"
    command = tuple(args[i + 1 :])  # after the image
    if not mounts or not command:
        return None
    return ContainerRun(tuple(sorted(mounts, key=lambda m: -len(m[0]))), workdir, command)


def _option(args: list[str], i: int) -> tuple[str, str | None, int]:
    """(the option at ``args[i]``, its value or None, where the next one starts)."""
    word = args[i]
    if word.startswith("--"):
        if "=" in word:
            name, value = word.split("=", 1)
            return name, value, i + 1
        if word in _LONG_FLAGS or i + 1 >= len(args):
            return word, None, i + 1
        return word, args[i + 1], i + 2
    last = word[-1]
    if len(word) > 2 and word[1] in _SHORT_VALUED:  # -v/a:/b written together
        return word[:2], word[2:], i + 1
    if last in _SHORT_VALUED and i + 1 < len(args):  # -v SRC:DST, -it … -w DIR
        return "-" + last, args[i + 1], i + 2
    return word, None, i + 1


def _host_path(source: str) -> bool:
    """A mount's source that is a folder of this machine (a named volume is a bare name)."""
    return source.startswith(("/", ".", "~", "$")) or "/" in source


def mounted(run: ContainerRun, commands: list[Command]) -> list[Command]:
    """``commands`` (what the container runs) with their paths as this machine sees them; none
    when no path of theirs is under a mount (then they only touch the container)."""
    out, touched = [], False
    for cmd in commands:
        words = [*cmd.argv[1:], *(t for _, t in cmd.redirects)]
        touched = touched or any(_under(run, w) for w in words)
        argv = (cmd.argv[0], *(_word(run, w) for w in cmd.argv[1:])) if cmd.argv else ()
        out.append(cmd._replace(argv=argv, redirects=tuple((op, _word(run, t)) for op, t in cmd.redirects)))
    return out if touched else []


def _under(run: ContainerRun, word: str) -> bool:
    if word.startswith("/"):
        word = posixpath.normpath(word)
    return _mount_of(run, word) is not None or (_relative(word) and _mount_of(run, run.workdir) is not None)


def _word(run: ContainerRun, word: str) -> str:
    if word.startswith("/"):
        word = posixpath.normpath(word)  # /app/../.. is the container's root, not above the mount's source
        found = _mount_of(run, word)
        if found is None:
            return _OUTSIDE + word  # the container's own file
        target, source = found
        return source.rstrip("/") + word[len(target) :] if target != "/" else source.rstrip("/") + word
    if _relative(word) and run.workdir:
        return _word(run, run.workdir.rstrip("/") + "/" + word)
    return word


def _relative(word: str) -> bool:
    """A path word relative to the working folder: ``.``, ``..``, ``build/x``, ``*`` (not an option or a bare name)."""
    if word.startswith(("-", "/", "~", "$")) or "=" in word:
        return False
    return word in (".", "..") or "/" in word or any(c in word for c in "*?[")


def _mount_of(run: ContainerRun, path: str) -> tuple[str, str] | None:
    for target, source in run.mounts:
        if target == "/" or path == target or path.startswith(target + "/"):
            return target, source
    return None
