"""What the ``stuck`` role compares about tool calls: actions and waiting commands, in normalised form.

Two tool calls are *the same action* when the tool name and the input agree after cosmetic fields
(a Bash call's ``description``) and fields a harness adds to every call (Cline's ``task_progress``)
are dropped, values minted for each call (request ids, nonces, UUIDs) blurred and whitespace
collapsed. Sleep, poll and status commands are *waiting*, whether named by the command, the tool
(``BashOutput``) or a parameter (``{"action": "poll"}``): repeating them is not a loop while they
bring news. Scrolling a page (``browser_action {"action": "scroll_down"}``) only moves the view: as
in Roo Code, it is neither a step of a loop nor a break in one. What results are the same is
``_stuck_results``'s business.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from watcher.core.redact import redact

__all__ = ["WaitKind", "action_key", "scrolling", "short_input", "target_path", "wait_key", "wait_kind"]

WaitKind: TypeAlias = Literal["sleep", "status"] | None

# Fields an agent rewords freely while doing the same thing; they never make an action different.
_COSMETIC = frozenset({"description", "explanation", "reason", "reasoning", "rationale", "thought", "justification"})
# Fields a harness adds to every call, whatever the call does (Cline's focus-chain checklist).
_HARNESS_FIELDS = frozenset({"task_progress", "taskProgress", "focus_chain", "requires_approval"})
_DROPPED = _COSMETIC | _HARNESS_FIELDS
# Argument keys whose values are minted fresh for every call (never what the call is about). Times
# are not among them: a ``ts`` or ``timestamp`` argument often names the thing asked for.
_VOLATILE_KEYS = frozenset(
    {
        "request_id",
        "requestId",
        "requestid",
        "client_msg_id",
        "clientMsgId",
        "nonce",
        "idempotency_key",
        "idempotencyKey",
        "trace_id",
        "traceId",
    }
)
_VOLATILE_ARG = re.compile(
    '"(?:' + "|".join(sorted(_VOLATILE_KEYS)) + r')":(?:"[^"]*"|-?\d+(?:\.\d+)?)'
    r"|\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"  # UUIDs, minted per call
)
_WS = re.compile(r"\s+")
_JSON_WS = re.compile(r"(?:\s|\\[nrt])+")  # whitespace, raw or escaped inside JSON strings
_EDGE_WS = re.compile(r'(?<=") | (?=")')  # ...and at either end of a string
# Shell commands that wait for time to pass, and ones that only look at the state of something.
_SLEEP_COMMANDS = frozenset({"sleep", "wait", "watch"})
_STATUS_COMMANDS = frozenset(
    {
        "ps",
        "pgrep",
        "jobs",
        "top",
        "htop",
        "uptime",
        "squeue",
        "sacct",
        "sinfo",
        "qstat",
        "bjobs",
        "nvidia-smi",
        "tail",
        "journalctl",
        "free",
        "df",
    }
)
# Commands that are status only with these leading words (`docker compose up` is real work).
_STATUS_PREFIXES = frozenset(
    {
        "git status",
        "kubectl get",
        "kubectl describe",
        "kubectl logs",
        "kubectl top",
        "kubectl wait",
        "kubectl rollout status",
        "docker ps",
        "docker logs",
        "docker stats",
        "docker inspect",
        "docker compose ps",
        "docker compose logs",
        "podman ps",
        "podman logs",
        "systemctl status",
        "systemctl is-active",
        "gh run view",
        "gh run watch",
        "gh run list",
        "gh pr checks",
        "gh pr view",
    }
)
_NEUTRAL = frozenset({"echo", "printf", "cd", "date", "true", "clear", ":"})
_FILTERS = frozenset(
    {"grep", "egrep", "head", "tail", "wc", "awk", "sed", "sort", "uniq", "cut", "tr", "less", "cat", "jq"}
)
_PREFIXES = frozenset({"sudo", "nohup", "time", "command", "exec"})
_SEGMENTS = re.compile(r"&&|\|\||;|\n")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# Tools that wait or read more output of a running process (BashOutput, TaskOutput, wait_for_job...).
_SLEEP_TOOL = re.compile(
    r"(?:^|[_\-.])(?:wait|sleep|poll)(?:$|[_\-.])|^(?:wait|sleep|poll)|(?:bash|task|shell|process|agent)_?output"
)
_STATUS_TOOL = re.compile(r"^(?:get|check|read|job|command|task|run|build)?_?status$|(?:^|_)(?:get|check)_\w*status$")
_DIGITS = re.compile(r"\d+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Waiting said by a parameter rather than a name: `process {"action": "poll"}`, `job {"op": "status"}`.
_COMPLETION_TOOLS = frozenset(
    {"attempt_completion", "finish", "submit", "task_complete", "complete_task", "mark_task_complete", "task_done"}
)
_INTENT_FIELDS = ("action", "operation", "op", "mode", "subcommand")
_SLEEP_INTENTS = frozenset({"poll", "wait", "sleep", "await", "poll_output", "read_output", "output", "log", "logs"})
_STATUS_INTENTS = frozenset({"status", "check", "check_status", "get_status", "state", "progress", "list_jobs"})
_SCROLL = re.compile(r"scroll(?:[_\- ]?(?:up|down|left|right|by|to|into_view))?|page[_\- ]?(?:up|down)", re.IGNORECASE)
_SCROLL_TOOL = re.compile(r"(?:^|[_\-.])scroll$", re.IGNORECASE)


def action_key(name: str, tool_input: Mapping[str, Any]) -> str:
    """The identity of a tool call: its name and its input, cosmetic fields dropped, whitespace collapsed."""
    if not _DROPPED.isdisjoint(tool_input):
        tool_input = {k: v for k, v in tool_input.items() if k not in _DROPPED}
    dumped = json.dumps(tool_input, sort_keys=True, separators=(",", ":"), default=str)
    if '"' in dumped:
        dumped = _VOLATILE_ARG.sub("~", dumped)
    return name + "\x00" + _EDGE_WS.sub("", _JSON_WS.sub(" ", dumped))


def _command(tool_input: Mapping[str, Any]) -> str | None:
    for field in ("command", "cmd", "script"):
        value = tool_input.get(field)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return " ".join(value)
    return None


def _segment_kind(segment: str) -> str:
    words = segment.split()
    while words and (words[0] in _PREFIXES or _ENV.match(words[0])):
        words = words[1:]
    if words and words[0] == "timeout" and len(words) > 1:
        words = words[2:]
    if not words:
        return "neutral"
    head = words[0].rsplit("/", 1)[-1]
    if head in _SLEEP_COMMANDS:
        return "sleep"
    if head in _STATUS_COMMANDS:
        return "status"
    if " ".join([head, *words[1:2]]) in _STATUS_PREFIXES or " ".join([head, *words[1:3]]) in _STATUS_PREFIXES:
        return "status"
    return "neutral" if head in _NEUTRAL else "other"


def wait_kind(name: str, tool_input: Mapping[str, Any]) -> WaitKind:
    """``sleep`` for a call that waits, ``status`` for one that only looks, None for real work."""
    command = _command(tool_input)
    if command is None:
        for field in _INTENT_FIELDS:
            intent = tool_input.get(field)
            if isinstance(intent, str):
                intent = intent.strip().lower().replace("-", "_")
                if intent in _SLEEP_INTENTS:
                    return "sleep"
                if intent in _STATUS_INTENTS:
                    return "status"
        if name == "write_stdin" and not tool_input.get("chars"):  # Codex reading a running session
            return "sleep"
        lowered = _CAMEL.sub("_", name).lower()
        if _SLEEP_TOOL.search(lowered) or lowered.replace("_", "") in ("bashoutput", "taskoutput", "agentoutputtool"):
            return "sleep"
        return "status" if _STATUS_TOOL.search(lowered) else None
    kinds: set[str] = set()
    for segment in _SEGMENTS.split(command):
        pipeline = segment.split("|")
        kinds.add(_segment_kind(pipeline[0]))
        for downstream in pipeline[1:]:  # `ps aux | grep train`: what a status is piped into only filters it
            words = downstream.split()
            kinds.add("neutral" if not words or words[0] in _FILTERS or words[0] in _NEUTRAL else "other")
    if "other" in kinds:
        return None
    return "sleep" if "sleep" in kinds else "status" if "status" in kinds else None


def completing(name: str) -> bool:
    """Whether the call declares the task done (``attempt_completion``, ``finish``, ``submit``):
    the same claim refused again and again is a loop sooner than a re-read is."""
    return _CAMEL.sub("_", name.strip()).lower().replace("-", "_") in _COMPLETION_TOOLS


def scrolling(name: str, tool_input: Mapping[str, Any]) -> bool:
    """Whether the call only scrolls a page (by its tool name or its action), doing nothing else."""
    action = tool_input.get("action")
    if isinstance(action, str) and _SCROLL.fullmatch(action.strip()) is not None:
        return True
    return "scroll" in name.lower() and _SCROLL_TOOL.search(name) is not None


def wait_key(name: str, tool_input: Mapping[str, Any]) -> str:
    """A coarse identity for waiting calls: ``sleep 30`` and ``sleep 60`` are the same wait."""
    return _DIGITS.sub("N", action_key(name, tool_input))


def short_input(name: str, tool_input: Mapping[str, Any], limit: int = 80) -> str:
    """``Bash `pytest -x` ``-style short form of a call, redacted, for interjection texts."""
    text = _command(tool_input)
    looked_for = next((v for k in ("pattern", "query") if isinstance(v := tool_input.get(k), str)), None)
    if text is None and looked_for is not None:
        where = target_path(tool_input)
        text = f"{looked_for} in {where}" if where else looked_for
    if text is None:
        fields = ("file_path", "path", "notebook_path", "url", "bash_id", "shell_id", "task_id")
        text = next((str(v) for k in fields if isinstance(v := tool_input.get(k), str | int)), None)
    if text is None:
        shown = {k: v for k, v in tool_input.items() if k not in _DROPPED and k not in _VOLATILE_KEYS}
        text = json.dumps(shown, sort_keys=True, default=str) if shown else ""
    text = _WS.sub(" ", redact(text)).strip()
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"{name} `{text}`" if text else name


def target_path(tool_input: Mapping[str, Any]) -> str | None:
    """The file a call works on (``file_path``, ``path``, ``notebook_path``), if it names one."""
    for field in ("file_path", "path", "notebook_path"):
        value = tool_input.get(field)
        if isinstance(value, str) and value.strip():
            return value
    return None
