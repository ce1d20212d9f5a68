"""``watcher serve``: the per-user daemon that answers hook calls over a Unix socket.

It holds, per journal, one ``Desk`` (runtime, watchers, journal writer), so a hook call costs a
socket round trip instead of an interpreter start and the security engines' import, and a
session's watchers keep their history between calls. One request per connection, half-closed by the client: a hook frame
(``client.hook_frame``: the hook's arguments and payload as bytes) answered by the JSON line to
print (an empty line: print nothing), or ``{"op": "status"}`` answered by the daemon's status.

A call the offline guard denies is answered at once, before any watcher runs; the watchers still
judge it (and journal the denial). A call that runs past its budget is answered with nothing (the hook fails open) while its
evaluation goes on: its verdict reaches the session with the next hook answer. The daemon exits
after ``idle_s`` without a request, or on ``{"op": "stop"}`` (``watcher hooks stop``).

One daemon per socket: it holds a lock file for its whole life, and a hook that starts one takes
that lock first and hands it over (``client.start_daemon``), so a burst of cold calls starts one.
It checks its socket twice a second: one deleted, or replaced by another socket, is bound again, so
the hooks find it within a second instead of being judged cold until it idles out. Anything else
put at the socket's path (a file, a folder) is not the daemon's to delete: it leaves it and stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import signal
import stat
import time
from collections import deque
from pathlib import Path
from typing import IO, Any

from watcher.core.errors import ConfigurationError
from watcher.core.logs import logger
from watcher.guard import TOO_DEEP
from watcher.hooks._desk import Desk, guard_verdict
from watcher.hooks._serve_one import journal_path_for
from watcher.hooks._session import HookConfig
from watcher.hooks._upkeep import Collector, warm
from watcher.hooks._wire import AGENTS, Answer, HookCall
from watcher.hooks.client import (
    HOOK_MAGIC,
    ask_daemon,
    lock_path,
    private_folder,
    read_hook_frame,
    socket_path,
    socket_taken,
)
from watcher.runtime.journal import Journal
from watcher.settings import Settings

__all__ = ["Daemon", "NotASocket", "serve", "stop_daemon"]

log = logger("watcher.hooks.daemon")

# answer this much before the hook's budget ends: before the hook stops waiting (it keeps 0.3 s for its guard)
_MARGIN_S = 0.4
_CHECK_S = 0.5  # how often the daemon checks that its socket is still the one it listens on
_SETTLE_AT_STOP_S = 10.0  # how long a stop waits for the judgments of calls already answered
_REOPEN_S = 10.0  # a journal that would not open (locked, damaged) is tried again after this long


class NotASocket(ConfigurationError):
    """The socket's path holds something else (a file, a folder, a device): the daemon does not delete it."""


