"""The scripts a package manager runs from the project's ``package.json``: ``npm run clean`` runs
the line ``scripts.clean`` holds (and npm its ``pre``/``post`` scripts), ``npm install`` the
package's own install scripts, so the rules judge that line as if it were written out."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable

from watcher.guard._simple import Command

__all__ = ["make_recipes", "package_scripts"]

_RUNS = frozenset({"run", "run-script", "rum", "urn"})
_LIFECYCLE = {"test": "test", "t": "test", "tst": "test", "start": "start", "stop": "stop", "restart": "restart"}
_INSTALLS = frozenset({"install", "i", "ci", "add", "isntall"})
_INSTALL_SCRIPTS = ("preinstall", "install", "postinstall", "prepare")
# yarn's and pnpm's own commands: any other first word is a script's name (`yarn clean`)
_OWN = frozenset(
    {"add", "audit", "bin", "cache", "config", "create", "dedupe", "dlx", "exec", "why", "info", "init", "install",
     "i", "link", "list", "ls", "outdated", "pack", "publish", "remove", "rm", "unlink", "up", "upgrade", "update",
     "version", "versions", "workspace", "workspaces", "import", "global", "login", "logout", "store", "env",
     "patch", "patch-commit", "plugin", "set", "node", "npm", "constraints", "explain", "fetch", "prune", "rebuild",
     "root", "server", "setup", "licenses", "owner", "tag", "team", "policies", "help", "x", "deploy"}
)  # fmt: skip


def package_scripts(c: Command, folder: str, read: Callable[[str], str | None]) -> list[tuple[str, str]]:
    """(script name, its line) for each script of ``folder``'s package.json that ``c`` runs; ``read``
    gives a file's text when it is one the session may have written (None: the project's own)."""
    if c.name not in ("npm", "pnpm", "yarn", "bun") or not c.args:
        return []
    words = [a for a in c.args if not a.startswith("-")]
    if not words:
        return []
    first = words[0]
    names: list[str] = []
    if first in _RUNS and len(words) > 1:
        names = [words[1]]
    elif first in _LIFECYCLE and c.name != "bun":
        names = [_LIFECYCLE[first]]
    elif first in _INSTALLS and len(words) == 1 and c.name != "bun":  # npm install: the package's own scripts
        names = list(_INSTALL_SCRIPTS)
        return [(n, line) for n in names for line in _lines(folder, [n], read)]
    elif c.name in ("yarn", "pnpm") and first not in _OWN:
        names = [first]
    if not names:
        return []
    if c.name == "npm":  # npm runs prename and postname around name
        names = [f"pre{names[0]}", names[0], f"post{names[0]}"]
    return [(n, line) for n in names for line in _lines(folder, [n], read)]


def _lines(folder: str, names: list[str], read: Callable[[str], str | None]) -> list[str]:
    scripts = _scripts(os.path.join(folder, "package.json"), read)
    return [line for n in names if isinstance(line := scripts.get(n), str)]


def _scripts(path: str, read: Callable[[str], str | None]) -> dict[str, object]:
    text = read(path)
    try:
        data = json.loads(text) if text else None
    except ValueError:
        return {}
    scripts = data.get("scripts") if isinstance(data, dict) else None
    return scripts if isinstance(scripts, dict) else {}


_MAKE_VALUED = frozenset({"-C", "--directory", "-f", "--file", "--makefile", "-j", "--jobs", "-l", "-o", "-W", "-I"})
_MAKE_DRY = frozenset({"-n", "--dry-run", "--just-print", "--recon", "-q", "--question", "-p", "--print-data-base"})
_MAKE_VAR = re.compile(r"\$[({]([A-Za-z_][\w]*)[)}]")  # $(HOME), ${HOME}: the environment's, as the shell names it


def make_recipes(c: Command, folder: str, read: Callable[[str], str | None]) -> list[tuple[str, str]]:
    """(target, its recipe as shell lines) for each target ``make`` builds from ``folder``'s Makefile
    (the first target when none is named), when ``read`` gives its text (one the session wrote)."""
    if c.name not in ("make", "gmake") or _MAKE_DRY & set(c.args):
        return []  # make -n: the recipes printed, not run
    args, targets, makefile, i = list(c.args), [], "", 0
    while i < len(args):
        a = args[i]
        if a in _MAKE_VALUED and i + 1 < len(args):
            if a in ("-C", "--directory"):
                folder = os.path.normpath(os.path.join(folder, args[i + 1]))
            elif a in ("-f", "--file", "--makefile"):
                makefile = args[i + 1]
            i += 2
            continue
        if not a.startswith("-") and "=" not in a:
            targets.append(a)
        i += 1
    names = [makefile] if makefile else ["GNUmakefile", "makefile", "Makefile"]
    text = next((t for n in names if (t := read(os.path.normpath(os.path.join(folder, n))))), None)
    if not text:
        return []
    recipes = _recipes(text)
    wanted = targets or list(recipes)[:1]
    return [(t, recipes[t]) for t in wanted if recipes.get(t)]


def _recipes(text: str) -> dict[str, str]:
    """Each rule's target and its recipe lines (``@``/``-``/``+`` prefixes dropped, ``$$`` as ``$``)."""
    out: dict[str, str] = {}
    current: list[str] = []
    for line in text.replace("\\\n", " ").split("\n"):
        if line.startswith("\t"):
            body = line[1:].lstrip("@-+ ")
            if current and body.strip():
                for t in current:
                    out[t] = (out.get(t, "") + "\n" + _MAKE_VAR.sub(r"$\1", body).replace("$$", "$")).strip()
            continue
        m = re.match(r"^([^\s:=#][^:=#]*?)\s*::?(?!=)", line)
        current = [t for t in m.group(1).split() if not t.startswith(".")] if m else []
        if m and (rest := line[m.end() :]).find(";") >= 0:  # target: deps ; recipe
            for t in current:
                out[t] = (out.get(t, "") + "\n" + rest.split(";", 1)[1].strip()).strip()
    return out
