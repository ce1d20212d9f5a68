"""Scripted models for driving the real agent CLIs through whole tasks against the stub servers.

A ``ScriptedModel`` is a callable for ``Reply.dynamic``: it decides each reply from what the CLI
sent, so a run ends the same way however the requests interleave with a watcher's interrupt.
``LoginTask`` is seed 000's story: the agent writes a ``login()`` that splices the user's input
into SQL with a template literal and commits it; then it waits ("thinks", an endless stream)
until a supervisor's message arrives, fixes the query with placeholders and commits the fix.
The tool vocabulary follows the CLI (``claude``: Write/Bash, ``gemini``:
write_file/run_shell_command, ``codex``: exec_command, which Codex 0.169 still runs although its
code mode no longer offers it). ``seen_supervisor_at`` and ``requests_at`` let a
test check that the interjection was in the very next request::

    model = LoginTask("claude")
    stub.push(*model.replies())
"""

from __future__ import annotations

import re
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from watcher.testing.scripts import RecordedRequest, Reply

__all__ = ["FIXED_LOGIN", "VULNERABLE_LOGIN", "CommitTask", "LoginTask", "ReadmeTask", "ScriptedModel"]

LOGIN_PATH = "src/auth/login.js"

VULNERABLE_LOGIN = """const db = require("../db");

async function login(username, password) {
  const rows = await db.query(`SELECT id FROM users WHERE name = '${username}' AND password = '${password}'`);
  return rows.length === 1;
}

module.exports = { login };
"""

FIXED_LOGIN = """const db = require("../db");

async function login(username, password) {
  const rows = await db.query("SELECT id FROM users WHERE name = ? AND password = ?", [username, password]);
  return rows.length === 1;
}

module.exports = { login };
"""

_TOOLS = {
    "claude": ("Write", "file_path", "Bash"),
    "gemini": ("write_file", "file_path", "run_shell_command"),
}
MARKER = "[SUPERVISOR]"
_CWD = re.compile(r"Primary working directory: ([^\s\\]+)")


