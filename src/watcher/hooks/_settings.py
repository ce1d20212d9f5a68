"""Installing, showing and removing watcher's hook entries in a CLI's settings.

Claude Code reads hooks from ``.claude/settings.local.json`` (this checkout only: ``--scope
local``, the default), ``.claude/settings.json`` (the project's, which teams commit: ``--scope
project``) or ``~/.claude/settings.json`` (``--scope user``):
``{"hooks": {EVENT: [{"matcher": "*", "hooks": [{"type": "command", "command": ...}]}]}}``.
Codex reads the same shape from ``.codex/hooks.json`` (project) or ``$CODEX_HOME/hooks.json``
(user, default ``~/.codex``; Codex has no local-only file), without ``PostToolUseFailure``; it
runs a new hook only once a person has trusted it (``/hooks`` in Codex), or for one run with
``--dangerously-bypass-hook-trust``.

The command written is ``watcher-hook EVENT ...``: the installed script, found on the PATH of
whoever runs the CLI, so a committed settings file works on every teammate's machine.
watcher appends one matcher group per event and never edits the user's own groups. A manifest
beside the file (``watcher-hooks.json``, ``watcher-hooks.local.json`` for the local file) records
the exact commands added and what was there before (one backup, ``NAME.watcher-backup``), so
``uninstall`` removes those and nothing else, and restores the file byte for byte (or removes it
when there was none) when nothing else changed in it meanwhile.
"""

from __future__ import annotations

import contextlib
import json
import math
import shlex
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watcher.core.errors import ConfigurationError
from watcher.hooks._exclude import keep_out_of_git, let_back
from watcher.hooks._session import HookConfig
from watcher.hooks._wire import EVENTS

__all__ = [
    "HOOK_PROGRAM",
    "SCOPES",
    "Installed",
    "client_argv",
    "entry_point_problem",
    "events_for",
    "hook_command",
    "install",
    "installed",
    "manifest_path",
    "missing_entries",
    "settings_path",
    "uninstall",
]

MANIFEST = "watcher-hooks.json"
SCOPES = ("local", "project", "user")
HOOK_PROGRAM = ("watcher-hook",)  # the installed script (scripts/watcher-hook), looked up on PATH by the CLI
_TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure"})
_TIMEOUT_S = 10  # the CLI's own limit on our hook (at least): ours, the budget, is shorter


def settings_path(
    scope: str = "local", *, agent: str = "claude", project: Path | None = None, codex_home: Path | None = None
) -> Path:
    """The settings file the hooks go into for ``scope`` (local, project or user).

    ``codex_home`` is ``$CODEX_HOME`` (``Settings.codex_home``); without it, Codex's default ``~/.codex``.
    """
    root = project or Path.cwd()
    if agent == "codex":
        if scope == "local":
            raise ConfigurationError(
                "Codex has no local-only hooks file (it reads the repository's .codex/hooks.json and "
                "$CODEX_HOME/hooks.json): choose --scope project or --scope user"
            )
        home = codex_home or Path.home() / ".codex"
        return home / "hooks.json" if scope == "user" else root / ".codex" / "hooks.json"
    if agent != "claude":
        raise ConfigurationError(f"no hooks for agent {agent!r}: expected claude or codex")
    if scope not in SCOPES:
        raise ConfigurationError(f"no hook scope {scope!r}: expected one of {', '.join(SCOPES)}")
    if scope == "user":
        return Path.home() / ".claude" / "settings.json"
    return root / ".claude" / ("settings.local.json" if scope == "local" else "settings.json")


def manifest_path(settings: Path) -> Path:
    """Where the install record of ``settings`` lives (one per settings file, beside it)."""
    return settings.with_name("watcher-hooks.local.json" if settings.name.endswith(".local.json") else MANIFEST)


def events_for(agent: str) -> tuple[str, ...]:
    """The events watcher hooks for ``agent`` (Codex has no ``PostToolUseFailure``)."""
    return tuple(e for e in EVENTS if agent != "codex" or e != "PostToolUseFailure")


def client_argv() -> list[str]:
    """The hook command as this installation runs it: the ``watcher-hook`` script beside this interpreter."""
    return [str(Path(sys.executable).parent / HOOK_PROGRAM[0]), *HOOK_PROGRAM[1:]]


