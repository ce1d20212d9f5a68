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
from dataclasses import dataclass, field

from watcher.testing.scripts import RecordedRequest, Reply

__all__ = ["FIXED_LOGIN", "VULNERABLE_LOGIN", "CommitTask", "LoginTask", "ReadmeTask"]

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
class LoginTask:
    """The seed-000 login story as a scripted model for ``agent`` (claude, gemini or codex)."""

    agent: str = "claude"
    wait_for_supervisor: bool = True  # False: finish after the first commit (a run nobody corrects)
    requests_at: list[float] = field(default_factory=list)
    seen_supervisor_at: int | None = None
    steps: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def replies(self, n: int = 30) -> list[Reply]:
        """Enough dynamic replies for a whole run."""
        return [Reply.dynamic(self)] * n

    def _write(self, content: str, request: RecordedRequest) -> Reply:
        if self.agent == "codex":
            script = f"mkdir -p src/auth && cat > {LOGIN_PATH} <<'EOF'\n{content}EOF"
            return Reply.tool_use("exec_command", {"cmd": script})
        tool, key, _ = _TOOLS[self.agent]
        # Claude Code wants absolute paths; its system prompt names the working directory
        cwd = _CWD.search(request.raw.decode("utf-8", "replace"))
        path = f"{cwd[1]}/{LOGIN_PATH}" if cwd and self.agent == "claude" else LOGIN_PATH
        return Reply.tool_use(tool, {key: path, "content": content})

    def _shell(self, command: str) -> Reply:
        if self.agent == "codex":
            return Reply.tool_use("exec_command", {"cmd": command})
        return Reply.tool_use(_TOOLS[self.agent][2], {"command": command})

    def __call__(self, request: RecordedRequest) -> Reply:
        with self._lock:
            index = len(self.requests_at)
            self.requests_at.append(time.time())
            supervised = MARKER.encode() in request.raw
            if supervised and self.seen_supervisor_at is None:
                self.seen_supervisor_at = index
            step = self._next(supervised)
            self.steps.append(step)
        return self._reply(step, request)

    def _next(self, supervised: bool) -> str:
        done = set(self.steps)
        if supervised:
            for step in ("fix", "commit_fix", "summary_fixed"):
                if step not in done:
                    return step
            return "summary_fixed"
        for step in ("write", "commit"):
            if step not in done:
                return step
        return "think" if self.wait_for_supervisor else "summary"

    def _reply(self, step: str, request: RecordedRequest) -> Reply:
        if step == "write":
            return self._write(VULNERABLE_LOGIN, request)
        if step == "commit":
            return self._shell("git add -A && git commit -q -m 'Add login()'")
        if step == "think":
            return Reply.endless(0.05, text="thinking ")
        if step == "fix":
            return self._write(FIXED_LOGIN, request)
        if step == "commit_fix":
            return self._shell("git add -A && git commit -q -m 'login(): pass the credentials as query parameters'")
        if step == "summary_fixed":
            return Reply.text("Added login() in src/auth/login.js; the query now takes the credentials as parameters.")
        return Reply.text("Added login() in src/auth/login.js and committed it.")


@dataclass
class CommitTask:
    """Write ``NOTES.md`` and commit it; after a refusal, commit again once told it is now allowed.

    For permission recovery: run it with a manifest that does not allow ``git commit``; the CLI
    refuses the commit, the run ends, recovery widens the manifest and resumes the session with
    a message saying the permission is granted, and the model commits.
    """

    agent: str = "claude"
    steps: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def replies(self, n: int = 20) -> list[Reply]:
        return [Reply.dynamic(self)] * n

    def __call__(self, request: RecordedRequest) -> Reply:
        with self._lock:
            done = set(self.steps)
            granted = b"is now granted" in request.raw
            if "write" not in done:
                step = "write"
            elif "commit" not in done:
                step = "commit"
            elif granted and "commit_again" not in done:
                step = "commit_again"
            else:
                step = "summary_committed" if "commit_again" in done else "summary_refused"
            self.steps.append(step)
        if self.agent == "codex" and step in ("write", "commit", "commit_again"):
            command = (
                "printf '# Notes\\n' > NOTES.md" if step == "write" else "git add -A && git commit -q -m 'Add NOTES.md'"
            )
            return Reply.tool_use("exec_command", {"cmd": command})
        if step == "write":
            cwd = _CWD.search(request.raw.decode("utf-8", "replace"))
            tool, key, _ = _TOOLS[self.agent]
            path = f"{cwd[1]}/NOTES.md" if cwd and self.agent == "claude" else "NOTES.md"
            return Reply.tool_use(tool, {key: path, "content": "# Notes\n"})
        if step in ("commit", "commit_again"):
            return Reply.tool_use(_TOOLS[self.agent][2], {"command": "git add -A && git commit -q -m 'Add NOTES.md'"})
        if step == "summary_committed":
            return Reply.text("Added NOTES.md and committed it.")
        return Reply.text("I wrote NOTES.md but I was not allowed to commit it.")


@dataclass
class ReadmeTask:
    """Rewrite README.md and commit; asked to resolve a merge conflict, write a merged README and commit.

    For the repair run: the base moved upstream with its own README, the spawn's branch conflicts,
    and a second run of the same CLI is asked to resolve the markers and conclude the merge.
    """

    agent: str = "claude"
    steps: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def replies(self, n: int = 20) -> list[Reply]:
        return [Reply.dynamic(self)] * n

    def __call__(self, request: RecordedRequest) -> Reply:
        with self._lock:
            repairing = b"conflict markers" in request.raw
            done = set(self.steps)
            order = ("resolve", "conclude", "resolved") if repairing else ("write", "commit", "summary")
            step = next((s for s in order if s not in done), order[-1])
            self.steps.append(step)
        tool, key, shell = _TOOLS[self.agent]
        cwd = _CWD.search(request.raw.decode("utf-8", "replace"))
        path = f"{cwd[1]}/README.md" if cwd and self.agent == "claude" else "README.md"
        if step == "write":
            return Reply.tool_use(tool, {key: path, "content": "# shop, rewritten here\n"})
        if step == "commit":
            return Reply.tool_use(shell, {"command": "git add -A && git commit -q -m 'Rewrite the README'"})
        if step == "resolve":
            return Reply.tool_use(tool, {key: path, "content": "# shop, rewritten here and upstream\n"})
        if step == "conclude":
            return Reply.tool_use(shell, {"command": "git add -A && git commit -q --no-edit"})
        if step == "resolved":
            return Reply.text("Resolved the README conflict, keeping both headings' intent.")
        return Reply.text("Rewrote the README.")