@dataclass
class ScriptedModel(ABC):
    """Base: picks each step from the request (``step``), answers it (``reply``), records the steps.

    ``write`` and ``shell`` speak the CLI's own tools: Claude Code wants absolute paths (its
    system prompt names the working directory), Codex writes files through its shell.
    """

    agent: str = "claude"
    steps: list[str] = field(default_factory=list)
    requests_at: list[float] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def replies(self, n: int = 30) -> list[Reply]:
        """Enough dynamic replies for a whole run."""
        return [Reply.dynamic(self)] * n

    def __call__(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests_at.append(time.time())
            step = self.step(request, len(self.requests_at) - 1)
            self.steps.append(step)
        return self.reply(step, request)

    @abstractmethod
    def step(self, request: RecordedRequest, index: int) -> str:
        """The name of the step this request is (from what the request carries)."""

    @abstractmethod
    def reply(self, step: str, request: RecordedRequest) -> Reply:
        """The model's answer for ``step``."""

    def first_missing(self, order: tuple[str, ...]) -> str:
        """The first step of ``order`` not taken yet (else the last one again)."""
        return next((s for s in order if s not in self.steps), order[-1])

    def write(self, path: str, content: str, request: RecordedRequest) -> Reply:
        if self.agent == "codex":
            folder = path.rpartition("/")[0]
            mkdir = f"mkdir -p {folder} && " if folder else ""
            return Reply.tool_use("exec_command", {"cmd": f"{mkdir}cat > {path} <<'EOF'\n{content}EOF"})
        tool, key, _ = _TOOLS[self.agent]
        cwd = _CWD.search(request.raw.decode("utf-8", "replace"))
        target = f"{cwd[1]}/{path}" if cwd and self.agent == "claude" else path
        return Reply.tool_use(tool, {key: target, "content": content})

    def shell(self, command: str) -> Reply:
        if self.agent == "codex":
            return Reply.tool_use("exec_command", {"cmd": command})
        return Reply.tool_use(_TOOLS[self.agent][2], {"command": command})


@dataclass
class LoginTask(ScriptedModel):
    """The seed-000 login story as a scripted model for ``agent`` (claude, gemini or codex)."""

    wait_for_supervisor: bool = True  # False: finish after the first commit (a run nobody corrects)
    seen_supervisor_at: int | None = None

    def step(self, request: RecordedRequest, index: int) -> str:
        if MARKER.encode() in request.raw:
            if self.seen_supervisor_at is None:
                self.seen_supervisor_at = index
            return self.first_missing(("fix", "commit_fix", "summary_fixed"))
        if "commit" in self.steps:
            return "think" if self.wait_for_supervisor else "summary"
        return self.first_missing(("write", "commit"))

    def reply(self, step: str, request: RecordedRequest) -> Reply:
        if step == "write":
            return self.write(LOGIN_PATH, VULNERABLE_LOGIN, request)
        if step == "commit":
            return self.shell("git add -A && git commit -q -m 'Add login()'")
        if step == "think":
            return Reply.endless(0.05, text="thinking ")
        if step == "fix":
            return self.write(LOGIN_PATH, FIXED_LOGIN, request)
        if step == "commit_fix":
            return self.shell("git add -A && git commit -q -m 'login(): pass the credentials as query parameters'")
        if step == "summary_fixed":
            return Reply.text("Added login() in src/auth/login.js; the query now takes the credentials as parameters.")
        return Reply.text("Added login() in src/auth/login.js and committed it.")


@dataclass
class CommitTask(ScriptedModel):
    """Write ``NOTES.md`` and commit it; after a refusal, commit again once told it is now allowed.

    For permission recovery: run it with a manifest that does not allow ``git commit``; the CLI
    refuses the commit, the run ends, recovery widens the manifest and resumes the session with
    a message saying the permission is granted, and the model commits.
    """

    def step(self, request: RecordedRequest, index: int) -> str:
        if "commit" not in self.steps:
            return self.first_missing(("write", "commit"))
        if b"is now granted" in request.raw and "commit_again" not in self.steps:
            return "commit_again"
        return "summary_committed" if "commit_again" in self.steps else "summary_refused"

    def reply(self, step: str, request: RecordedRequest) -> Reply:
        if step == "write":
            return self.write("NOTES.md", "# Notes\n", request)
        if step in ("commit", "commit_again"):
            return self.shell("git add -A && git commit -q -m 'Add NOTES.md'")
        if step == "summary_committed":
            return Reply.text("Added NOTES.md and committed it.")
        return Reply.text("I wrote NOTES.md but I was not allowed to commit it.")


@dataclass
class ReadmeTask(ScriptedModel):
    """Rewrite README.md and commit; asked to resolve a merge conflict, write a merged README and commit.

    For the repair run: the base moved upstream with its own README, the spawn's branch conflicts,
    and a second run of the same CLI is asked to resolve the markers and conclude the merge.
    """

    def step(self, request: RecordedRequest, index: int) -> str:
        if b"conflict markers" in request.raw:
            return self.first_missing(("resolve", "conclude", "resolved"))
        return self.first_missing(("write", "commit", "summary"))

    def reply(self, step: str, request: RecordedRequest) -> Reply:
        if step == "write":
            return self.write("README.md", "# shop, rewritten here\n", request)
        if step == "commit":
            return self.shell("git add -A && git commit -q -m 'Rewrite the README'")
        if step == "resolve":
            return self.write("README.md", "# shop, rewritten here and upstream\n", request)
        if step == "conclude":
            return self.shell("git add -A && git commit -q --no-edit")
        if step == "resolved":
            return Reply.text("Resolved the README conflict, keeping both headings' intent.")
        return Reply.text("Rewrote the README.")
