"""The policy in force: a pack (``standard`` or ``strict``, data files beside this module) and the
project's own ``.watcher/policy.toml``.

The project file names the pack and adds rules that allow or deny calls by tool, command and path
glob::

    pack = "strict"                       # default: standard

    [[allow]]                             # a call the pack would deny, allowed in this project
    tool = "Bash"                         # a tool-name glob (default: any tool)
    command = "rm -rf /srv/cache/*"       # a glob over the whole command line
    reason = "the cache is ours to clear"

    [[deny]]                              # a call the pack allows, denied in this project
    tool = "Read|Grep"
    path = "data/customers/**"            # a glob over the path, relative to the project or absolute
    reason = "customer data stays out of the model's context"

A file that cannot be read or holds a mistake never switches the guard off: the pack still
applies, and the problem is named in ``problems`` (``watcher hooks policy``, ``hooks status``
and the hook's answer say it).
"""

from __future__ import annotations

import json
import os
import re
from fnmatch import fnmatchcase
from typing import Any, NamedTuple

__all__ = ["PACKS", "Policy", "ProjectRule", "load_pack", "load_policy", "policy_file"]

PACKS = ("standard", "strict")
_HERE = os.path.dirname(__file__)
_CACHE: dict[str, dict[str, Any]] = {}
_RULE_KEYS = frozenset({"tool", "command", "path", "reason"})


class ProjectRule(NamedTuple):
    """One ``[[allow]]`` or ``[[deny]]`` entry of a project file (globs; ``a|b`` is either)."""

    tool: str = "*"
    command: str = ""
    path: str = ""
    reason: str = ""

    def matches(self, tool: str, command: str, paths: list[str], root: str) -> bool:
        if not _any(self.tool, tool):
            return False
        if self.command and not (command and _any(self.command, " ".join(command.split()))):
            return False
        if self.path:
            return any(_path_matches(self.path, p, root) for p in paths)
        return bool(self.command) or self.tool != "*"

    def describe(self) -> str:
        parts = [f"tool {self.tool}"] + [f"{k} {v!r}" for k, v in (("command", self.command), ("path", self.path)) if v]
        return ", ".join(parts) + (f" ({self.reason})" if self.reason else "")


def _any(pattern: str, value: str) -> bool:
    return any(fnmatchcase(value, p.strip()) for p in pattern.split("|"))


def _path_matches(pattern: str, path: str, root: str) -> bool:
    """Whether ``path`` (absolute) matches a rule's path glob: one written from ``/`` or ``~`` matches
    the path itself; any other matches the path relative to the project's folder, so ``*.log`` or
    ``*`` names this project's files, never ``~/.ssh/id_rsa``."""
    home = os.path.expanduser("~")
    for p in pattern.split("|"):
        p = p.strip()
        if p.startswith(("/", "~")):
            if fnmatchcase(path, home + p[1:] if p.startswith("~") else p):
                return True
        elif root and path.startswith(root.rstrip("/") + "/") and fnmatchcase(os.path.relpath(path, root), p):
            return True
    return False


class Policy(NamedTuple):
    """The pack's vocabulary and rules, the project's allow and deny rules, and what was wrong."""

    pack: str
    data: dict[str, Any]
    allow: tuple[ProjectRule, ...] = ()
    deny: tuple[ProjectRule, ...] = ()
    source: str = ""  # the project file read, if any
    root: str = ""  # the folder that holds .watcher/policy.toml (paths in rules are relative to it)
    problems: tuple[str, ...] = ()

    def enabled(self, category: str) -> bool:
        return category in self.data["categories"]


def load_pack(name: str) -> dict[str, Any]:
    """A pack's data, with the pack it extends merged in (lists add up, tables merge)."""
    if name in _CACHE:
        return _CACHE[name]
    if name not in PACKS:
        raise ValueError(f"unknown guard pack {name!r}: expected one of {', '.join(PACKS)}")
    data = _read_pack(os.path.join(_HERE, "packs", f"{name}.toml"))
    base = data.pop("extends", None)
    if base:
        data = _merge(load_pack(base), data)
    data["name"] = name
    _CACHE[name] = data
    return data


