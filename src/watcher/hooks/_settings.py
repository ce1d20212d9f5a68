"""Installing, showing and removing watcher's hook entries in a CLI's settings.

Claude Code reads hooks from ``.claude/settings.json`` (project) or ``~/.claude/settings.json``
(user): ``{"hooks": {EVENT: [{"matcher": "*", "hooks": [{"type": "command", "command": ...}]}]}}``.
Codex reads the same shape from ``.codex/hooks.json`` or ``$CODEX_HOME/hooks.json`` (default
``~/.codex``), without ``PostToolUseFailure``; it runs a new hook only once a person has trusted it
(``/hooks`` in Codex), or for one run with ``--dangerously-bypass-hook-trust``.
watcher appends one matcher group per event and never edits the user's own groups. The file is
copied aside before every change, and a manifest beside it (``watcher-hooks.json``) records the
exact commands added, so ``uninstall`` removes those and nothing else.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watcher.core.errors import ConfigurationError
from watcher.hooks import client
from watcher.hooks._session import HookConfig
from watcher.hooks._wire import EVENTS

__all__ = [
    "Installed",
    "client_argv",
    "events_for",
    "hook_command",
    "install",
    "installed",
    "settings_path",
    "uninstall",
]

MANIFEST = "watcher-hooks.json"
_TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure"})
_TIMEOUT_S = 10  # the CLI's own limit on our hook (at least): ours, the budget, is shorter


def settings_path(*, user: bool = False, agent: str = "claude", project: Path | None = None) -> Path:
    """The settings file the hooks go into."""
    if agent == "codex":
        home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
        return home / "hooks.json" if user else (project or Path.cwd()) / ".codex" / "hooks.json"
    if agent != "claude":
        raise ConfigurationError(f"no hooks for agent {agent!r}: expected claude or codex")
    return (Path.home() if user else (project or Path.cwd())) / ".claude" / "settings.json"


def events_for(agent: str) -> tuple[str, ...]:
    """The events watcher hooks for ``agent`` (Codex has no ``PostToolUseFailure``)."""
    return tuple(e for e in EVENTS if agent != "codex" or e != "PostToolUseFailure")


def client_argv() -> list[str]:
    """The thin client as the hooks run it: this interpreter, isolated, without site set-up, by path."""
    return [sys.executable, "-I", "-S", str(Path(client.__file__).resolve())]


def hook_command(event: str, config: HookConfig) -> str:
    """The command the CLI runs for ``event``."""
    args = [*client_argv(), event, "--agent", config.agent]
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


def _backup(path: Path) -> Path | None:
    if not path.exists():
        return None
    backup = path.with_name(f"{path.name}.watcher-backup-{time.strftime('%Y%m%d-%H%M%S')}")
    shutil.copy2(path, backup)
    return backup


def _write(path: Path, data: dict[str, Any]) -> None:
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
    """What a manifest says watcher added to a settings file."""

    settings: Path
    commands: dict[str, str]
    config: dict[str, Any]
    backup: str | None
    installed_at: float


def installed(settings: Path) -> Installed | None:
    """The install recorded beside ``settings``, if any."""
    manifest = settings.with_name(MANIFEST)
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
        )
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ConfigurationError(
            f"the install record {manifest} is damaged ({type(exc).__name__}: {exc}); {settings} was left "
            "untouched: delete the record, remove watcher's hook entries from the settings by hand if any "
            "remain, then install again"
        ) from exc


def install(settings: Path, config: HookConfig) -> Installed:
    """Add watcher's hooks to ``settings`` (replacing an earlier install of ours, keeping the rest)."""
    data = _read(settings)
    previous = installed(settings)
    backup = _backup(settings)
    if previous is not None:
        _strip(data, set(previous.commands.values()))
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
        "backup": str(backup) if backup else (previous.backup if previous else None),
        "installed_at": time.time(),
    }
    _write(settings.with_name(MANIFEST), manifest)
    return Installed(settings, commands, config.to_dict(), manifest["backup"], manifest["installed_at"])


def uninstall(settings: Path) -> int:
    """Remove exactly the hook entries watcher added; returns how many were removed."""
    found = installed(settings)
    if found is None:
        return 0
    data = _read(settings)
    _backup(settings)
    removed = _strip(data, set(found.commands.values()))
    _write(settings, data)
    settings.with_name(MANIFEST).unlink()
    return removed
