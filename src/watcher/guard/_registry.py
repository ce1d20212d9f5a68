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

__all__ = ["insecure_install", "package_settings", "registry_setting"]

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


# a package manager's settings given as environment variables, by the key its file would hold
_ENV_KEYS = {
    "NPM_CONFIG_REGISTRY": "registry", "NPM_CONFIG_STRICT_SSL": "strict-ssl", "YARN_NPM_REGISTRY_SERVER": "npmRegistryServer",
    "YARN_ENABLE_STRICT_SSL": "enableStrictSsl", "PIP_INDEX_URL": "index-url", "PIP_EXTRA_INDEX_URL": "extra-index-url",
    "PIP_TRUSTED_HOST": "trusted-host", "PIP_FIND_LINKS": "find-links", "UV_INDEX_URL": "index-url",
    "UV_DEFAULT_INDEX": "index-url", "UV_EXTRA_INDEX_URL": "extra-index-url", "UV_INDEX": "index-url",
    "UV_INSECURE_HOST": "trusted-host", "POETRY_CERTIFICATES_PYPI_CERT": "strict-ssl",
}  # fmt: skip
_INSTALLS = frozenset({"install", "i", "add", "ci", "sync", "update", "upgrade", "up", "isntall"})


def insecure_install(x: At) -> Finding | None:
    """``NODE_TLS_REJECT_UNAUTHORIZED=0 npm install``, ``PIP_INDEX_URL=http://… pip install x``: an
    install whose environment (set on the line or exported before it) turns TLS off or fetches over
    plain HTTP from another machine: the packages' install scripts run here, from whoever answers."""
    if not x.place.values or not x.on("download-exec"):
        return None
    if x.name not in _NODE and x.name not in _PIP and x.name not in ("uv", "poetry", "pipx", "pdm"):
        return None
    if not _INSTALLS & {a for a in x.args if not a.startswith("-")}:
        return None
    for name, value in x.place.values:
        upper = name.upper()
        if upper == "NODE_TLS_REJECT_UNAUTHORIZED" and value.strip("'\"") == "0":
            return (
                "download-exec",
                f"installs packages with {name}=0: TLS is off, and anyone on the network can swap them",
            )
        key = _ENV_KEYS.get(upper)
        if key and weakens_tls(f"{key}={value}" if value not in ("0", "no") else f"{key}=false"):
            return (
                "download-exec",
                f"installs packages with {name}={value}: without TLS, anyone on the network can swap them, and their install scripts run here",
            )
    return None