def entry_point_problem(program: str = HOOK_PROGRAM[0]) -> str:
    """Why the CLI could not run the hook command from this shell ("" when ``program`` is on PATH).

    ``program`` is the installed command's first word: ``watcher-hook``, or ``watcher`` in hooks an
    earlier version installed (``watcher hook EVENT ...``).
    """
    found = shutil.which(program)
    if found is None:
        return (
            f"`{program}` is not on PATH, so the CLI could not run the hooks: activate the environment "
            f"watcher is installed in (its bin folder is {Path(sys.executable).parent}) or install it with "
            "`pipx install watcher-agents`, then install the hooks again"
        )
    return ""


def hook_command(event: str, config: HookConfig) -> str:
    """The command the CLI runs for ``event``: no path of this machine in it, so it travels."""
    args = [*HOOK_PROGRAM, event, "--agent", config.agent]
    for role in config.roles:
        args += ["--watcher", role]
    args += ["--mode", config.mode, "--evaluator", config.evaluator, "--max-stop-blocks", str(config.max_stop_blocks)]
    args += ["--budget", f"{config.budget_s:g}"]
    if config.journal:
        args += ["--journal", config.journal]
    return shlex.join(args)


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except ValueError as exc:
        raise ConfigurationError(
            f"{path} is not valid JSON ({exc}); fix it or move it aside, then install again"
        ) from exc
    if not isinstance(data, dict) or not isinstance(data.get("hooks", {}), dict):
        raise ConfigurationError(f"{path} does not hold a settings object with a 'hooks' object; fix it first")
    return data


def _created_by_writing(path: Path) -> list[str]:
    """The folders and the file that writing ``path`` would create (outermost first)."""
    missing = [p for p in (*reversed(path.parents), path) if not p.exists()]
    return [str(p) for p in missing]


