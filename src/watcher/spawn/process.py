"""The agent CLI as a child process: its own process group, streamed lines, enforced timeouts.

The CLIs never time out a stalled model stream themselves, so the supervisor does: ``lines()``
yields stdout lines and ends with a ``Stop`` reason when no line came for ``idle_s`` or the run
exceeded ``total_s``; ``stop()`` sends SIGTERM to the whole group, then SIGKILL after a grace
period (a CLI's children, such as a hung shell command, go with it). When the CLI exits, what it
left running in its group is stopped too, so a background child holding its stdout cannot keep
the run open. stderr goes to a log file.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from watcher.core.errors import SpawnError

__all__ = ["AgentProcess"]

_LIMIT = 64 * 1024 * 1024  # one stream-json line can hold a whole file the agent read
_STRAGGLE_S = 2.0  # after the CLI exits, how long what it left running may still hold its output
_POLL_S = 0.05


class AgentProcess:
    """One run of an agent CLI; ``stop_reason`` says why it ended early ('' when it exited itself)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stderr_log: Path,
        scrub: Callable[[bytes], bytes] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.cwd = cwd
        self.env = dict(env)
        self.stderr_log = stderr_log
        self._scrub = scrub or (lambda data: data)
        self.stop_reason = ""
        self.started = 0.0
        self.last_activity = 0.0
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._dropping = False  # inside a stdout line longer than _LIMIT

    @property
    def pid(self) -> int:
        return self._proc.pid if self._proc else -1

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc else None

    async def start(self) -> None:
        """Start the CLI in a new session (its own process group), pipes on all three streams."""
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.argv,
                cwd=self.cwd,
                env=self.env,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                limit=_LIMIT,
            )
        except OSError as exc:
            raise SpawnError(f"could not start {self.argv[0]}: {exc}") from exc
        self.started = self.last_activity = time.monotonic()
        self._stderr_task = asyncio.get_running_loop().create_task(self._drain_stderr())

    async def _drain_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        with self.stderr_log.open("ab") as log:
            while chunk := await self._proc.stderr.read(65536):
                log.write(self._scrub(chunk))
                log.flush()

    async def write(self, record: Mapping[str, Any]) -> bool:
        """Send one JSON line on stdin; False when the CLI no longer reads it."""
        stdin = self._proc.stdin if self._proc else None
        if stdin is None or stdin.is_closing():
            return False
        try:
            stdin.write((json.dumps(record) + "\n").encode())
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True

    def close_stdin(self) -> None:
        """End of input: a stream-json CLI finishes its current turn and exits."""
        stdin = self._proc.stdin if self._proc else None
        if stdin is not None and not stdin.is_closing():
            stdin.close()

    async def lines(self, idle_s: float, total_s: float) -> AsyncIterator[str]:
        """stdout lines until EOF, or until a timeout stops the process (``stop_reason`` says which)."""
        assert self._proc is not None and self._proc.stdout is not None
        exited = 0.0  # when the CLI was first seen exited: a child it left may hold its stdout open
        while True:
            now = time.monotonic()
            idle_left = idle_s - (now - self.last_activity)
            total_left = total_s - (now - self.started)
            if total_left <= 0 or idle_left <= 0:
                why = (
                    f"total timeout ({total_s:g}s)" if total_left <= 0 else f"idle timeout (no output for {idle_s:g}s)"
                )
                await self.stop(why)
                return
            if self._proc.returncode is not None:
                exited = exited or now
                if now - exited >= 2 * _STRAGGLE_S:  # held by a process outside the group: stop reading
                    return
                if now - exited >= _STRAGGLE_S:  # what the CLI left running goes with it, and stdout closes
                    _signal_group(self._proc.pid, signal.SIGKILL)
            dropping = self._dropping
            wait = min(idle_left, total_left, _STRAGGLE_S / 4)  # (wakes to see whether the CLI has exited)
            try:
                raw = await asyncio.wait_for(self._read_line(), timeout=wait)
            except TimeoutError:
                continue
            if raw == b"":
                return
            self.last_activity = time.monotonic()
            if raw is not None:
                yield raw.decode("utf-8", errors="replace").rstrip("\n")
            elif self._dropping and not dropping:  # a note in the stream's log, in place of the line
                yield f"[watcher: a stdout line longer than {_LIMIT >> 20} MiB was dropped]"

    async def _read_line(self) -> bytes | None:
        """The next stdout line (b"" at the end), or None while a line longer than ``_LIMIT`` is dropped.

        Such a line is read in pieces to its newline and dropped (``_dropping``), so the next line is
        whole and the CLI never blocks on a full pipe.
        """
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        try:
            raw = await stdout.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            raw = exc.partial  # the last line had no newline (b"" at the end)
        except asyncio.LimitOverrunError as exc:
            await stdout.readexactly(exc.consumed)  # what was buffered of the long line
            self._dropping = True
            return None
        if self._dropping and raw:
            self._dropping = False  # that was the long line's end
            return None
        return raw

    async def wait(self) -> int:
        """The CLI's exit status, once it exited; what it left running in its group is stopped."""
        assert self._proc is not None
        await self._exited()
        _signal_group(self._proc.pid, signal.SIGKILL)
        if self._stderr_task is not None:  # a process outside the group may still hold stderr: give up on it
            await asyncio.wait({self._stderr_task}, timeout=_STRAGGLE_S)
            self._stderr_task.cancel()
            await asyncio.gather(self._stderr_task, return_exceptions=True)
        return self._proc.returncode if self._proc.returncode is not None else -1

    async def stop(self, reason: str, grace_s: float = 3.0) -> None:
        """SIGTERM the process group, SIGKILL it after ``grace_s``; records ``reason``."""
        self.stop_reason = self.stop_reason or reason
        proc = self._proc
        if proc is None:
            return
        if proc.returncode is None:
            self.close_stdin()
            _signal_group(proc.pid, signal.SIGTERM)
            if not await self._exited(grace_s):
                _signal_group(proc.pid, signal.SIGKILL)
                await self._exited()
        _signal_group(proc.pid, signal.SIGKILL)  # children that ignored SIGTERM, or outlived their leader

    async def _exited(self, within: float | None = None) -> bool:
        """Wait until the CLI's process exited; False after ``within`` seconds.

        ``Process.wait()`` also waits for every pipe to close, which a child the CLI left running
        can hold open for ever: the exit status the child watcher recorded is polled instead.
        """
        assert self._proc is not None
        deadline = None if within is None else time.monotonic() + within
        while self._proc.returncode is None:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            await asyncio.sleep(_POLL_S)
        return True


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
