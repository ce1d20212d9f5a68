"""Recover: permission errors → a widened manifest and a resumed session (seed 002's strategies).

``compute_fix`` turns one denial into the narrowest widening that would have allowed it (a
command pattern such as ``git commit *``, a tool, or the worktree's git dirs for Codex). The
security role objects to widenings it would flag itself — ``rm`` outside the worktree, writes
outside it, piping a download into a shell, ``sudo``, force pushes, all of Bash — and those are
never applied automatically. Strategies: **moderate** (the default: at most ``max_escalations``
widenings), **aggressive** (no limit, until a fix cannot be computed), **interactive** (ask the
person about each one).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from watcher.core.errors import ConfigurationError
from watcher.spawn._adapter import Denial
from watcher.spawn.manifest import SandboxManifest

__all__ = ["STRATEGIES", "Fix", "Recovery", "RecoveryDecision", "compute_fix", "objection", "pushes_for_watcher"]

STRATEGIES = ("moderate", "aggressive", "interactive")
_SPLIT = re.compile(r"&&|\|\||;|\n")
_PUSH = re.compile(r"^git\s+((-C|-c)\s+\S+\s+|-\S+\s+)*push\b")  # (``git -C dir push`` too)
PUSHED_BY_WATCHER = (
    "watcher pushes the spawn's branch and proposes it as a pull request itself; the agent does not push "
    "(a push of its own, to the base branch say, would skip the review)"
)
_PIPE_TO_SHELL = re.compile(r"\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b")
_DANGEROUS = (
    (re.compile(r"(^|\s)sudo\s"), "runs a command as root (sudo)"),
    (re.compile(r"\bgit\s+push\b.*(--force|\s-f\b)"), "force-pushes over the remote's history"),
    (re.compile(r"\bgit\s+((-C|-c)\s+\S+\s+|-\S+\s+)*push\b"), "pushes from the agent: " + PUSHED_BY_WATCHER),
    (
        re.compile(r"\bgit\s+(update-ref\b|branch\s+(.*\s)?(-[fDdMm]\b|--force|--delete|--move))"),
        "moves, renames or deletes branches (the base branch among them), not only the spawn's own",
    ),
    (re.compile(r"\bchmod\s+(-R\s+)?777\b"), "makes files world-writable"),
    (re.compile(r"\b(mkfs|dd)\b"), "writes raw devices"),
)


@dataclass(frozen=True, slots=True)
class Fix:
    """A widening of the manifest: tools, command patterns, writable paths."""

    tools: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()

    def describe(self) -> str:
        parts = [f"tool {t}" for t in self.tools] + [f"command `{c}`" for c in self.commands]
        parts += [f"writing {p}" for p in self.paths]
        return ", ".join(parts) or "nothing"

    def apply(self, manifest: SandboxManifest) -> SandboxManifest:
        return manifest.widen(tools=self.tools, commands=self.commands, paths=self.paths)


def _pattern(command: str) -> str:
    """``git commit -m x`` → ``git commit *``: the program and its subcommand, any arguments."""
    words = command.split()
    keep = words[:2] if len(words) > 1 and not words[1].startswith("-") else words[:1]
    return " ".join(keep) + " *"


def pushes_for_watcher(denial: Denial, manifest: SandboxManifest) -> bool:
    """Whether ``denial`` is a ``git push`` (with nothing else refused): watcher's integration does it instead.

    Such a denial needs no widening and no resume: the work is committed, pushed and proposed
    after the run, as a pull request, whatever branch the agent meant to push to.
    """
    parts = [p.strip() for p in _SPLIT.split(denial.command) if p.strip()]
    return any(_PUSH.match(p) for p in parts) and all(
        _PUSH.match(p) or _pattern(p) in manifest.allowed_commands for p in parts
    )


def compute_fix(denial: Denial, manifest: SandboxManifest, git_dirs: Sequence[Path] = ()) -> Fix | None:
    """The widening that would have allowed ``denial``, or None when none can be computed."""
    if denial.tool in ("Bash", "run_shell_command", "shell") and denial.command.strip():
        parts = [p.strip() for p in _SPLIT.split(denial.command) if p.strip()]
        patterns = [_pattern(p) for p in parts if _pattern(p) not in manifest.allowed_commands]
        tools = () if denial.tool in manifest.allowed_tools else (denial.tool,)
        return Fix(tools=tools, commands=tuple(dict.fromkeys(patterns))) if patterns or tools else None
    if denial.tool == "sandbox":  # Codex: writes to the git dirs of the worktree are read-only
        return Fix(paths=tuple(str(p) for p in git_dirs)) if git_dirs else None
    if denial.tool and denial.tool not in manifest.allowed_tools:
        return Fix(tools=(denial.tool,))
    return None


def objection(fix: Fix, denial: Denial, worktree: Path, git_dirs: Sequence[Path] = ()) -> str:
    """Why the security role would refuse this widening ('' when it has no objection)."""
    command = denial.command
    if "Bash" in fix.tools and not fix.commands:
        return "allowing every shell command"
    if _PIPE_TO_SHELL.search(command):
        return "pipes a download into a shell (curl | sh)"
    for pattern, why in _DANGEROUS:
        if pattern.search(command):
            return why
    for part in _SPLIT.split(command):
        words = _words(part)
        if words[:1] == ["rm"]:
            outside = [w for w in words[1:] if not w.startswith("-") and not _inside(w, worktree)]
            if outside:
                return f"removes {', '.join(outside)}, outside the worktree"
    allowed = [worktree, *git_dirs]
    outside_paths = [p for p in fix.paths if not any(_inside(p, root) for root in allowed)]
    if outside_paths:
        return f"writes {', '.join(outside_paths)}, outside the worktree"
    return ""


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _inside(path: str, root: Path) -> bool:
    if path.startswith("~") or path.startswith("$"):
        return False
    candidate = Path(path) if Path(path).is_absolute() else root / path
    try:
        candidate.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class RecoveryDecision:
    """What recovery decided about one run's denials."""

    outcome: str  # "resumed" | "refused" | "declined"
    detail: str
    manifest: SandboxManifest | None = None
    fixes: tuple[tuple[Denial, Fix | None, str], ...] = field(default=())  # (denial, fix, objection)

    @property
    def message(self) -> str:
        """The message that resumes the CLI session after a widening."""
        granted = "; ".join(fix.describe() for _, fix, _ in self.fixes if fix is not None)
        return f"[SUPERVISOR]: The permission you were refused is now granted ({granted}). Retry what was refused, then finish the task."


