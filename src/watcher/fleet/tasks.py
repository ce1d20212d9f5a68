"""What a fleet runs (``TaskSpec``s from a TOML tasks file or Python) and how it supervises them (``FleetConfig``).

A tasks file::

    [fleet]
    name = "auth-work"
    watch_interval_s = 30
    sync_interval_s = 15
    evaluator = "rules"    # or "anthropic:<model>" / "openai:<model>"
    extractor = "rules"

    [[tasks]]
    name = "api-client"
    prompt = "Write the API client"
    tags = ["api", "auth"]
    directory = "src/api"
    parent = ""            # another task's name: tasks with the same parent are related
    max_steps = 40

    [[tasks]]
    name = "api-docs"
    prompt = "Document the API client in docs/api.md"
    agent = "claude"       # a spawned CLI agent ("claude", "gemini", "codex"; see watcher.fleet.spawned)
    repo = "."             # its worktree is made in this repository (relative to the working directory)
    tags = ["api"]

Tools are Python callables, so a tasks file names none: ``load_tasks(path, tools={...})`` gives
every task the tools it lists (``tools = ["Read", "Write"]``) from the mapping.
"""

from __future__ import annotations

import math
import tomllib
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from watcher.core.errors import ConfigurationError
from watcher.settings import DEFAULT_AGENT_MODEL

__all__ = ["FleetConfig", "SharedRun", "TaskSpec", "load_tasks"]


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """One task of a fleet: its prompt, agent, tools, relations (tags, parent, directory) and limits."""

    name: str
    prompt: str
    agent: str = "anthropic"  # watcher's own agent run; spawned CLI agents join through the Session port
    tools: tuple[Callable[..., Any], ...] = ()
    tags: tuple[str, ...] = ()
    parent: str = ""
    directory: str = ""
    model: str = DEFAULT_AGENT_MODEL
    system: str = ""
    max_steps: int = 40
    max_corrections_per_step: int = 8
    repo: str = ""  # a spawned CLI agent's repository (its worktree is made there); "": the working directory


@dataclass(frozen=True, slots=True)
class SharedRun:
    """One run of a tasks file shared by several task hosts (machines): each claims tasks, ``max_tasks`` at once.

    Every host of the run is started with the same ``run`` name and tasks file; the journal (a
    PostgreSQL server that all of them reach) says which host runs which task.
    """

    run: str
    max_tasks: int = 1_000_000


@dataclass(frozen=True, slots=True)
class FleetConfig:
    """How the fleet supervises: intervals, thresholds, escalation and relay limits (seconds)."""

    name: str = "fleet"
    supervision: bool = True
    watch_interval_s: float = 30.0
    sync_interval_s: float = 15.0
    min_task_age_s: float = 5.0
    stale_after_s: float = 120.0  # heartbeat: fresh below, stale from here
    very_stale_after_s: float = 300.0  # very stale from here
    pause_after_nudges: int = 5
    file_tools: tuple[str, ...] = (
        "Write",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "write_file",
        "edit_file",
        "replace",
        "apply_patch",
    )
    sync_rate_limit: int = 3  # syncs per recipient per window
    sync_rate_window_s: float = 60.0
    sync_ttl_s: float = 600.0  # the same learning is not relayed to the same task again within this
    command_poll_s: float = 0.25
    host_beat_s: float = 5.0  # a task host journals that it is alive this often
    host_lost_s: float = 60.0  # a host silent this long is dead: its running tasks are lost
    command_lease_s: float = 60.0  # a command claimed this long ago and not applied is taken again (its claimer died)
    persist_timeout_s: float = 10.0  # a decision not committed by then fails the cycle (the loop restarts)
    evaluator: str = "rules"  # or "anthropic:<model>" / "openai:<model>": an LLM judges the tasks' snapshots
    extractor: str = "rules"  # or an LLM's name: it also reads each turn for learnings (on the task side)
    llm_base_url: str = ""  # the evaluator's and extractor's server (default: the provider's, or its env variable)
    restart_backoff_s: float = 0.5
    restart_backoff_max_s: float = 30.0


_TASK_FIELDS = {f.name: str(f.type) for f in fields(TaskSpec)}
_FLEET_FIELDS = {f.name: str(f.type) for f in fields(FleetConfig)}
_TASK_KEYS = set(_TASK_FIELDS)
_FLEET_KEYS = set(_FLEET_FIELDS)
_NOT_BLANK = {"name", "prompt", "agent", "model"}  # the others may be "" (none, the default, the rules)
_MAY_BE_ZERO = {"min_task_age_s", "sync_ttl_s", "max_corrections_per_step", "sync_rate_limit"}