def _read_pack(path: str) -> dict[str, Any]:
    """A pack file's data, through a JSON copy in the user's cache (TOML parsing is most of a cold
    hook's policy cost; the copy is keyed by the file's size and time, so an edit is seen at once)."""
    st = os.stat(path)
    cache = os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "watcher",
        f"{os.path.basename(path)}-{st.st_size}-{st.st_mtime_ns}.json",
    )
    try:
        with open(cache, encoding="utf-8") as f:
            data: dict[str, Any] = json.load(f)
        return data
    except (OSError, ValueError):
        pass
    import tomllib  # only when the copy is missing: tomllib costs a cold hook more than the rules

    with open(path, "rb") as f:
        data = tomllib.load(f)
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        with open(cache + f".{os.getpid()}", "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(cache + f".{os.getpid()}", cache)
    except OSError:
        pass  # a read-only home: parse every time
    return data


def _merge(base: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    """``more`` on top of ``base``, without what was compiled from ``base`` (keys starting ``_``):
    a pack that extends another compiles its own tables, not those of the pack it extends."""
    out = {key: value for key, value in base.items() if not key.startswith("_")}
    for key, value in more.items():
        if isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = [*out[key], *value]
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def policy_file(cwd: str) -> str | None:
    """The nearest ``.watcher/policy.toml`` from ``cwd`` upwards (stopping below the home)."""
    home = os.path.expanduser("~")
    folder = os.path.abspath(cwd or ".")
    while True:
        candidate = os.path.join(folder, ".watcher", "policy.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if folder in (home, parent):
            return None
        folder = parent


def load_policy(cwd: str, *, pack: str | None = None) -> Policy:
    """The policy for a call made in ``cwd``: the project file's pack and rules (``pack`` overrides)."""
    problems: list[str] = []
    path = policy_file(cwd)
    spec: dict[str, Any] = {}
    if path is not None:
        import tomllib

        try:
            with open(path, "rb") as f:
                spec = tomllib.load(f)
        except (OSError, ValueError) as exc:  # TOMLDecodeError and UnicodeDecodeError are ValueErrors
            problems.append(f"{path} could not be read ({exc}); the standard pack applies without its rules")
    name = pack or str(spec.get("pack") or "standard")
    if name not in PACKS:
        problems.append(f"{path}: pack {name!r} is not one of {', '.join(PACKS)}; the standard pack applies")
        name = "standard"
    allow, deny = (_rules(spec, key, path, problems) for key in ("allow", "deny"))
    unknown = sorted(set(spec) - {"pack", "allow", "deny"})
    if unknown:
        problems.append(f"{path}: unknown keys {', '.join(unknown)} (expected pack, allow, deny); they were ignored")
    root = os.path.dirname(os.path.dirname(path)) if path is not None else ""
    return Policy(name, load_pack(name), allow, deny, str(path or ""), root, tuple(problems))


def _rules(spec: dict[str, Any], key: str, path: str | None, problems: list[str]) -> tuple[ProjectRule, ...]:
    entries = spec.get(key) or []
    if not isinstance(entries, list):
        problems.append(f"{path}: [{key}] must be a list of tables ([[{key}]]); it was ignored")
        return ()
    out = []
    for n, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or not entry or set(entry) - _RULE_KEYS:
            problems.append(f"{path}: {key} rule {n} must have only tool, command, path and reason; it was ignored")
            continue
        wrong = sorted(k for k, v in entry.items() if not isinstance(v, str))
        if wrong:
            problems.append(f"{path}: {key} rule {n}: {', '.join(wrong)} must be a string (a glob); it was ignored")
            continue
        rule = ProjectRule(**{k: str(v) for k, v in entry.items()})
        if rule.tool == "*" and not rule.command and not rule.path:
            problems.append(f"{path}: {key} rule {n} matches every call; it was ignored")
            continue
        out.append(rule)
    return tuple(out)


def compiled(policy: Policy, key: str) -> re.Pattern[str]:
    """A regular expression from the pack's data, compiled once per pack."""
    cache = policy.data.setdefault("_compiled", {})
    if key not in cache:
        section, name = key.split(".")
        value = policy.data[section][name]
        cache[key] = re.compile("|".join(f"(?:{v})" for v in value) if isinstance(value, list) else value)
    return cache[key]  # type: ignore[no-any-return]