@dataclass(slots=True)
class Recovery:
    """A recovery strategy with its escalation count; ``ask`` answers interactive questions."""

    strategy: str = "moderate"
    max_escalations: int = 3
    ask: Callable[[str], bool] | None = None
    escalations: int = 0

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ConfigurationError(
                f"unknown recovery strategy {self.strategy!r}; choose one of {', '.join(STRATEGIES)}"
            )
        if self.strategy == "interactive" and self.ask is None:
            raise ConfigurationError("interactive recovery needs a person to ask: run it on a terminal or pass ask=")

    def decide(
        self, denials: Sequence[Denial], manifest: SandboxManifest, worktree: Path, git_dirs: Sequence[Path] = ()
    ) -> RecoveryDecision:
        """Widen the manifest for ``denials``, or say why not."""
        fixes = []
        for denial in denials:
            fix = compute_fix(denial, manifest, git_dirs)
            fixes.append((denial, fix, objection(fix, denial, worktree, git_dirs) if fix else ""))
        found = tuple(fixes)
        if any(fix is None for _, fix, _ in found):
            which = ", ".join(d.tool for d, fix, _ in found if fix is None)
            return RecoveryDecision("refused", f"no fix can be computed for {which}", fixes=found)
        objections = [f"{d.command or d.tool}: {why}" for d, _, why in found if why]
        if objections:
            return RecoveryDecision("refused", "the security role objects: " + "; ".join(objections), fixes=found)
        if self.strategy == "moderate" and self.escalations >= self.max_escalations:
            return RecoveryDecision("refused", f"escalation limit reached ({self.max_escalations})", fixes=found)
        widened = manifest
        for _, fix, _ in found:
            assert fix is not None
            widened = fix.apply(widened)
        if self.strategy == "interactive":
            question = "Allow " + "; ".join(fix.describe() for _, fix, _ in found if fix) + " and resume?"
            assert self.ask is not None
            if not self.ask(question):
                return RecoveryDecision("declined", "the person declined the widening", fixes=found)
        self.escalations += 1
        return RecoveryDecision("resumed", f"escalation {self.escalations}", manifest=widened, fixes=found)