class Daemon:
    """The hook server: desks by journal, an idle timer, a status reply."""

    def __init__(
        self, path: Path, *, idle_s: float = 900.0, own_process: bool = False, settings: Settings | None = None
    ) -> None:
        self.path = path
        self.idle_s = idle_s
        self.settings = settings  # the daemon's environment, read as it started (None: each desk reads it)
        self.started = time.time()
        self.calls = 0
        self.own_process = own_process  # the process is the daemon's alone: it runs the garbage collector
        self.collector = Collector()
        self._in_flight = 0
        self._desks: dict[Path | str, Desk] = {}
        self._opening: dict[Path | str, asyncio.Task[Desk]] = {}
        self._unopened: dict[Path | str, tuple[float, Exception]] = {}  # journals that would not open, and when
        self._judging: set[asyncio.Task[Any]] = set()  # calls whose watchers still judge
        self._last = time.monotonic()
        self._server: asyncio.Server | None = None
        self._bound: tuple[int, int] | None = None  # the socket file's (device, inode) when bound
        self._stop = asyncio.Event()
        self.failures: deque[str] = deque(maxlen=10)  # what went wrong lately: `hooks status` shows it

    def _failed(self, text: str) -> None:
        log.warning("%s", text)
        self.failures.append(f"{time.strftime('%H:%M:%S')} {text}")

    async def _desk(self, journal_path: Path | str) -> Desk:
        desk = self._desks.get(journal_path)
        if desk is not None:
            return desk
        failed = self._unopened.get(journal_path)
        if failed is not None and time.monotonic() - failed[0] < _REOPEN_S:
            raise failed[1]  # a locked journal: each call is not made to wait for it again
        task = self._opening.get(journal_path)
        if task is None:  # one opening per journal, however many calls wait for it
            task = asyncio.get_running_loop().create_task(self._open_desk(journal_path))
            self._opening[journal_path] = task
        return await asyncio.shield(task)

    async def _open_desk(self, journal_path: Path | str) -> Desk:
        try:
            journal = await asyncio.to_thread(Journal, journal_path)
            desk = self._desks[journal_path] = Desk(journal, settings=self.settings)
            self._unopened.pop(journal_path, None)
            return desk
        except Exception as exc:
            self._unopened[journal_path] = (time.monotonic(), exc)
            raise
        finally:
            self._opening.pop(journal_path, None)

    async def _hook(self, event: str, options: dict[str, Any], raw: bytes) -> dict[str, Any] | None:
        agent = str(options.get("agent") or "claude")
        try:
            call = HookCall.parse(agent if agent in AGENTS else "claude", event, raw)
        except RecursionError:
            return Answer("deny", TOO_DEEP.render()).wire(event, agent) if event == "PreToolUse" else None
        try:
            config = HookConfig.from_dict(options)
            wrong = str(options.get("invalid") or "")
        except ConfigurationError as exc:
            wrong = str(exc)
        if wrong:  # a hand-edited hook command: its options cannot open the guard, which needs only the payload
            self._failed(f"the hook command is wrong ({wrong}); the guard judged {call.event} alone")
            verdict = guard_verdict(call) if call.event == "PreToolUse" else None
            return Answer("deny", verdict.render()).wire(call.event, call.agent) if verdict and verdict.denied else None
        answered = bool(options.get("answered"))  # the guard answered it already (a cold call's hand-over)

        gone = asyncio.Event()
        verdict = guard_verdict(call) if call.event == "PreToolUse" else None

        async def judge() -> dict[str, Any] | None:
            desk = await self._desk(journal_path_for(config, call))
            answer = await desk.handle(call, config, gone=gone, answered=answered, verdict=verdict)
            return None if answered else answer.wire(call.event, call.agent)

        task = asyncio.get_running_loop().create_task(judge())
        self._judging.add(task)  # a stop waits for it: a call answered is judged and journaled
        task.add_done_callback(self._judging.discard)
        if verdict is not None and verdict.denied:
            # The rules decide at once: the reply leaves before the watchers run (a desk's first call
            # imports the security engines and holds the loop). They judge the call all the same,
            # journal the denial, and what else they find rides on the next answer.
            gone.set()
            task.add_done_callback(self._late_failure)
            return Answer("deny", verdict.render()).wire(call.event, call.agent)
        try:
            return await asyncio.wait_for(asyncio.shield(task), max(config.budget_s - _MARGIN_S, 0.05))
        except TimeoutError:
            gone.set()
            task.add_done_callback(self._late_failure)  # it goes on: the verdict rides on the next answer
            self._failed(f"{call.event} of {call.session}: past the {config.budget_s:g}s budget; answered nothing")
            return None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._last = time.monotonic()
        self.calls += 1
        self._in_flight += 1
        try:
            await self._reply(reader, writer)
        finally:
            self._in_flight -= 1
        self._last = time.monotonic()
        self.collector.answered(busy=self._in_flight > 0)

    async def _reply(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        reply = b""
        try:
            data = await asyncio.wait_for(reader.read(), 5)  # the client half-closes after its request
            if data.startswith(HOOK_MAGIC):
                answer = await self._hook(*read_hook_frame(data))
                reply = json.dumps(answer).encode() if answer else b""
            elif json.loads(data).get("op") == "status":
                reply = json.dumps(self.status()).encode()
            elif json.loads(data).get("op") == "stop":
                reply = json.dumps({"stopping": os.getpid()}).encode()
                self._stop.set()
        except Exception as exc:  # noqa: BLE001 - a bad call is answered with nothing; the hook fails open
            self._failed(f"hook call failed: {type(exc).__name__}: {exc}")
        with contextlib.suppress(ConnectionError):
            writer.write(reply + b"\n")
            await writer.drain()
            writer.close()
            await writer.wait_closed()  # the hook reads until the socket closes: then it is answered

    def status(self) -> dict[str, Any]:
        """What ``watcher hooks status`` shows about the daemon."""
        return {
            "pid": os.getpid(),
            "uptime_s": round(time.time() - self.started, 1),
            "calls": self.calls,
            "journals": {str(path): list(desk.sessions) for path, desk in self._desks.items()},
            "failures": list(self.failures),
            "problems": sorted({p for desk in self._desks.values() for p in desk.problems[-5:]}),
        }

    def _late_failure(self, task: asyncio.Task[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self._failed(f"a late hook evaluation failed: {task.exception()}")

    async def _bind(self) -> None:
        """Listen on ``path``, replacing a socket left there (the lock says the path is this daemon's).

        Anything else there (a file, a folder, a device) is not the daemon's to delete: ``NotASocket``.
        """
        if self._server is not None:
            self._server.close()
        taken = socket_taken(str(self.path))
        if taken:
            raise NotASocket(taken)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.path))
        os.chmod(self.path, 0o600)
        st = os.stat(self.path)
        self._bound = (st.st_dev, st.st_ino)

    def _socket_lost(self) -> str:
        """Why ``path`` is no longer this daemon's socket ("" while it is)."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return "was deleted"
        if (st.st_dev, st.st_ino) != self._bound or not stat.S_ISSOCK(st.st_mode):
            return "was replaced"
        return ""

    async def _warm(self) -> None:
        """Load the engines a first call would (on a thread: calls are served meanwhile), then freeze them."""
        try:
            await asyncio.to_thread(warm)
        except Exception as exc:  # noqa: BLE001 - the first call loads them itself
            self._failed(f"loading the watchers' engines at start failed: {type(exc).__name__}: {exc}")
        if self.own_process:
            self.collector.start()

    async def run(self) -> None:
        """Serve until idle for ``idle_s`` (or told to stop); then settle every desk and close its journal."""
        await self._bind()
        stop = self._stop
        for sig in (signal.SIGTERM, signal.SIGINT):  # stop cleanly: what is judged gets journaled
            asyncio.get_running_loop().add_signal_handler(sig, stop.set)
        warming = asyncio.get_running_loop().create_task(self._warm())
        try:
            while time.monotonic() - self._last < self.idle_s and not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), min(_CHECK_S, self.idle_s))
                if not self._in_flight:
                    self.collector.idle(time.monotonic() - self._last)
                lost = self._socket_lost()
                if lost and not stop.is_set():
                    try:
                        await self._bind()
                    except NotASocket as exc:  # someone put their own file there: leave it, and stop
                        self._failed(f"the socket {self.path} {lost}: {exc}; stopping")
                        break
                    self._failed(f"the socket {self.path} {lost}; listening on it again")
        finally:
            warming.cancel()
            self.collector.stop()
            if self._server is not None:
                self._server.close()
            if not self._socket_lost():  # only our own socket: one put there since is not ours to remove
                self.path.unlink()
            if self._judging:  # calls answered before the stop (a denial leaves before its judgment)
                await asyncio.wait(set(self._judging), timeout=_SETTLE_AT_STOP_S)
            for desk in list(self._desks.values()):
                await desk.close()
                await asyncio.to_thread(desk.journal.close)


def _lock_file(sock: Path, handed: int | None) -> IO[str]:
    """The lock file: the one the hook that started this daemon locked and handed over, else opened here."""
    if handed is not None:
        with contextlib.suppress(OSError):
            return os.fdopen(handed, "w")
    return open(sock.with_suffix(".lock"), "w")  # held for the daemon's lifetime


def stop_daemon(timeout: float = 15.0) -> str:
    """Ask the daemon to stop and wait until it has (its journals settled); what ``hooks stop`` prints."""
    import fcntl

    reply = ask_daemon({"op": "stop"}, 5.0)
    if reply is None:
        return f"no hook daemon is running ({socket_path()})"
    deadline = time.monotonic() + timeout
    with open(lock_path(), "a") as lock:
        while time.monotonic() < deadline:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                time.sleep(0.05)
                continue
            fcntl.flock(lock, fcntl.LOCK_UN)
            return f"stopped the hook daemon (pid {reply.get('stopping')})"
    return f"asked the hook daemon (pid {reply.get('stopping')}) to stop; it is still settling its journals"


def serve(
    *, idle_s: float = 900.0, path: Path | None = None, lock_fd: int | None = None, settings: Settings | None = None
) -> int:
    """Run the daemon in this process; returns 0, or 1 when another daemon already serves ``path``.

    ``lock_fd`` is the daemon's lock, already taken by the hook that started this process;
    ``settings`` the environment the command read (the evaluators' keys and servers).
    """
    sock = path or Path(socket_path())
    if len(os.fsencode(sock)) > 107:  # sun_path holds 108 bytes with its NUL
        raise ConfigurationError(
            f"the hook daemon's socket path is {len(os.fsencode(sock))} bytes, longer than the 107 a Unix socket "
            f"allows ({sock}); set WATCHER_SOCKET (or XDG_RUNTIME_DIR) to a shorter path"
        )
    taken = socket_taken(str(sock))
    if taken:
        raise NotASocket(f"{taken}: the hook daemon does not replace it. Set WATCHER_SOCKET to a path of its own.")
    sock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not private_folder(str(sock.parent)):
        raise ConfigurationError(
            f"{sock.parent} is not private to this user (another owner, or writable by others): whoever "
            "controls it could answer the hooks. Remove it, or set WATCHER_SOCKET to a path in a private folder."
        )
    lock = _lock_file(sock, lock_fd)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        return 1
    try:
        sock.with_suffix(".pid").write_text(str(os.getpid()))
        logging.basicConfig(
            filename=str(sock.parent / "serve.log"), level=logging.INFO, format="%(asctime)s %(name)s %(message)s"
        )
        asyncio.run(Daemon(sock, idle_s=idle_s, own_process=True, settings=settings).run())
        return 0
    finally:
        with contextlib.suppress(FileNotFoundError):
            sock.with_suffix(".pid").unlink()
        lock.close()
