"""The adapter port: what a spawn needs from one agent CLI (Claude Code, Gemini CLI, Codex).

An adapter turns the manifest into the CLI's own command line, permission settings and
environment; reads each line the CLI streams (observations for the watchers, through the
``watcher.transcripts`` reader of the CLI's format; the CLI's session id, permission denials,
the final result); and says whether the CLI has a live channel for
interjections (``live``) or must be stopped and resumed with the message instead. A live CLI
also says when it took a message written to it (``taken``): that is when it is delivered.
"""

from __future__ import annotations

import os
import shutil
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from watcher.core.errors import ConfigurationError, MissingCredentialsError, SpawnError
from watcher.core.observations import Observation
from watcher.spawn import _gitproc
from watcher.spawn.manifest import SandboxManifest
from watcher.spawn.provision import Sandbox, ceiling
from watcher.transcripts import RecordReader, reader_for

__all__ = ["AgentCLI", "Denial", "Final", "agent_path", "find_executable"]

# Variables every CLI gets when the parent has them: the program search path, the locale.
_BASE = ("PATH", "LANG", "LC_ALL", "TZ", "SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS")
_MAX_ARG = 128 * 1024 - 1  # the longest single argument Linux passes to a program (MAX_ARG_STRLEN, with its NUL)
_PROJECT = Path(__file__).resolve().parents[3]  # the source checkout, where `make clis` installs


@dataclass(frozen=True, slots=True)
class Denial:
    """The CLI was refused a tool or a command: which, with what input, and its own words."""

    tool: str
    input: Mapping[str, Any] = field(default_factory=dict)
    detail: str = ""

    @property
    def command(self) -> str:
        """The shell command that was refused ('' for other tools)."""
        value = self.input.get("command", "")
        return " ".join(value) if isinstance(value, list) else str(value)


@dataclass(frozen=True, slots=True)
class Final:
    """What a CLI's final record says: its status, its own summary, its cost."""

    status: str  # "success" or the CLI's error subtype
    summary: str = ""
    cost_usd: float = 0.0
    denials: tuple[Denial, ...] = ()
    turn_only: bool = False  # the end of one turn of a live session, not of the process


def agent_path(parent: Mapping[str, str], manifest: SandboxManifest | None = None) -> str:
    """The PATH the CLI runs with (as ``AgentCLI.environment`` gives it): the manifest's, else the parent's."""
    if manifest is not None and "PATH" in manifest.environment:
        return manifest.environment["PATH"]
    return parent.get("PATH") or os.defpath


def find_executable(
    binary: str, explicit: str | None, repo: Path, package: str = "", version: str = "", *, path: str
) -> str:
    """The absolute path of the CLI the agent runs: ``explicit``, else the repo's ``node_modules/.bin``, else PATH.

    ``path`` is the PATH the agent runs with (``agent_path``): a name is
    looked up there, not on watcher's own PATH, so the CLI started is the one the agent's PATH
    names, and an interpreter its first line asks for (``#!/usr/bin/env node``) must be there too.
    watcher's own checkout (where ``make clis`` installs the pinned CLIs) is tried last. The path
    is absolute: the CLI starts in the worktree, where a relative one would name another file.
    ``package`` and ``version``: what installs it, for the message when it is nowhere.
    """
    search = path
    if explicit is not None:
        found = _which(explicit, search) if explicit else None  # a path that is an executable file, or a name on PATH
        if found is None:
            raise ConfigurationError(
                f"--cli-path {explicit!r} is not an executable file (nor a command on the PATH the agent runs with, "
                f"{_shown(search)}); give the path of the {binary!r} CLI, or leave --cli-path out to use "
                "node_modules/.bin or PATH"
            )
    else:
        folders = [str(Path(repo).resolve() / "node_modules" / ".bin"), search, str(_PROJECT / "node_modules" / ".bin")]
        found = next((hit for hit in (_which(binary, folder) for folder in folders) if hit), None)
        if found is None:
            raise ConfigurationError(
                f"the {binary!r} CLI was not found in node_modules/.bin nor on the PATH the agent runs with "
                f"({_shown(search)}): install it"
                + (f" (npm install -g {package}@{version})" if package else "")
                + " or pass --cli-path with its executable"
            )
    _check_interpreter(binary, found, search)
    return found


def _which(name: str, path: str) -> str | None:
    """``name`` (a path, or a command looked up on ``path``) as an absolute executable file's path, or None."""
    found = shutil.which(name, path=path)
    return os.path.abspath(found) if found else None


