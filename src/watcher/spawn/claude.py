"""Claude Code: headless, bidirectional stream-json, the manifest as ``--allowedTools``.

The task and every later message are ``user`` lines on stdin (``--input-format stream-json``),
so a watcher's interjection reaches the running agent: a queued one is a user line (it starts a
new turn when the current one ends), an urgent one is first an ``interrupt`` control request
(the in-flight response is dropped, that turn ends ``error_during_execution``). With
``--replay-user-messages`` the CLI echoes each user line when it takes it into the conversation
(a ``user`` record with ``isReplay``): that echo, not the write, is the delivery. Checked against
Claude Code 2.1.330. Permission denials are only listed in the final ``result`` record (the run
still ends ``success``), so they are read from there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from watcher.spawn._adapter import AgentCLI, Denial, Final
from watcher.spawn.manifest import SandboxManifest
from watcher.spawn.provision import Sandbox

__all__ = ["ClaudeCode", "claude_permissions"]


def claude_permissions(manifest: SandboxManifest) -> tuple[list[str], list[str]]:
    """(``--allowedTools``, ``--disallowedTools``): Bash is allowed only for the manifest's commands."""
    allowed = [tool for tool in manifest.allowed_tools if tool != "Bash"]
    if "Bash" in manifest.allowed_tools:
        allowed += [f"Bash({pattern})" for pattern in manifest.allowed_commands]
    return allowed, list(manifest.denied_tools)


class ClaudeCode(AgentCLI):
    """The ``claude`` CLI (``@anthropic-ai/claude-code``)."""

    name = "claude"
    binary = "claude"
    package = "@anthropic-ai/claude-code"
    checked_version = "2.1.330"  # the version in package.json this adapter is checked against
    live = True
    reader_format = "claude-code"
    passthrough = (
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_MODEL",
        "CLAUDE_CODE_MAX_RETRIES",
        "CLAUDE_CODE_OAUTH_TOKEN",  # a subscription's token (`claude setup-token`)
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
        "AWS_REGION",
        "AWS_PROFILE",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "ANTHROPIC_VERTEX_PROJECT_ID",
        "CLOUD_ML_REGION",
        "GOOGLE_APPLICATION_CREDENTIALS",
    )
    credentials = (
        ("ANTHROPIC_API_KEY",),
        ("ANTHROPIC_AUTH_TOKEN",),
        ("CLAUDE_CODE_OAUTH_TOKEN",),
        ("CLAUDE_CODE_USE_BEDROCK",),
        ("CLAUDE_CODE_USE_VERTEX",),
    )
    endpoint = "ANTHROPIC_BASE_URL"
    fixed_env: ClassVar[Mapping[str, str]] = {
        # no title/summary side requests, no update checks, no telemetry: only the model endpoint
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }

    def __init__(self) -> None:
        self._counted = ""  # the last assistant message whose usage was counted
        self._bounded = ""  # the last assistant message that marked a boundary
        self._turn_output = 0  # output tokens of this turn's responses as their lines said (a first estimate)

    def usage(self, record: Mapping[str, Any]) -> tuple[int, int, int] | None:
        if record.get("type") == "result":  # the turn's true output: its lines carry the count at the start
            extra, self._turn_output = max(_turn_output(record) - self._turn_output, 0), 0
            return (0, 0, extra) if extra else None
        message = _assistant(record)
        if message is None or message.get("id") == self._counted:
            return None  # each content block is its own line, with the message's usage repeated
        self._counted = str(message.get("id", ""))
        raw = message.get("usage")
        usage: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        spent = sum(int(usage.get(k) or 0) for k in keys)
        out = int(usage.get("output_tokens") or 0)
        self._turn_output += out
        return 1, spent, out

    def boundary(self, record: Mapping[str, Any]) -> bool:
        message = None if record.get("parent_tool_use_id") else _assistant(record)  # a subagent's step is not ours
        content = message.get("content") if message is not None else None
        if message is None or message.get("id") == self._bounded or not isinstance(content, list):
            return False
        if not any(isinstance(b, Mapping) and b.get("type") == "tool_use" for b in content):
            return False
        self._bounded = str(message.get("id", ""))
        return True

    def argv(
        self, executable: str, sandbox: Sandbox, manifest: SandboxManifest, prompt: str, *, resume: str | None
    ) -> list[str]:
        allowed, denied = claude_permissions(manifest)
        argv = [executable, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
        argv += ["--replay-user-messages"]  # each user line is echoed when taken: the delivery's acknowledgment
        argv += ["--permission-mode", "default", "--allowedTools", *allowed]
        if denied:
            argv += ["--disallowedTools", *denied]
        if resume:
            argv += ["--resume", resume]
        return argv

    def stdin_lines(self, prompt: str) -> list[dict[str, Any]]:
        return [self.message(prompt)]

    def message(self, text: str) -> dict[str, Any]:
        return {"type": "user", "message": {"role": "user", "content": text}}

    def interrupt(self, request_id: str) -> dict[str, Any]:
        return {"type": "control_request", "request_id": request_id, "request": {"subtype": "interrupt"}}

    def taken(self, record: Mapping[str, Any]) -> str | None:
        if record.get("type") != "user" or record.get("isReplay") is not True:
            return None
        message = record.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        return content if isinstance(content, str) else None

    def session_id(self, record: Mapping[str, Any]) -> str | None:
        value = record.get("session_id")
        return value if isinstance(value, str) and value else None

    def final(self, record: Mapping[str, Any]) -> Final | None:
        if record.get("type") != "result":
            return None
        denials = tuple(
            Denial(str(d.get("tool_name", "")), d.get("tool_input") or {}, "requires approval (not in --allowedTools)")
            for d in record.get("permission_denials") or []
            if isinstance(d, Mapping)
        )
        status = str(record.get("subtype") or "error")
        if record.get("is_error") and status == "success":  # an API error ends "success" + is_error (2.1.330)
            status = f"api_error {record.get('api_error_status') or ''}".strip()
        cost = record.get("total_cost_usd")
        return Final(
            status=status,
            summary=str(record.get("result") or ""),
            cost_usd=float(cost) if isinstance(cost, int | float) else 0.0,
            denials=denials,
            turn_only=True,
        )


def _turn_output(result: Mapping[str, Any]) -> int:
    """Output tokens of the turn a ``result`` line ends (all models, subagents included)."""
    since = result.get("model_usage_since_last_result")
    if isinstance(since, Mapping) and since:
        return sum(int(m.get("outputTokens") or 0) for m in since.values() if isinstance(m, Mapping))
    usage = result.get("usage")
    return int(usage.get("output_tokens") or 0) if isinstance(usage, Mapping) else 0


def _assistant(record: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The model's message in an ``assistant`` line (a subagent's lines included)."""
    message = record.get("message")
    return message if record.get("type") == "assistant" and isinstance(message, Mapping) else None
