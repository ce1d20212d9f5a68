"""What the ``stuck`` role compares: actions, results and waiting commands, in normalised form.

Two tool calls are *the same action* when the tool name and the input agree after cosmetic fields
(a Bash call's ``description``) and fields a harness adds to every call (Cline's ``task_progress``)
are dropped, volatile values (request ids, nonces, timestamps) blurred and whitespace collapsed.
Two results are *the same* when their outputs agree once volatile details (durations, clock times,
memory addresses, UUIDs, message/run/session ids, pids, epoch timestamps) are blurred, so
``1 failed in 0.21s`` and ``1 failed in 0.23s`` are one result, and so are two sends whose receipts
carry fresh ``messageId`` values. Progress counters in plain text (``line 7``) are kept: they are
progress. Sleep, poll and status commands are *waiting*, whether named by the command, the tool
(``BashOutput``) or a parameter (``{"action": "poll"}``): repeating them is not a loop until the
wait budget runs out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from watcher.core.redact import redact

__all__ = [
    "ResultKey",
    "WaitKind",
    "action_key",
    "error_key",
    "error_line",
    "missing_tool",
    "result_key",
    "short_input",
    "target_path",
    "wait_key",
    "wait_kind",
]

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
_VOLATILE = re.compile(
    r"\b\d+(?:\.\d+)?\s*(?:ms|s|sec|secs|seconds|min|minutes)\b"  # durations
    r"|\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?\S*"  # timestamps
    r"|\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b"  # clock times
    r"|\b0x[0-9a-fA-F]+\b"  # memory addresses
    r"|\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"  # UUIDs
    r"|\b1[5-9]\d{8}(?:\d{3})?(?:\.\d+)?\b"  # epoch timestamps, seconds or milliseconds
    r"|\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{16,}\b"  # long hex ids and digests
    # values of id-, time- and counter-like keys: `"messageId": "om_3"`, `pid=1004`, `session sess-7`
    r"|(?:/tmp|/var/tmp|/var/folders)/[\w.\-]*\d[\w.\-/]*"  # temporary paths made fresh for each run
    r"|\b(?:\w+_id|\w*[a-z]Id|\w*ID|id|uid|pid|PID|ts|timestamp|nonce|receipt|seq|attempt|etag|session|sess|\w+_at|\w+[a-z]At"
    r"|\w*[a-z]Ms|\w+_ms|duration|elapsed|took)"
    r"\b(?:\"?\s*[:=]\s*\"?|\s+)[\w.:+\-]*\d[\w.:+\-]*"
)
_ERRORISH = re.compile(r"error|exception|failed|fatal|traceback|not found|denied|refused|timed out", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
# What an error is about, rather than what it is: quoted names, paths and file names.
_SUBJECT = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`|[^\s<>]*[/\\][^\s<>]*|\b[\w\-]+\.[A-Za-z]\w{0,4}\b")
# What a harness answers when the agent calls a tool it does not have.
_MISSING_TOOL = re.compile(
    r"\b(?:unknown|unsupported|invalid|unavailable|unrecognized) (?:tool|function)\b"
    r"|\bno such (?:tool|function)\b"
    r"|\b(?:tool|function)\b[^\n]{0,60}?\b(?:not found|does not exist|is not available|not available|not registered|"
    r"is not a valid|not recognized|not in registry)",
    re.IGNORECASE,
)

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
_STATUS_TOOL = re.compile(r"^(?:get|check|read|job)?_?status$|(?:^|_)(?:get|check)_\w*status$")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Waiting said by a parameter rather than a name: `process {"action": "poll"}`, `job {"op": "status"}`.
_INTENT_FIELDS = ("action", "operation", "op", "mode", "subcommand")
_SLEEP_INTENTS = frozenset({"poll", "wait", "sleep", "await", "poll_output", "read_output", "output"})
_STATUS_INTENTS = frozenset({"status", "check", "check_status", "get_status", "state", "progress", "list_jobs"})


def action_key(name: str, tool_input: Mapping[str, Any]) -> str:
    """The identity of a tool call: its name and its input, cosmetic fields dropped, whitespace collapsed."""
    if not _DROPPED.isdisjoint(tool_input):
        tool_input = {k: v for k, v in tool_input.items() if k not in _DROPPED}
    dumped = json.dumps(tool_input, sort_keys=True, separators=(",", ":"), default=str)
    if '"' in dumped:
        dumped = _VOLATILE_ARG.sub("~", dumped)
    return name + "\x00" + _EDGE_WS.sub("", _JSON_WS.sub(" ", dumped))


class ResultKey:
    """The identity of a tool result: failed or not, and the output with volatile details blurred.

    Blurring is the costly part, so it is done only when it matters: two results with the same
    raw output are equal at once, and the blurred forms are compared (and kept) only when the
    raw outputs differ, which a tracker asks only for results of the same action.
    """

    __slots__ = ("_blurred", "_output", "_raw", "failed")

    def __init__(self, output: str, failed: bool) -> None:
        self.failed = failed
        self._output: str | None = output
        self._raw = hash(output)
        self._blurred: int | None = None

    def blurred(self) -> int:
        """A hash of the output with volatile details blurred and whitespace collapsed."""
        if self._blurred is None:
            self._blurred = hash(" ".join(_VOLATILE.sub("~", self._output or "").split()))
            self._output = None  # the text is no longer needed
        return self._blurred

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ResultKey):
            return NotImplemented
        if self.failed != other.failed:
            return False
        return self._raw == other._raw or self.blurred() == other.blurred()

    def __hash__(self) -> int:
        return hash(self.failed)  # equal keys may differ in raw output: only `failed` is shared


def result_key(output: str, failed: bool) -> ResultKey:
    """The identity of a tool result (see ``ResultKey``)."""
    return ResultKey(output, failed)


def error_key(output: str) -> int:
    """The identity of an error, whatever it was about: its telling line with quoted names and numbers blurred.

    ``No such file: 'a.py'`` and ``File does not exist: src/b.py`` against ``...: src/c.py`` are
    one error each, so a tool failing the same way under varying arguments can be told apart from
    one failing in new ways.
    """
    return hash(_DIGITS.sub("N", _SUBJECT.sub("Q", error_line(output, limit=400))))


def missing_tool(output: str) -> bool:
    """Whether a failing result says the tool called does not exist (or is not available)."""
    return _MISSING_TOOL.search(output[:2000]) is not None


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


def error_line(output: str, limit: int = 160) -> str:
    """The line of a failing output most likely to say what went wrong, redacted and shortened."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if not lines:
        return ""
    found = next((line for line in lines if _ERRORISH.search(line)), lines[0])
    found = redact(found)
    return found if len(found) <= limit else found[: limit - 1] + "…"


def target_path(tool_input: Mapping[str, Any]) -> str | None:
    """The file a call works on (``file_path``, ``path``, ``notebook_path``), if it names one."""
    for field in ("file_path", "path", "notebook_path"):
        value = tool_input.get(field)
        if isinstance(value, str) and value.strip():
            return value
    return None