def _shown(path: str, limit: int = 300) -> str:
    return f"PATH={path}" if len(path) <= limit else f"PATH={path[:limit]}…"


def _check_interpreter(binary: str, executable: str, path: str) -> None:
    """``ConfigurationError`` when the script's ``#!`` line names an interpreter the agent's PATH lacks.

    An npm CLI is a script starting ``#!/usr/bin/env node``: with no ``node`` on the agent's PATH it
    would fail at once (``env: 'node': No such file or directory``), after the worktree was made.
    """
    try:
        with open(executable, "rb") as script:
            head = script.read(512)
    except OSError:
        return
    if not head.startswith(b"#!"):
        return
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not words:
        return
    program = words[0]
    if os.path.basename(program) == "env":  # `env node`, `env -S node --flag`, `env VAR=1 node`
        named = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
        if not named:
            return
        program = named[0]
    found = os.access(program, os.X_OK) if "/" in program else shutil.which(program, path=path) is not None
    if not found:
        where = "does not exist" if "/" in program else f"is not on the PATH the agent runs with ({_shown(path)})"
        raise ConfigurationError(
            f"the {binary!r} CLI at {executable} is a script run by {program!r}, which {where}: install it, "
            "or put its folder on the PATH watcher spawn runs with (or pass --cli-path with a CLI that runs here)"
        )


class AgentCLI(ABC):
    """One agent CLI. Subclasses set the class attributes and implement the abstract methods."""

    reader: RecordReader

    name: ClassVar[str]
    binary: ClassVar[str]
    package: ClassVar[str]  # the npm package that installs it
    checked_version: ClassVar[str]  # the version its flags and stream format are checked against
    live: ClassVar[bool] = False  # interjections reach the running process (else: stop and resume)
    passthrough: ClassVar[tuple[str, ...]] = ()  # the parent's variables the CLI needs (its endpoint, key)
    credentials: ClassVar[tuple[tuple[str, ...], ...]] = ()  # ways to sign in: each a set of variables, all set
    endpoint: ClassVar[str] = ""  # the variable naming the model server the CLI calls, if one is set
    fixed_env: ClassVar[Mapping[str, str]] = {}  # variables that keep the CLI quiet and offline
    reader_format: ClassVar[str]  # the ``watcher.transcripts`` reader of the CLI's stream
    prompt_in_argv: ClassVar[bool] = False  # the task goes on the command line (else on stdin)

    def environment(self, sandbox: Sandbox, manifest: SandboxManifest, parent: Mapping[str, str]) -> dict[str, str]:
        """``env -i`` plus exactly what the CLI needs: base, endpoint/key, manifest env, secrets by name."""
        env = {name: parent[name] for name in (*_BASE, *self.passthrough) if parent.get(name)}
        env["PATH"] = agent_path(parent)  # (the manifest's, if it names one, comes below: see ``agent_path``)
        env["HOME"] = str(sandbox.home)
        # git in the worktree never finds the main checkout above it, even with the worktree's .git deleted
        env["GIT_CEILING_DIRECTORIES"] = ceiling(sandbox)
        env.update(self.fixed_env)
        env.update(_git_identity(sandbox.repo, parent))
        env.update(_git_excludes(sandbox.repo, parent))
        env.update(manifest.environment)
        missing = [name for name in manifest.secrets if name not in parent]
        if missing:
            raise ConfigurationError(f"the manifest needs the secrets {missing}, which are not set in the environment")
        env.update({name: parent[name] for name in manifest.secrets})
        return env

    def check_credentials(self, parent: Mapping[str, str]) -> None:
        """Raise ``MissingCredentialsError`` unless one way to sign in is set in ``parent``.

        The CLI runs with a private HOME, so its own login (``/login``, a keychain) cannot help:
        only what is passed through counts. Checked before a worktree or a branch is made.
        """
        if not self.credentials or any(all(parent.get(v) for v in way) for way in self.credentials):
            return
        ways = " or ".join(" + ".join(way) for way in self.credentials[:3])  # the common ones; the rest are documented
        raise MissingCredentialsError(
            f"the {self.name} CLI needs credentials and none are set: set {ways} (it runs with a private HOME, "
            "so a login saved by the CLI itself is not used)"
        )

    def check_task(self, task: str) -> None:
        """Raise ``ConfigurationError`` when ``task`` cannot reach the CLI (too long for a command line)."""
        size = len(task.encode("utf-8", "surrogateescape"))
        if self.prompt_in_argv and size > _MAX_ARG:
            raise ConfigurationError(
                f"the task is {size // 1024} KiB, and the {self.name} CLI takes its task on the command line, "
                f"which holds at most {_MAX_ARG // 1024} KiB: shorten it, or write the details to a file in the "
                "repository and name that file in the task"
            )

    def prepare(self, sandbox: Sandbox, manifest: SandboxManifest, env: Mapping[str, str]) -> None:  # noqa: B027 - optional
        """Write the CLI's configuration into the spawn's private home (nothing by default)."""

    def start_run(self) -> None:
        """A fresh stream reader for the next run of the CLI."""
        self.reader = reader_for(self.reader_format, session=self.name)

    def observations(self, record: Mapping[str, Any]) -> list[Observation]:
        """What the watchers see of one streamed record (the transcript reader of the CLI's format)."""
        return self.reader.feed(record)

    def end_run(self) -> list[Observation]:
        """What the reader still held when the stream ended (text streamed in deltas)."""
        return self.reader.end()

    @abstractmethod
    def argv(
        self, executable: str, sandbox: Sandbox, manifest: SandboxManifest, prompt: str, *, resume: str | None
    ) -> list[str]:
        """The command line: headless, streaming, the manifest's permissions, resuming ``resume`` if given."""

    @abstractmethod
    def session_id(self, record: Mapping[str, Any]) -> str | None:
        """The CLI's own session (thread) id, when this record carries it."""

    @abstractmethod
    def final(self, record: Mapping[str, Any]) -> Final | None:
        """The end of a turn or of the run, when this record is one."""

    def denials(self, record: Mapping[str, Any]) -> list[Denial]:
        """Permission errors visible in this record (the final record's are in ``Final.denials``)."""
        return []

    def usage(self, record: Mapping[str, Any]) -> tuple[int, int, int] | None:
        """(steps, input tokens, output tokens) this record reports that no earlier record did, if any.

        A step is one model response (Claude Code) or one headless run (the CLIs that report
        usage only at a run's end).
        """
        return None

    def boundary(self, record: Mapping[str, Any]) -> bool:
        """True when this record ends a model response that asked for tools (a live CLI's iteration boundary)."""
        return False

    def poll(self) -> list[dict[str, Any]]:
        """Records from another source than stdout (Codex's rollout file), in the stream's shape."""
        return []

    def stdin_lines(self, prompt: str) -> list[dict[str, Any]]:
        """Lines to write on stdin at start (live CLIs take the task there)."""
        return []

    def message(self, text: str) -> dict[str, Any]:
        """A user message for a live CLI's stdin."""
        raise SpawnError(
            f"{self.name} has no live channel: its interjections wait for the run's end and go with the resume"
        )

    def interrupt(self, request_id: str) -> dict[str, Any]:
        """A request that stops a live CLI's current turn."""
        raise SpawnError(f"{self.name} has no live channel: it cannot be interrupted mid-turn, only stopped")

    def taken(self, record: Mapping[str, Any]) -> str | None:
        """The text of a stdin user message this record says the live CLI took into its conversation.

        Such a record is the CLI's acknowledgment, not an observation: a message written to a live
        CLI is delivered when the CLI says it took it, not when it was written.
        """
        return None


