"""Codex CLI: ``codex exec --json`` in its workspace-write sandbox; resumed with ``exec resume``.

Codex has no allowlist: its permissions are the sandbox. ``workspace-write`` keeps ``.git``
read-only, and a git worktree's commits write both the main repository's git dir and the
worktree's own, so a manifest that allows commits adds both with ``--add-dir`` (a denied commit
shows as ``Read-only file system`` and recovery adds them). The model endpoint is a
``[model_providers]`` entry in ``$CODEX_HOME/config.toml`` when ``OPENAI_BASE_URL`` is set, with
update checks, analytics and feedback off. No live channel: an interjection stops the run at
the next breakpoint and ``resume`` carries it (checked against Codex 0.169.0). Commands missing
from the ``--json`` stream are read from the rollout file (``_codex_rollout``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from watcher.core.observations import Observation, ToolResult
from watcher.spawn._adapter import AgentCLI, Denial, Final
from watcher.spawn._codex_rollout import RolloutReader
from watcher.spawn._worktree_probe import WorktreeProbe
from watcher.spawn.manifest import SandboxManifest
from watcher.spawn.provision import Sandbox

__all__ = ["Codex"]

_READ_ONLY = ("Read-only file system", "Operation not permitted", "Permission denied")
_DISABLE = ("--disable", "plugins", "--disable", "remote_plugin", "--disable", "apps")


class Codex(AgentCLI):
    """The ``codex`` CLI (``@openai/codex``)."""

    name = "codex"
    binary = "codex"
    package = "@openai/codex"
    checked_version = "0.169.0"  # the version in package.json this adapter is checked against
    live = False
    reader_format = "codex-exec"
    prompt_in_argv = True
    passthrough = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY")
    credentials = (("OPENAI_API_KEY",), ("CODEX_API_KEY",))
    endpoint = "OPENAI_BASE_URL"
    fixed_env: ClassVar[Mapping[str, str]] = {"NO_COLOR": "1"}

    def __init__(self) -> None:
        self._last_message = ""
        self._probe: WorktreeProbe | None = None
        self._rollout: RolloutReader | None = None

    def environment(self, sandbox: Sandbox, manifest: SandboxManifest, parent: Mapping[str, str]) -> dict[str, str]:
        env = super().environment(sandbox, manifest, parent)
        env["CODEX_HOME"] = str(sandbox.home / ".codex")
        return env

    def prepare(self, sandbox: Sandbox, manifest: SandboxManifest, env: Mapping[str, str]) -> None:
        self._probe = WorktreeProbe(sandbox.worktree)
        home = Path(env["CODEX_HOME"])
        if self._rollout is None:
            self._rollout = RolloutReader(home)
        home.mkdir(parents=True, exist_ok=True)
        lines = ["check_for_update_on_startup = false"]
        if env.get("CODEX_MODEL"):
            lines.append(f"model = {json.dumps(env['CODEX_MODEL'])}")
        if env.get("OPENAI_BASE_URL"):
            lines += ['model_provider = "watcher"', "", "[model_providers.watcher]", 'name = "watcher"']
            lines += [f"base_url = {json.dumps(env['OPENAI_BASE_URL'])}", 'env_key = "OPENAI_API_KEY"']
            lines += ['wire_api = "responses"', "request_max_retries = 0", "stream_max_retries = 0"]
        lines += ["", "[analytics]", "enabled = false", "", "[feedback]", "enabled = false", ""]
        (home / "config.toml").write_text("\n".join(lines))

    def _add_dirs(self, sandbox: Sandbox, manifest: SandboxManifest) -> list[str]:
        dirs = [p for p in manifest.writable_paths if Path(p).is_absolute()]
        if "git commit *" in manifest.allowed_commands:
            dirs += [str(p) for p in sandbox.git_dirs]
        return [arg for d in dict.fromkeys(dirs) for arg in ("--add-dir", d)]

    def argv(
        self, executable: str, sandbox: Sandbox, manifest: SandboxManifest, prompt: str, *, resume: str | None
    ) -> list[str]:
        head = [executable, "exec", "-s", "workspace-write", "--skip-git-repo-check", *_DISABLE]
        head += self._add_dirs(sandbox, manifest)
        # after "--", a task that starts with "-" is the task, not an option of the CLI's
        if resume:
            return [*head, "resume", "--json", resume, "--", prompt]
        return [*head, "--json", "--", prompt]

    def observations(self, record: Mapping[str, Any]) -> list[Observation]:
        item = record.get("item")
        observations = super().observations(record)
        if record.get("type") != "item.completed" or not isinstance(item, Mapping):
            return observations
        if item.get("type") == "command_execution" and self._rollout is not None and record.get("source") != "rollout":
            self._rollout.seen_commands.append(str(item.get("command", "")))
        if item.get("type") == "agent_message":
            self._last_message = str(item.get("text", ""))
        elif item.get("type") in ("command_execution", "file_change") and self._probe is not None and observations:
            # the files the command wrote, just before its result (the watchers' breakpoint)
            at = next((i for i, obs in enumerate(observations) if isinstance(obs, ToolResult)), len(observations))
            return [*observations[:at], *self._probe.changes(), *observations[at:]]
        return observations

    def poll(self) -> list[dict[str, Any]]:
        return self._rollout.poll() if self._rollout is not None else []

    def session_id(self, record: Mapping[str, Any]) -> str | None:
        value = record.get("thread_id") if record.get("type") == "thread.started" else None
        return value if isinstance(value, str) and value else None

    def denials(self, record: Mapping[str, Any]) -> list[Denial]:
        item = record.get("item")
        if record.get("type") != "item.completed" or not isinstance(item, Mapping):
            return []
        output = str(item.get("aggregated_output", ""))
        if item.get("type") == "command_execution" and any(marker in output for marker in _READ_ONLY):
            return [Denial("sandbox", {"command": str(item.get("command", ""))}, output.strip()[:300])]
        return []

    def usage(self, record: Mapping[str, Any]) -> tuple[int, int, int] | None:
        usage = record.get("usage")
        if record.get("type") != "turn.completed" or not isinstance(usage, Mapping):
            return None
        return 1, int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)

    def final(self, record: Mapping[str, Any]) -> Final | None:
        kind = record.get("type")
        if kind == "turn.completed":
            return Final("success", summary=self._last_message)
        if kind == "turn.failed":
            error = record.get("error")
            return Final("failed", summary=str(error.get("message") if isinstance(error, Mapping) else error))
        return None
