"""What the ``stuck`` role compares about tool results: outputs and errors, volatile details blurred.

Two results are *the same* when their outputs agree once volatile details (durations and ages such
as ``5m12s``, a spinner's frame, clock times, memory addresses, UUIDs, message/run/session ids,
pids, epoch timestamps, temporary paths) are blurred, so ``1 failed in 0.21s`` and ``1 failed in 0.23s`` are one result, and so are two sends
whose receipts carry fresh ``messageId`` values. Progress counters in plain text (``line 7``) are
kept: they are progress. Two errors are *the same error* when their telling lines agree once what
they were about (quoted names, paths, numbers) is blurred; a missing tool is recognised by what
harnesses answer when one is called.
"""

from __future__ import annotations

import re

from watcher.core.redact import redact

__all__ = ["ResultKey", "error_key", "error_line", "missing_tool", "result_key"]

_VOLATILE = re.compile(
    # durations (`0.21s`, `3 minutes`) and compact ages (`5m12s`, `2d3h`, `7m`: kubectl's AGE)
    r"\b\d+(?:(?:\.\d+)?\s*(?:ms|s|sec|secs|seconds?|min|mins|minutes?|hrs?|hours?|days?)|(?:ms|[dhms])(?:\d+(?:ms|[hms]))+|[hm])\b"
    r"|[\u2800-\u28ff\u25d0-\u25d3\u25f4-\u25f7]"  # spinner frames (braille dots, quarter circles)
    r"|\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?\S*"  # timestamps
    r"|\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b"  # clock times
    r"|\b0x[0-9a-fA-F]+\b"  # memory addresses
    r"|\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"  # UUIDs
    r"|\b1[5-9]\d{8}(?:\d{3})?(?:\.\d+)?\b"  # epoch timestamps, seconds or milliseconds
    r"|\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{16,}\b"  # long hex ids and digests
    r"|(?:/tmp|/var/tmp|/var/folders)/[\w.\-]*\d[\w.\-/]*"  # temporary paths made fresh for each run
    # values of id-, time- and counter-like keys: `"messageId": "om_3"`, `pid=1004`, `session sess-7`
    # (not a file's extension: `app.ts:12:5` is a place in a TypeScript file, not a `ts` value)
    r"|(?<!\.)\b(?:\w+_id|\w*[a-z]Id|\w*ID|id|uid|pid|PID|ts|timestamp|nonce|receipt|seq|attempt|retry|etag|session|sess|\w+_at|\w+[a-z]At"
    r"|\w*[a-z]Ms|\w+_ms|(?i:duration|elapsed|took|eta|uptime))"
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


def error_line(output: str, limit: int = 160) -> str:
    """The line of a failing output most likely to say what went wrong, redacted and shortened."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if not lines:
        return ""
    found = next((line for line in lines if _ERRORISH.search(line)), lines[0])
    found = redact(found)
    return found if len(found) <= limit else found[: limit - 1] + "…"