def _git_identity(repo: Path, parent: Mapping[str, str]) -> dict[str, str]:
    """Author and committer for commits in the worktree (the CLI's home has no git config)."""
    out: dict[str, str] = {}
    for key, names in (
        ("user.name", ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME")),
        ("user.email", ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL")),
    ):
        found = _gitproc.run(["git", "-C", str(repo), "config", key], timeout=120).stdout.strip()
        value = parent.get(names[0]) or found or ("watcher spawn" if key == "user.name" else "spawn@watcher.invalid")
        out.update(dict.fromkeys(names, value))
    return out


def _git_excludes(repo: Path, parent: Mapping[str, str]) -> dict[str, str]:
    """The user's global ignore file for the CLI's git, which its private home hides (``GIT_CONFIG_*``).

    Without it ``git add -A`` by the agent took in what the user ignores everywhere (``.env``,
    editor and OS files), and the pull request published it; watcher's own commit honours it.
    """
    found = _gitproc.run(["git", "-C", str(repo), "config", "--path", "core.excludesFile"], timeout=120).stdout.strip()
    if not found:  # git's default place for it
        home = parent.get("HOME") or os.path.expanduser("~")
        config = parent.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        found = os.path.join(config, "git", "ignore")
    if not os.path.isfile(found):
        return {}
    return {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.excludesFile",
        "GIT_CONFIG_VALUE_0": os.path.abspath(found),
    }
