"""Gemini CLI: headless ``-p`` with stream-json, the manifest as ``--allowed-tools``; resumed with ``--resume latest``.

Headless default mode offers no write or shell tools, so the manifest's tools are named on
``--allowed-tools`` (Read → ``read_file``, Write → ``write_file``, Edit → ``replace``, Bash →
``run_shell_command(<prefix>)`` per allowed command); anything else comes back as a tool result
with error type ``policy_violation`` or ``tool_not_registered``, read here as a permission
denial. The endpoint is ``GOOGLE_GEMINI_BASE_URL``; the spawn's private home holds a settings
file selecting API-key auth with usage statistics off. Each spawn has its own home, so
``--resume latest`` is this spawn's session (checked against Gemini CLI 0.61.0).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from watcher.core.observations import Observation
from watcher.spawn._adapter import AgentCLI, Denial, Final
from watcher.spawn.manifest import SandboxManifest
from watcher.spawn.provision import Sandbox

__all__ = ["GeminiCLI", "gemini_tools"]

_TOOLS = {
    "Read": ("read_file", "read_many_files"),
    "Write": ("write_file",),
    "Edit": ("replace",),
    "Glob": ("glob", "list_directory"),
    "Grep": ("search_file_content",),
}
_DENIED = ("policy_violation", "tool_not_registered", "permission")
DEFAULT_MODEL = "gemini-2.5-flash"


def gemini_tools(manifest: SandboxManifest) -> list[str]:
    """``--allowed-tools`` for the manifest (shell commands as ``run_shell_command(prefix)``)."""
    tools = [name for tool in manifest.allowed_tools for name in _TOOLS.get(tool, ())]
    if "Bash" in manifest.allowed_tools:
        tools += [f"run_shell_command({pattern.removesuffix(' *')})" for pattern in manifest.allowed_commands]
    return tools


class GeminiCLI(AgentCLI):
    """The ``gemini`` CLI (``@google/gemini-cli``)."""

    name = "gemini"
    binary = "gemini"
    package = "@google/gemini-cli"
    checked_version = "0.61.0"  # the version in package.json this adapter is checked against
    live = False
    reader_format = "gemini-stream"
    prompt_in_argv = True
    passthrough = (
        "GOOGLE_GEMINI_BASE_URL",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GEMINI_MODEL",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_APPLICATION_CREDENTIALS",
    )
    credentials = (("GEMINI_API_KEY",), ("GOOGLE_API_KEY",), ("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"))
    endpoint = "GOOGLE_GEMINI_BASE_URL"
    fixed_env: ClassVar[Mapping[str, str]] = {"GEMINI_CLI_NO_RELAUNCH": "true", "NO_COLOR": "1"}

    def __init__(self) -> None:
        self._calls: dict[str, tuple[str, Mapping[str, Any]]] = {}
        self._text: list[str] = []
        self._session = ""

    def prepare(self, sandbox: Sandbox, manifest: SandboxManifest, env: Mapping[str, str]) -> None:
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
        }
        (sandbox.home / ".gemini").mkdir(parents=True, exist_ok=True)
        (sandbox.home / ".gemini" / "settings.json").write_text(json.dumps(settings, indent=2))

    def argv(
        self, executable: str, sandbox: Sandbox, manifest: SandboxManifest, prompt: str, *, resume: str | None
    ) -> list[str]:
        model = manifest.environment.get("GEMINI_MODEL", DEFAULT_MODEL)
        # one word: a task that starts with "-" is the prompt's value, not an option of the CLI's
        argv = [executable, f"--prompt={prompt}", "--output-format", "stream-json", "--skip-trust", "-m", model]
        for tool in gemini_tools(manifest):  # one flag per tool: as an array it swallows what follows
            argv += ["--allowed-tools", tool]
        if resume:
            argv += ["--resume", "latest"]
        return argv

    def observations(self, record: Mapping[str, Any]) -> list[Observation]:
        kind = record.get("type")
        if kind == "tool_use":
            params = record.get("parameters")
            self._calls[str(record.get("tool_id", ""))] = (
                str(record.get("tool_name", "")),
                params if isinstance(params, Mapping) else {},
            )
        elif kind == "message" and record.get("role") == "assistant":
            self._text.append(str(record.get("content", "")))
        elif kind == "tool_use" or kind == "tool_result":
            self._text.clear()
        return super().observations(record)

    def session_id(self, record: Mapping[str, Any]) -> str | None:
        value = record.get("session_id") if record.get("type") == "init" else None
        if isinstance(value, str) and value:
            self._session = value
        return self._session or None

    def denials(self, record: Mapping[str, Any]) -> list[Denial]:
        error = record.get("error")
        if record.get("type") != "tool_result" or not isinstance(error, Mapping):
            return []
        if not any(marker in str(error.get("type", "")) for marker in _DENIED):
            return []
        name, params = self._calls.get(str(record.get("tool_id", "")), ("", {}))
        tool = {"run_shell_command": "Bash", "write_file": "Write", "replace": "Edit"}.get(name, name)
        return [Denial(tool, params, str(error.get("message", error.get("type", ""))))]

    def usage(self, record: Mapping[str, Any]) -> tuple[int, int, int] | None:
        stats = record.get("stats")
        if record.get("type") != "result" or not isinstance(stats, Mapping):
            return None
        return 1, int(stats.get("input_tokens") or 0), int(stats.get("output_tokens") or 0)

    def final(self, record: Mapping[str, Any]) -> Final | None:
        if record.get("type") != "result":
            return None
        status = "success" if record.get("status") == "success" else str(record.get("status") or "error")
        error = record.get("error")
        said = str(error.get("message") or error.get("type") or "") if isinstance(error, Mapping) else ""
        if status != "success" and said:  # the CLI's own reason (an API error's code and message)
            status = f"{status}: {said[:300]}"
        return Final(status, summary="".join(self._text) or said)
