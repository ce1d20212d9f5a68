"""A container's or a process's environment read from outside it. ``docker inspect`` prints
``Config.Env`` in full (a database container's password, an app's API keys), so the environment
picked out of it — by its format, by ``jq`` or ``grep`` after it — or its whole output sent to
another machine reaches the model, the transcript or a stranger, as ``docker exec db env`` would;
so does a container started with ``--env-file .env`` that prints its environment, and ``ps e``.
``docker inspect`` to see a container's state, address or mounts is ordinary debugging and stays
allowed."""

from __future__ import annotations

import re

from watcher.guard._context import NETWORK, At
from watcher.guard._exfiltration import remote
from watcher.guard._files import Finding, secret_file
from watcher.guard._policy import compiled
from watcher.guard._simple import Command

__all__ = ["container_env", "environment_shown"]

_RUNTIMES = frozenset({"docker", "podman", "nerdctl"})
# a format that prints the environment, or the whole configuration or object with it
_ENV_FORMAT = re.compile(r"\.Config\.Env\b|\.Env\b|json\s+\.Config\s*\}|json\s+\.\s*\}|^\s*\{\{\s*\.\s*\}\}")
# programs that send their stdin on as it is, and curl's or wget's words that send it (`-d @-`, `-T -`)
_SENDERS = frozenset({"nc", "ncat", "netcat", "socat", "telnet", "http", "https", "xh", "xhs"})
_SENDS_STDIN = re.compile(r"@-\Z|\A-\Z|\A--body-file=-\Z|\A--post-file=/dev/stdin\Z")


def _format(args: tuple[str, ...]) -> str | None:
    """The value of ``-f``/``--format`` (None: the whole JSON document is printed)."""
    for i, a in enumerate(args):
        if a in ("-f", "--format") and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--format="):
            return a[9:]
        if a.startswith("-f") and len(a) > 2 and not a.startswith("--"):
            return a[2:]
    return None


def _inspects(c: Command) -> str | None:
    """What ``c`` prints when it inspects containers: "env" (the environment), "all" (the whole
    document, the environment in it), or None (something else, or another command)."""
    if c.name not in _RUNTIMES:
        return None
    words = [a for a in c.args if not a.startswith("-")]
    if words[:1] != ["inspect"] and words[:2] not in (["container", "inspect"], ["compose", "config"]):
        return None
    if words[:2] == ["compose", "config"]:
        return "all"  # the compose file with every variable filled in
    shown = _format(c.args)
    if shown is None:
        return "all"
    return "env" if _ENV_FORMAT.search(shown) else None


def container_env(x: At) -> Finding | None:
    own = _inspects(x.cmd)
    if own == "env" and x.on("secret-read"):
        return "secret-read", "prints a container's environment (its passwords and keys): they would reach the model"
    feeder = x.cmd.feeder
    while feeder is not None and _inspects(feeder) is None:
        feeder = feeder.feeder
    if feeder is None:
        return None
    printed = _inspects(feeder)
    sends = x.name in NETWORK and (x.name in _SENDERS or any(_SENDS_STDIN.search(a) for a in x.args))
    if sends and x.on("secret-exfiltration") and remote(x):
        return (
            "secret-exfiltration",
            "sends a container's inspection (its environment's secrets) to another machine",
        )
    if printed != "all" or not x.on("secret-read"):
        return None
    if x.name in ("jq", "gojq", "yq") and any(re.search(r"\bEnv\b", a) for a in x.args):
        return "secret-read", "picks a container's environment (its passwords and keys) out of docker inspect"
    names = compiled(x.policy, "secrets.env_names")
    if x.name in ("grep", "egrep", "rg", "ag"):
        patterns = [a for a in x.args if not a.startswith("-")][:1]
        if any(names.match(re.sub(r"\W", "", p).upper()) or p.strip("^") in ("Env", '"Env"') for p in patterns):
            return "secret-read", "picks a container's secrets out of docker inspect"
    return None


_DUMPS = frozenset({"env", "printenv", "set", "export"})


def environment_shown(x: At) -> Finding | None:
    """``docker run --env-file .env alpine env``: the secrets given to a container, printed by it;
    ``ps e``/``ps -E``: the environment of every process, printed with its command line."""
    if not x.on("secret-read"):
        return None
    if x.name == "ps" and x.args:
        first = x.args[0]
        if "-E" in x.args or (not first.startswith("-") and re.fullmatch(r"[a-zA-Z]*e[a-zA-Z]*", first)):
            return "secret-read", "prints every process's environment (the tokens and keys in it) with its command"
        return None
    if x.name not in _RUNTIMES or "run" not in x.args:
        return None
    args = list(x.args)
    shows = any(
        a in _DUMPS or (args[i - 1] == "-c" and a.split()[:1] and a.split()[0] in _DUMPS) for i, a in enumerate(args)
    )
    if not shows:
        return None
    names = compiled(x.policy, "secrets.env_names")
    for i, a in enumerate(args[:-1]):
        given = args[i + 1]
        if a == "--env-file" and (why := secret_file(x.place, x.path(given), x.policy)):
            return (
                "secret-read",
                f"prints the environment of a container given {why}: its secrets would reach the model",
            )
        if a in ("-e", "--env") and "=" not in given and names.match(given):
            return "secret-read", f"prints the environment of a container given ${given}: it would reach the model"
    return None
