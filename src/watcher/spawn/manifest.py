"""The sandbox manifest: what a spawned agent may read, write, run and see (seed 002, Evaluate).

``infer_manifest(task)`` derives one from the task by rules: the paths and commands the prompt
names, the secrets it mentions by name, and a complexity that sets the idle and total timeouts.
Defaults follow the seed: Read, Write, Edit, Glob, Grep and Bash allowed, recursive agent spawning
(``Task``) denied. Bash is limited to ``allowed_commands``: read-only git always, and
``git add``/``git commit`` when the task asks for commits. A manifest is a frozen value;
``widen`` returns a new one (permission recovery).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from watcher.core.errors import ConfigurationError

__all__ = ["DEFAULT_ALLOWED_TOOLS", "TIMEOUTS", "Complexity", "SandboxManifest", "infer_manifest"]

Complexity = Literal["low", "medium", "high"]

DEFAULT_ALLOWED_TOOLS = ("Read", "Write", "Edit", "Glob", "Grep", "Bash")
DEFAULT_DENIED_TOOLS = ("Task",)
READ_ONLY_GIT = ("git status", "git status *", "git diff *", "git log *", "git show *")
# complexity -> (idle timeout, total timeout) in seconds
TIMEOUTS: dict[str, tuple[float, float]] = {"low": (120.0, 600.0), "medium": (300.0, 1800.0), "high": (600.0, 3600.0)}

# commands a task may name, and the pattern that allows them
_COMMANDS = {
    "npm": "npm *",
    "npx": "npx *",
    "node": "node *",
    "pytest": "pytest *",
    "python": "python *",
    "python3": "python3 *",
    "make": "make *",
    "cargo": "cargo *",
    "go": "go *",
    "ruff": "ruff *",
    "tsc": "tsc *",
    "jest": "jest *",
}
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z]{1,6}|(?:[\w.-]+/)+)(?![\w/])")
_EXTENSIONS = set(
    [
        "py",
        "js",
        "ts",
        "jsx",
        "tsx",
        "mjs",
        "cjs",
        "json",
        "md",
        "rst",
        "txt",
        "toml",
        "yaml",
        "yml",
        "ini",
        "cfg",
        "rs",
        "go",
        "java",
        "kt",
        "rb",
        "php",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "cs",
        "swift",
        "sh",
        "sql",
        "html",
        "css",
        "scss",
        "lock",
    ]
)
_SECRET = re.compile(r"\b[A-Z][A-Z0-9_]*(?:_KEY|_TOKEN|_SECRET|_PASSWORD|_DSN)\b")
_HIGH = re.compile(r"\b(refactor|migrat\w*|architecture|rewrite|across the|whole (?:code|repo)|redesign)\b", re.I)
_LOW = re.compile(r"\b(typo|rename|comment|docstring|one-line|bump)\b", re.I)


@dataclass(frozen=True, slots=True)
class SandboxManifest:
    """What one spawned agent may do; each CLI adapter turns it into that CLI's own permissions."""

    readable_paths: tuple[str, ...] = ("**",)
    writable_paths: tuple[str, ...] = ("**",)
    allowed_tools: tuple[str, ...] = DEFAULT_ALLOWED_TOOLS
    denied_tools: tuple[str, ...] = DEFAULT_DENIED_TOOLS
    allowed_commands: tuple[str, ...] = READ_ONLY_GIT
    environment: Mapping[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()  # names of environment variables, never their values
    complexity: Complexity = "medium"
    idle_timeout_s: float | None = None  # None: from the complexity
    total_timeout_s: float | None = None

    @property
    def timeouts(self) -> tuple[float, float]:
        """(idle, total) in seconds: the overrides, else the complexity's defaults."""
        idle, total = TIMEOUTS[self.complexity]
        return (self.idle_timeout_s or idle, self.total_timeout_s or total)

    def widen(
        self, *, tools: Iterable[str] = (), commands: Iterable[str] = (), paths: Iterable[str] = ()
    ) -> SandboxManifest:
        """A manifest that also allows ``tools``, ``commands`` and writing ``paths``."""
        return replace(
            self,
            allowed_tools=_merge(self.allowed_tools, tools),
            denied_tools=tuple(t for t in self.denied_tools if t not in set(tools)),
            allowed_commands=_merge(self.allowed_commands, commands),
            writable_paths=_merge(self.writable_paths, paths),
        )

    def with_timeouts(self, idle_s: float | None, total_s: float | None) -> SandboxManifest:
        """The same manifest with overridden timeouts (None keeps the current value)."""
        return replace(
            self, idle_timeout_s=idle_s or self.idle_timeout_s, total_timeout_s=total_s or self.total_timeout_s
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (tuples as lists), the shape ``from_dict`` and the LLM evaluator use."""
        data = asdict(self)
        data["environment"] = dict(self.environment)
        idle, total = self.timeouts
        data["idle_timeout_s"], data["total_timeout_s"] = idle, total
        return {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, data: Any) -> SandboxManifest:
        """Validate ``data`` against the manifest's schema; ``ConfigurationError`` names the bad field."""
        if not isinstance(data, Mapping):
            raise ConfigurationError(f"a sandbox manifest must be a JSON object, got {type(data).__name__}")
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigurationError(f"a sandbox manifest has no fields {sorted(unknown)}")
        values: dict[str, Any] = {}
        for name in (
            "readable_paths",
            "writable_paths",
            "allowed_tools",
            "denied_tools",
            "allowed_commands",
            "secrets",
        ):
            if name in data:
                items = data[name]
                if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                    raise ConfigurationError(f"manifest field {name!r} must be a list of strings")
                values[name] = tuple(items)
        env = data.get("environment", {})
        if not isinstance(env, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise ConfigurationError("manifest field 'environment' must map names to string values")
        values["environment"] = dict(env)
        complexity = data.get("complexity", "medium")
        if complexity not in TIMEOUTS:
            raise ConfigurationError(f"manifest field 'complexity' must be low, medium or high, not {complexity!r}")
        values["complexity"] = complexity
        for name in ("idle_timeout_s", "total_timeout_s"):
            value = data.get(name)
            if value is not None and (
                not isinstance(value, int | float)
                or isinstance(value, bool)
                or not (math.isfinite(value) and value > 0)
            ):
                raise ConfigurationError(f"manifest field {name!r} must be a finite number of seconds above 0")
            values[name] = float(value) if value is not None else None
        return cls(**values)


def _merge(old: tuple[str, ...], new: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*old, *new]))


def infer_manifest(task: str) -> SandboxManifest:
    """The manifest the rules derive from ``task`` (see the module docstring)."""
    words = set(re.findall(r"[\w-]+", task.lower()))
    commands = list(READ_ONLY_GIT)
    if words & {"commit", "commits", "committed", "committing"}:
        commands += ["git add *", "git commit *"]
    commands += [pattern for name, pattern in _COMMANDS.items() if name in words]
    found = dict.fromkeys(m.group(1) for m in _PATH.finditer(task))
    paths = [
        p for p in found if ("/" in p or p.rsplit(".", 1)[-1] in _EXTENSIONS) and not p.startswith(("http", "www."))
    ]
    writable = tuple(p.rstrip("/") + "/**" if p.endswith("/") else p for p in paths) or ("**",)
    complexity: Complexity = "medium"
    if _HIGH.search(task) or len(task.split()) > 150:
        complexity = "high"
    elif _LOW.search(task) and len(task.split()) < 40:
        complexity = "low"
    return SandboxManifest(
        readable_paths=("**",),
        writable_paths=writable if paths else ("**",),
        allowed_commands=tuple(dict.fromkeys(commands)),
        secrets=tuple(dict.fromkeys(_SECRET.findall(task))),
        complexity=complexity,
    )
