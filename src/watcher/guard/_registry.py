"""Package managers' settings changed from the command line (``npm config set``, ``pip config
set``, ``conda config --add``, ``gem sources --add``), read as the line they write into the
manager's own file, so a command and a Write of ``.npmrc`` or ``pip.conf`` are judged alike.

Under ``standard`` a setting that turns TLS off or sends installs over plain HTTP to another
machine is tampering (anyone on the network can swap packages). Under a pack that sets
``network.any_registry`` (``strict``), pointing installs at any registry but the known ones is
team policy: a private registry is ordinary work, but which one is the team's choice.
"""

from __future__ import annotations

import re

from watcher.guard._context import At
from watcher.guard._files import Finding, foreign_registry, weakens_tls

__all__ = ["package_settings", "registry_setting"]

_NODE = frozenset({"npm", "pnpm", "yarn", "bun"})
_PIP = frozenset({"pip", "pip3"})
# pip's and conda's options before the subcommand's words: --user, --global, --site, --file FILE
_VALUED = frozenset({"--file", "-f", "--env", "--name", "-n", "--prefix", "-p"})
# keys that say where packages come from
_SOURCE_KEY = re.compile(
    r"(?i)(?:.*[.:])?(?:registry|npmRegistryServer|(?:extra-)?index-url|index|find-links|channels?|sources?|default_channels|channel_alias)"
)


def package_settings(x: At) -> list[tuple[str, str]]:
    """The (key, value) pairs a package manager's config command writes, as its file holds them."""
    words, i, out = list(x.args), 0, []
    rest: list[str] = []
    while i < len(words):  # words without options (and their values)
        if words[i] in _VALUED:
            i += 2
            continue
        rest.append(words[i])
        i += 1
    if x.name in _NODE or x.name in _PIP:
        plain = [w for w in rest if not w.startswith("-")]
        at = 2 if plain[:2] == ["config", "set"] else 1 if plain[:1] == ["set"] and x.name in _NODE else 0
        if at:
            pairs = plain[at:]
            while pairs:  # npm config set a=1 b=2, npm config set a 1
                key, eq, value = pairs[0].partition("=")
                if eq:
                    out.append((key, value))
                    pairs = pairs[1:]
                else:
                    out.append((key, pairs[1] if len(pairs) > 1 else ""))
                    pairs = pairs[2:]
    elif x.name in ("conda", "mamba", "micromamba") and rest[:1] == ["config"]:
        for n, w in enumerate(rest):
            if w in ("--set", "--add", "--append", "--prepend") and n + 2 < len(rest):
                out.append((rest[n + 1], rest[n + 2]))
    elif x.name == "gem" and rest[:1] == ["sources"]:
        out += [("source", rest[n + 1]) for n, w in enumerate(rest[:-1]) if w in ("--add", "-a")]
    return out


def registry_setting(x: At) -> Finding | None:
    if x.name not in _NODE and x.name not in _PIP and x.name not in ("conda", "mamba", "micromamba", "gem"):
        return None
    for key, value in package_settings(x):
        line = f"{key}={value}"
        if x.on("config-tampering") and weakens_tls(line):
            return (
                "config-tampering",
                f"sets {key} to {value} for every later install: without TLS, anyone on the network can swap packages",
            )
        if not (x.policy.data["network"].get("any_registry") and x.on("team-policy") and _SOURCE_KEY.fullmatch(key)):
            continue
        if host := foreign_registry(f"registry={value}", x.policy):
            return (
                "team-policy",
                f"installs every later package from {host} (team policy: which registry to trust is the team's choice)",
            )
    return None
