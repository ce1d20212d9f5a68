"""A fake agent CLI that replays recorded stream lines, so most spawn tests need no npm.

``python -m watcher.testing.fake_cli SCRIPT.jsonl [ignored CLI flags...]`` prints each line of
the script to stdout as it is (a recorded Claude Code / Codex / Gemini stream line), except lines
that are JSON objects with a ``"fake"`` key, which are directives:

=====================================================  ===========================================
``{"fake": "sleep", "s": 0.2}``                        wait
``{"fake": "hang"}``                                   stop answering (a stalled model stream)
``{"fake": "write", "path": "a.js", "content": ".."}`` write a file under the working directory
``{"fake": "run", "argv": ["git", "commit", ...]}``    run a command in the working directory
``{"fake": "await_input", "timeout": 5}``              read stdin until a ``user`` line arrives,
                                                       answering ``control_request`` lines with a
                                                       success ``control_response``; with
                                                       ``"or_exit": N`` it exits N if none came
``{"fake": "stderr", "text": ".."}``                   write to stderr
``{"fake": "exit", "code": 3}``                        exit now with ``code`` (a crash)
=====================================================  ===========================================

When the CLI is resumed (``--resume`` or ``resume`` among the flags) and ``SCRIPT.resume.jsonl``
exists beside the script, that one is replayed instead. Run with ``--input-format stream-json``
(as the Claude adapter does), it first reads the task line from stdin, as Claude Code does.
With ``--replay-user-messages`` among the flags, each ``user`` line it reads (the task included) is
echoed back with ``"isReplay": true``, as Claude Code acknowledges a message it took.
``--version`` alone prints a line with no version number (it imitates no version in particular).
``@CWD@`` in any line is replaced by the working directory. Every stdin line received is appended
to the file named by ``WATCHER_FAKE_CLI_INBOX`` when it is set, and every argv to
``WATCHER_FAKE_CLI_ARGV``, so a test can check what the supervisor sent. ``launcher(script, dir)``
writes an executable that runs this module with the script, for use as a CLI path.
"""

from __future__ import annotations

import json
import os
import select
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["launcher", "main"]


def launcher(script: str | Path, directory: str | Path, name: str = "fake-agent") -> Path:
    """An executable file in ``directory`` that replays ``script`` (absolute paths, works under ``env -i``)."""
    path = Path(directory) / name
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m watcher.testing.fake_cli "{Path(script).resolve()}" "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


#: the files a test named (``WATCHER_FAKE_CLI_ARGV``, ``WATCHER_FAKE_CLI_INBOX``) for what this fake CLI saw;
#: read from its environment by ``main``, as an agent CLI reads its own
_NOTES: dict[str, str] = {}


def _note(variable: str, text: str) -> None:
    target = _NOTES.get(variable)
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(text.rstrip("\n") + "\n")


def _emit(record: dict[str, Any] | str) -> None:
    sys.stdout.write((record if isinstance(record, str) else json.dumps(record)) + "\n")
    sys.stdout.flush()


class _Stdin:
    """stdin read line by line at the file-descriptor level, so ``select`` never misses a buffered line."""

    def __init__(self) -> None:
        self._buffer = b""
        self._eof = False

    def readline(self, timeout: float) -> str | None:
        """The next line, or None at EOF or when ``timeout`` passes first."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer and not self._eof:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([sys.stdin.fileno()], [], [], left)[0]:
                return None
            chunk = os.read(sys.stdin.fileno(), 65536)
            self._buffer += chunk
            self._eof = not chunk
        if b"\n" not in self._buffer:
            line, self._buffer = self._buffer, b""
            return line.decode() or None
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode() + "\n"


_STDIN = _Stdin()
_REPLAY = {"on": False}  # --replay-user-messages: echo each user line read


def _took(line: str) -> None:
    """Echo a ``user`` line read from stdin, as Claude Code does with ``--replay-user-messages``."""
    try:
        message = json.loads(line)
    except ValueError:
        return
    if _REPLAY["on"] and isinstance(message, dict) and message.get("type") == "user":
        _emit({**message, "isReplay": True})


def _await_input(timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        line = _STDIN.readline(left)
        if line is None:
            break
        _note("WATCHER_FAKE_CLI_INBOX", line)
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("type") == "control_request":
            response = {"subtype": "success", "request_id": message.get("request_id"), "response": {}}
            _emit({"type": "control_response", "response": response})
        elif message.get("type") == "user":
            _took(line)
            return True
    return False


def _directive(step: dict[str, Any], cwd: Path) -> None:
    what = step["fake"]
    if what == "sleep":
        time.sleep(float(step.get("s", 0)))
    elif what == "hang":
        while True:
            time.sleep(3600)
    elif what == "write":
        target = cwd / step["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(step["content"], encoding="utf-8")
    elif what == "run":
        subprocess.run(step["argv"], cwd=cwd, check=False, capture_output=True)
    elif what == "await_input":
        if not _await_input(float(step.get("timeout", 10))) and "or_exit" in step:
            sys.exit(int(step["or_exit"]))  # the message never came: fail the way a test can see
    elif what == "stderr":
        sys.stderr.write(step["text"] + "\n")
        sys.stderr.flush()
    elif what == "exit":
        sys.exit(int(step.get("code", 0)))
    else:
        raise SystemExit(f"fake_cli: unknown directive {what!r}")


def main(argv: list[str] | None = None) -> int:
    """Replay the script named by the first argument; the other arguments are recorded and ignored."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m watcher.testing.fake_cli SCRIPT.jsonl [CLI flags ...]", file=sys.stderr)
        return 2
    if args[1:] == ["--version"]:  # asked as a real CLI is; it imitates no version in particular
        print("fake agent CLI (replays a recorded stream)")
        return 0
    _NOTES.update((k, v) for k, v in os.environ.items() if k.startswith("WATCHER_FAKE_CLI_"))
    _note("WATCHER_FAKE_CLI_ARGV", json.dumps(args[1:]))
    _REPLAY["on"] = "--replay-user-messages" in args[1:]
    if "stream-json" in args[1:] and "--input-format" in args[1:]:
        task = _STDIN.readline(30) or ""  # the task, as Claude Code reads it first
        _note("WATCHER_FAKE_CLI_INBOX", task)
        _took(task)
    cwd = Path.cwd()
    script = Path(args[0])
    resumed = script.with_suffix(".resume.jsonl")
    if any(a in ("--resume", "resume") for a in args[1:]) and resumed.exists():
        script = resumed
    for raw in script.read_text(encoding="utf-8").splitlines():
        line = raw.replace("@CWD@", str(cwd))
        if not line.strip():
            continue
        try:
            step = json.loads(line)
        except ValueError:
            step = None
        if isinstance(step, dict) and "fake" in step:
            _directive(step, cwd)
        else:
            _emit(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