def _strings(value: Any, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigurationError(f"{where}: {key} must be a string or a list of strings, got {value!r}")


def _checked(key: str, value: Any, kind: str, where: str) -> Any:
    """``value`` of setting ``key`` if it has the field's type (``kind``) and range, else a ConfigurationError.

    TOML has its own types, so a file can say ``max_steps = "many"`` or ``watch_interval_s = -1``;
    said here, such a value never reaches a loop that would crash on it, or spin, every cycle.
    """
    zero = key in _MAY_BE_ZERO
    if kind == "str":
        if not isinstance(value, str) or (key in _NOT_BLANK and not value.strip()):
            need = "a non-blank string" if key in _NOT_BLANK else 'a string ("" for none)'
            raise ConfigurationError(f"{where}: {key} must be {need}, got {value!r}")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise ConfigurationError(f"{where}: {key} must be true or false, got {value!r}")
        return value
    if kind == "int":
        least = 0 if zero else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ConfigurationError(f"{where}: {key} must be a whole number of at least {least}, got {value!r}")
        return value
    if kind == "float":  # seconds: TOML writes 30 as an integer, and nan and inf are TOML floats too
        number = value if isinstance(value, int | float) and not isinstance(value, bool) else math.nan
        if not (math.isfinite(number) and (number >= 0 if zero else number > 0)):
            above = "of 0 or more" if zero else "above 0"
            raise ConfigurationError(f"{where}: {key} must be a finite number of seconds {above}, got {value!r}")
        return float(number)
    return _strings(value, key, where)  # tuple[str, ...]


def _task(raw: Any, index: int, tools: Mapping[str, Callable[..., Any]], path: Path) -> TaskSpec:
    where = f"{path}: tasks[{index}]"
    if not isinstance(raw, dict):
        raise ConfigurationError(f"{where} must be a table ([[tasks]])")
    unknown = set(raw) - _TASK_KEYS
    if unknown:
        raise ConfigurationError(f"{where}: unknown keys {sorted(unknown)}; the keys are {sorted(_TASK_KEYS)}")
    if "name" not in raw or "prompt" not in raw:
        raise ConfigurationError(f"{where} needs a name and a prompt (strings)")
    values = {k: _checked(k, v, _TASK_FIELDS[k], where) for k, v in raw.items() if k != "tools"}
    if "tools" in raw:
        names = _strings(raw["tools"], "tools", where)
        missing = [n for n in names if n not in tools]
        if missing:
            known = ", ".join(sorted(tools)) or "none"
            raise ConfigurationError(f"{where}: unknown tools {missing}; the tools given are: {known}")
        values["tools"] = tuple(tools[n] for n in names)
    return TaskSpec(**values)


def _fleet(raw: Any, path: Path) -> FleetConfig:
    """The ``[fleet]`` table as a ``FleetConfig``, every value checked against its field."""
    where = f"{path}: [fleet]"
    if not isinstance(raw, dict) or set(raw) - _FLEET_KEYS:
        raise ConfigurationError(f"{where} takes only {sorted(_FLEET_KEYS)}")
    config = FleetConfig(**{k: _checked(k, v, _FLEET_FIELDS[k], where) for k, v in raw.items()})
    for low, high in (("stale_after_s", "very_stale_after_s"), ("restart_backoff_s", "restart_backoff_max_s")):
        if getattr(config, high) < getattr(config, low):
            raise ConfigurationError(
                f"{where}: {high} ({getattr(config, high):g}) must be at least {low} ({getattr(config, low):g})"
            )
    return config


def load_tasks(
    path: str | Path, *, tools: Mapping[str, Callable[..., Any]] | None = None
) -> tuple[FleetConfig, list[TaskSpec]]:
    """Read a TOML tasks file: its ``[fleet]`` settings and its ``[[tasks]]``, each value type- and range-checked."""
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigurationError(f"cannot read the tasks file {file}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigurationError(
            f"the tasks file {file} is not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8"
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"the tasks file {file} is not valid TOML: {exc}") from exc
    config = _fleet(data.get("fleet", {}), file)
    raw_tasks = data.get("tasks")
    if not isinstance(raw_tasks, list) or not raw_tasks:
        raise ConfigurationError(f"{file} has no [[tasks]]; add at least one with a name and a prompt")
    specs = [_task(raw, i, tools or {}, file) for i, raw in enumerate(raw_tasks)]
    check_names(specs)
    return config, specs


def check_names(specs: Sequence[TaskSpec]) -> None:
    """Task names are unique and plain text (a parent may name a task outside the fleet: siblings share it).

    A control character (TOML lets ``"\\u0000"`` through) or a lone surrogate cannot be journaled
    as written: the journal would store another name, which then matches no task of the file.
    """
    for spec in specs:
        for key, value in (("name", spec.name), ("parent", spec.parent)):
            bad = next((c for c in value if unicodedata.category(c) in ("Cc", "Cs")), None)
            if bad is not None:
                raise ConfigurationError(
                    f"task {spec.name!r}: its {key} holds the control character U+{ord(bad):04X}; "
                    "name tasks with printable characters"
                )
    names = [s.name for s in specs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigurationError(f"task names must be unique; repeated: {dupes}")