def _write(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` atomically; through a symlink (a dotfiles repository's settings stay linked)."""
    path = _through_link(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def _strip(data: dict[str, Any], commands: set[str]) -> int:
    """Remove hook entries running one of ``commands``; drop groups and events left empty."""
    removed = 0
    hooks = data.get("hooks") or {}
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue  # not a shape watcher writes: not ours to touch
        kept_groups = []
        for group in groups:
            entries = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(entries, list):
                kept_groups.append(group)
                continue
            kept = [e for e in entries if not (isinstance(e, dict) and e.get("command") in commands)]
            removed += len(entries) - len(kept)
            if kept:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if "hooks" in data and not hooks:
        del data["hooks"]
    return removed


@dataclass(frozen=True, slots=True)
class Installed:
    """What a manifest says watcher added to a settings file, and what was there before."""

    settings: Path
    commands: dict[str, str]
    config: dict[str, Any]
    backup: str | None  # the file as it was before watcher's first install (None: there was none)
    installed_at: float
    created: tuple[str, ...] = ()  # folders and the file the first install created
    git_exclude: dict[str, Any] | None = None  # the lines a local install added to .git/info/exclude


def installed(settings: Path) -> Installed | None:
    """The install recorded beside ``settings``, if any."""
    manifest = manifest_path(settings)
    if not manifest.exists():
        return None
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        return Installed(
            settings,
            {str(k): str(v) for k, v in data["commands"].items()},
            dict(data.get("config") or {}),
            data.get("backup"),
            float(data["installed_at"]),
            tuple(str(p) for p in data.get("created") or ()),
            data.get("git_exclude"),
        )
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ConfigurationError(
            f"the install record {manifest} is damaged ({type(exc).__name__}: {exc}); {settings} was left "
            "untouched: delete the record, remove watcher's hook entries from the settings by hand if any "
            "remain, then install again"
        ) from exc


def missing_entries(found: Installed) -> str:
    """Why the CLI would not run some of the hooks the install record names ("" when it runs them all).

    The record says what watcher wrote; the settings file is what the CLI reads, and a hand edit,
    a settings sync or another tool may have broken or rewritten it since.
    """
    path = found.settings
    if not path.exists():
        return f"{path} is gone, so the CLI runs none of watcher's hooks; run `watcher hooks install` again"
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError) as exc:
        return (
            f"{path} cannot be read as JSON ({exc}), so the CLI runs none of the hooks in it, watcher's "
            "included; fix the file (or move it aside and run `watcher hooks install` again)"
        )
    groups = data.get("hooks") if isinstance(data, dict) else None
    present = {
        str(entry.get("command"))
        for listed in (groups.values() if isinstance(groups, dict) else ())
        if isinstance(listed, list)
        for group in listed
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for entry in group["hooks"]
        if isinstance(entry, dict)
    }
    gone = sorted(event for event, command in found.commands.items() if command not in present)
    if not gone:
        return ""
    return (
        f"{len(gone)} of watcher's {len(found.commands)} hook entries are no longer in {path} "
        f"({', '.join(gone)}), so the CLI does not run them; run `watcher hooks install` again"
    )


def install(settings: Path, config: HookConfig) -> Installed:
    """Add watcher's hooks to ``settings`` (replacing an earlier install of ours, keeping the rest).

    The first install keeps one backup of the file as it was; a later one keeps that same record.
    """
    data = _read(settings)
    for event in events_for(config.agent):  # before anything is written: what watcher appends to must be a list
        groups = data.get("hooks", {}).get(event)
        if groups is not None and not isinstance(groups, list):
            raise ConfigurationError(
                f"{settings}: hooks.{event} is not a list of matcher groups; fix it (or move the file aside) first"
            )
    try:
        return _install(settings, config, data)
    except OSError as exc:
        raise ConfigurationError(
            f"cannot write {exc.filename or settings} ({exc.strerror or exc}); nothing of the hooks was installed "
            "there. Check that its folder is one you can write (CODEX_HOME must be a folder)"
        ) from exc


def _install(settings: Path, config: HookConfig, data: dict[str, Any]) -> Installed:
    previous = installed(settings)
    if previous is not None:
        _strip(data, set(previous.commands.values()))
        backup, created, excluded = previous.backup, list(previous.created), previous.git_exclude
    else:
        backup, created, excluded = None, _created_by_writing(settings), None
        if settings.exists():
            backup = str(settings.with_name(settings.name + ".watcher-backup"))
            shutil.copy2(settings, backup)
        if settings.name.endswith(".local.json"):  # this checkout's own: never committed by accident
            mine = [settings, manifest_path(settings), settings.with_name(settings.name + ".watcher-backup")]
            excluded = keep_out_of_git(mine)
    hooks = data.setdefault("hooks", {})
    commands = {}
    for event in events_for(config.agent):
        command = commands[event] = hook_command(event, config)
        timeout = max(_TIMEOUT_S, math.ceil(config.budget_s) + 5)
        group: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}
        if event in _TOOL_EVENTS and config.agent == "claude":  # Codex: no matcher is every tool
            group = {"matcher": "*", **group}
        hooks.setdefault(event, []).append(group)
    _write(settings, data)
    manifest: dict[str, Any] = {
        "commands": commands,
        "config": config.to_dict(),
        "backup": backup,
        "created": created,
        "git_exclude": excluded,
        "installed_at": time.time(),
    }
    _write(manifest_path(settings), manifest)
    return Installed(settings, commands, config.to_dict(), backup, manifest["installed_at"], tuple(created), excluded)


def uninstall(settings: Path) -> int:
    """Remove exactly the hook entries watcher added; returns how many were removed.

    When nothing else changed in the file since the first install, it is restored byte for byte
    from the backup (and the backup removed), or removed with the folders the install created.
    """
    found = installed(settings)
    if found is None:
        return 0
    data = _read(settings)
    removed = _strip(data, set(found.commands.values()))
    backup = Path(found.backup) if found.backup else None
    if backup is None and str(settings) in found.created and not data:
        settings.unlink(missing_ok=True)
    elif backup is not None and backup.is_file() and _same_settings(backup, data):
        backup.replace(_through_link(settings))  # the exact bytes (and mode) that were there, the link kept
    else:  # the file changed meanwhile: keep those changes (and the backup)
        _write(settings, data)
    manifest_path(settings).unlink()
    let_back(found.git_exclude)
    for folder in reversed(found.created):
        if folder != str(settings):
            with contextlib.suppress(OSError):  # not empty (or gone): it is not only ours any more
                Path(folder).rmdir()
    return removed


def _through_link(path: Path) -> Path:
    """The file a symlinked ``path`` points to (itself when it is no link)."""
    return path.resolve() if path.is_symlink() else path


def _same_settings(backup: Path, data: dict[str, Any]) -> bool:
    try:
        return bool(json.loads(backup.read_text(encoding="utf-8") or "{}") == data)
    except ValueError:
        return False
