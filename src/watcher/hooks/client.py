"""The hook command the CLI runs on every hook event: a thin client of the ``watcher serve`` daemon.

It reads the hook payload on stdin, forwards it to the daemon over a Unix socket and prints the
answer. When no daemon answers it starts one for the next call and judges this call in-process.
It fails open: whatever goes wrong (bad input, a dead daemon, a locked journal, an evaluator that
hangs), it prints nothing and exits 0 within its time budget, and logs why.

On the way to the daemon nothing is imported beyond the interpreter's own start (``_socket``, no
``json``): the payload goes over as bytes and the answer comes back as the JSON to print, so a
warm hook costs little more than the interpreter's start. The installed command is ``watcher-hook
EVENT ...`` (a script on PATH; ``watcher hook EVENT ...`` works the same): ``watcher._console``
sends it here before the CLI is loaded, so only ``watcher``, ``watcher.hooks`` (whose names load
lazily) and this module are imported. Run by path (``python -I -S .../client.py``) it works too,
without the site set-up, which the in-process fallback then does itself before it imports watcher.

Without a daemon, a ``PreToolUse`` call is answered by the offline guard alone (``watcher.guard``:
the only part of watcher it imports), and the watchers judge the call after the answer, in a
detached child process: what they find waits in the journal for the session's next answer.
"""

from __future__ import annotations

import _socket  # the C module: ``socket`` would import enum, and json re: half a warm hook's time
import os
import stat
import sys
import time

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing would cost the fast path
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "budget_seconds",
    "lock_path",
    "main",
    "runtime_dir",
    "socket_path",
    "socket_taken",
    "start_daemon",
]

DEFAULT_BUDGET_S = 2.0
_GUARD_RESERVE_S = 0.3  # of the budget, kept for the guard to answer alone when the daemon is too slow
_OPTIONS = {"--agent": "agent", "--mode": "mode", "--evaluator": "evaluator", "--max-stop-blocks": "max_stop_blocks"}


# os.path rather than pathlib: pathlib's imports would cost a warm hook more than its own work.


def runtime_dir() -> str:
    """Where the daemon's socket, pid and log live: private to the user (created 0700)."""
    base = os.environ.get("XDG_RUNTIME_DIR") or f"/tmp/watcher-{os.getuid()}"
    return os.path.join(base, "watcher")


def socket_path() -> str:
    """``$WATCHER_SOCKET``, else ``serve.sock`` in the runtime folder."""
    return os.environ.get("WATCHER_SOCKET") or os.path.join(runtime_dir(), "serve.sock")


def _log(message: str) -> None:
    try:
        folder = os.path.dirname(socket_path())
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with open(os.path.join(folder, "hooks.log"), "a", encoding="utf-8") as log:
            log.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid {os.getpid()}: {message}\n")
    except OSError:
        pass


def parse_args(argv: list[str], journal_env: str | None = None) -> tuple[str, dict[str, Any]]:
    """``EVENT [--agent A] [--watcher ROLE ...] [--mode M] [--evaluator E] [--max-stop-blocks N] [--budget S]``.

    ``journal_env`` is the hook's ``$WATCHER_JOURNAL`` (the daemon's own environment is not the hook's).
    """
    if not argv:
        raise ValueError("usage: watcher-hook EVENT [--agent claude|codex] [--watcher ROLE ...] [--mode ...]")
    event, rest = argv[0], argv[1:]
    config: dict[str, Any] = {}
    roles: list[str] = []
    if len(rest) % 2:
        raise ValueError(f"{rest[-1]} needs a value")
    for flag, value in zip(rest[::2], rest[1::2], strict=True):
        if flag in ("--watcher", "-w"):
            roles.append(value)
        elif flag == "--budget":
            config["budget_s"] = budget_seconds(value)
        elif flag == "--journal":
            config["journal"] = value
        elif flag == "--answered":  # the guard already answered it: the watchers judge it, nothing is printed
            config["answered"] = value == "1"
        elif flag == "--max-stop-blocks":
            if not value.isdigit():
                raise ValueError(f"--max-stop-blocks takes a whole number, 0 or more, not {value!r}")
            config["max_stop_blocks"] = int(value)
        elif flag == "--mode" and value not in ("autonomous", "manual"):
            raise ValueError(f"--mode takes autonomous or manual, not {value!r}")
        elif flag in _OPTIONS:
            config[_OPTIONS[flag]] = value
        else:
            raise ValueError(f"unknown option {flag}")
    if roles:
        config["roles"] = roles
    if "journal" not in config and journal_env:
        config["journal"] = journal_env
    return event, config


def budget_seconds(value: str) -> float:
    """A hook budget: seconds, more than 0 and at most 600 (``ValueError`` otherwise, nan and inf too)."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds <= 600:  # nan and inf fail this too
        raise ValueError(f"--budget takes seconds, more than 0 and at most 600, not {value!r}")
    return seconds


HOOK_MAGIC = b"HOOK1 "


def hook_frame(argv: list[str], raw: bytes) -> bytes:
    """A hook call on the wire: a ``HOOK1 <n> <m>`` line, the arguments (NUL-separated, n bytes),
    the hook's ``$WATCHER_JOURNAL`` (m bytes), then the payload as the CLI sent it."""
    args = "\0".join(argv).encode("utf-8", "surrogateescape")
    journal = os.environ.get("WATCHER_JOURNAL", "").encode("utf-8", "surrogateescape")
    return HOOK_MAGIC + b"%d %d\n" % (len(args), len(journal)) + args + journal + raw


def read_hook_frame(data: bytes) -> tuple[str, dict[str, Any], bytes]:
    """Inverse of ``hook_frame``: (event, config, payload); ``ValueError`` on a malformed frame.

    Arguments that do not parse (a hand-edited hook command) give ``{"invalid": why}`` as the config:
    the guard still judges the call, with no watcher.
    """
    head, _, body = data.partition(b"\n")
    n_args, n_journal = (int(x) for x in head[len(HOOK_MAGIC) :].split())
    args, journal, raw = body[:n_args], body[n_args : n_args + n_journal], body[n_args + n_journal :]
    argv = args.decode("utf-8", "surrogateescape").split("\0")
    try:
        event, config = parse_args(argv, journal.decode("utf-8", "surrogateescape") or None)
    except ValueError as exc:
        return argv[0], {"invalid": str(exc)}, raw
    return event, config, raw


def private_folder(path: str) -> bool:
    """True when ``path`` is a folder of this user that nobody else can write to.

    Whoever controls the socket's folder could answer the hooks (deny calls, tell the model
    things): a folder that is not private is not used.
    """
    try:
        st = os.stat(path)
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def _exchange(request: bytes, timeout: float) -> bytes | None:
    """Send ``request``, read the reply line; None when no daemon answered (nothing listens, it died)."""
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(timeout)
        try:
            conn.connect(socket_path())
        except OSError:
            return None
        conn.sendall(request)
        conn.shutdown(_socket.SHUT_WR)
        chunks = []
        while True:
            try:
                chunk = conn.recv(65536)
            except ConnectionResetError:
                return None
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        conn.close()
    data = b"".join(chunks)
    return data if data.endswith(b"\n") else None  # no newline: the daemon went away mid-answer


def ask_daemon(request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """The daemon's JSON reply to a JSON ``request`` (``{"op": "status"}``), or None when none answered."""
    import json

    data = _exchange(json.dumps(request).encode() + b"\n", timeout)
    reply = json.loads(data) if data else None
    return reply if isinstance(reply, dict) else None


def socket_taken(path: str) -> str:
    """Why ``path`` cannot be the daemon's socket ("" when it can): something that is not a socket is there."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return ""
    return "" if stat.S_ISSOCK(mode) else f"{path} is there and is not a socket"


def lock_path() -> str:
    """The daemon's lock: held by the daemon for its whole life, and by a hook while it starts one."""
    return os.path.splitext(socket_path())[0] + ".lock"


def start_daemon() -> bool:
    """Start ``watcher serve`` in the background for the next hook call, unless one runs or is starting.

    Single-flight: the hook takes the daemon's lock, without waiting, before anything is started, and
    hands it over to the daemon (an inherited descriptor, named by ``--lock-fd``): of a burst of cold
    calls one starts a daemon, the others see the lock held and start nothing. True when this call
    started one. What the daemon says on stderr (why it would not start) goes to ``hooks.log``.
    """
    import fcntl
    import subprocess

    os.makedirs(os.path.dirname(lock_path()), mode=0o700, exist_ok=True)
    fd = os.open(lock_path(), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # a daemon holds it (its socket is coming back) or one is starting
            return False
        log = os.open(
            os.path.join(os.path.dirname(lock_path()), "hooks.log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600
        )
        try:
            subprocess.Popen(
                [sys.executable, "-m", "watcher", "serve", "--lock-fd", str(fd)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
                pass_fds=(fd,),
            )
        finally:
            os.close(log)
        return True
    finally:
        os.close(fd)


def _site() -> None:
    if "site" not in sys.modules:  # started with -S: set site-packages up only now that it is needed
        import site

        site.main()


_LATER: list[tuple[str, dict[str, Any], bytes]] = []  # a call the watchers judge after the answer


def _guard_only(event: str, config: dict[str, Any], raw: bytes, *, later: bool = True) -> bytes | None:
    """A ``PreToolUse`` call without a daemon: the guard's answer (None: judge it the full way now).

    ``later``: the watchers judge the call after the answer (not when the hook's own arguments are wrong).
    """
    from watcher.hooks._payload import read_payload

    try:
        data = read_payload(raw)
    except RecursionError:  # an MCP tool's input nested a thousand deep: what cannot be read is not waved through
        if event != "PreToolUse":
            return None
        _site()
        from watcher.guard import TOO_DEEP

        verdict, later = TOO_DEEP, False  # nor can the watchers read it
    else:
        if not isinstance(data, dict) or str(data.get("hook_event_name") or event) != "PreToolUse":
            return None
        _site()
        from watcher.guard import judge

        tool_input = data.get("tool_input")
        verdict = judge(
            str(data.get("tool_name") or ""),
            tool_input if isinstance(tool_input, dict) else {},
            cwd=str(data.get("cwd") or "."),
        )
    if later:
        _LATER.append((event, config, raw))
    if not verdict.denied:
        return b""
    import json

    reason = verdict.render()
    body = {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}
    return json.dumps({"hookSpecificOutput": body}).encode()


def _judge_later() -> None:
    """Fork a detached child that runs the watchers on the call just answered (journaled, nothing printed)."""
    if not _LATER or os.fork() != 0:
        return
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        import fcntl
        import signal

        signal.alarm(120)  # a hung evaluator never leaves a process behind for long
        os.nice(10)  # after the answer: the session's own work comes first
        folder = os.path.dirname(socket_path())
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with open(os.path.join(folder, "later.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one at a time, so a session's calls are judged in order
            event, config, raw = _LATER[0]
            if _hand_to_daemon(raw, float(config.get("budget_s") or DEFAULT_BUDGET_S)):
                return
            out: list[dict[str, Any] | None] = []
            _in_process(event, config, raw, out, late=True)
    finally:
        os._exit(0)


def _hand_to_daemon(raw: bytes, budget: float, wait_s: float = 15.0) -> bool:
    """Give a call the guard answered to the daemon to judge (it keeps the watchers loaded).

    While a daemon is starting (its lock is held, its socket not yet there) wait for it: in a burst of
    cold calls one daemon then judges them all, instead of each call loading the watchers itself.
    """
    if os.environ.get("WATCHER_HOOK_DAEMON", "1") == "0" or not _ARGV:
        return False
    if not private_folder(os.path.dirname(socket_path())):  # whoever controls it must not read the call
        return False
    import fcntl

    frame = hook_frame([*_ARGV, "--answered", "1"], raw)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            if _exchange(frame, budget + 1.0) is not None:
                return True
        except OSError:
            return False
        try:
            with open(lock_path(), "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: no daemon is running or starting
            return False
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        except OSError:
            return False


_ARGV: list[str] = []  # this call's hook arguments, for handing it to the daemon later


def _in_process(
    event: str, config: dict[str, Any], raw: bytes, out: list[dict[str, Any] | None], *, late: bool = False
) -> None:
    try:
        _site()
        from watcher.hooks._serve_one import answer_once

        out.append(answer_once(event, config, raw, late=late))
    except Exception as exc:  # noqa: BLE001 - fail open, logged
        _log(f"{event}: in-process evaluation failed: {type(exc).__name__}: {exc}")
        out.append(None)


def answer(argv: list[str], raw: bytes) -> bytes:
    """The bytes to print for one hook call, within its budget (empty: print nothing)."""
    started = time.monotonic()
    try:
        event, config = parse_args(argv, os.environ.get("WATCHER_JOURNAL"))
    except ValueError as exc:  # a hand-edited hook command: the guard needs only the payload
        _log(f"{argv[0] if argv else '?'}: the hook command is wrong ({exc}); the guard judged the call alone")
        sys.stderr.write(
            f"watcher-hook: {exc}; the guard judged the call alone, the watchers did not"
            " (`watcher hooks install` writes the hook commands again)\n"
        )
        return _guard_only(argv[0] if argv else "", {}, raw, later=False) or b""
    _ARGV[:] = argv
    budget = float(config.get("budget_s") or DEFAULT_BUDGET_S)
    use_daemon = os.environ.get("WATCHER_HOOK_DAEMON", "1") != "0"
    folder = os.path.dirname(socket_path())
    if use_daemon and os.path.exists(folder) and not private_folder(folder):
        _log(f"{event}: {folder} is not private to this user; not using a daemon there")
        use_daemon = False
    if use_daemon:
        try:
            waited = max(budget - _GUARD_RESERVE_S, 0.1)
            reply = _exchange(hook_frame(argv, raw), waited)
        except TimeoutError:  # a daemon busy elsewhere (a huge file judged) must not open the guard
            _log(f"{event}: the daemon did not answer within {waited:g}s; the guard answers alone")
            try:
                return _guard_only(event, config, raw) or b""
            except Exception as exc:  # noqa: BLE001 - fail open, logged
                _log(f"{event}: the guard failed ({type(exc).__name__}: {exc}); failing open")
                return b""
        except OSError as exc:
            _log(f"{event}: the daemon failed ({type(exc).__name__}: {exc}); judging in-process")
            reply = None
        if reply is not None:
            return reply.strip()
        taken = socket_taken(socket_path())
        if taken:
            _log(f"{event}: {taken}; no daemon is started there, the guard answers alone")
        else:
            try:
                start_daemon()
            except OSError as exc:
                _log(f"{event}: cannot start the daemon: {exc}")
    # No daemon answered. A tool call is answered by the guard now, the watchers judge it after.
    try:
        quick = _guard_only(event, config, raw)
    except Exception as exc:  # noqa: BLE001 - the full in-process path below still judges it
        _log(f"{event}: the guard failed ({type(exc).__name__}: {exc}); judging in-process")
        quick = None
    if quick is not None:
        return quick
    # Judge in-process, on a thread we can walk away from at the deadline.
    import json
    import threading

    out: list[dict[str, Any] | None] = []
    worker = threading.Thread(target=_in_process, args=(event, config, raw, out), daemon=True)
    worker.start()
    worker.join(max(budget - (time.monotonic() - started), 0.05))
    if not out:
        _log(f"{event}: no verdict within the {budget:g}s budget; failing open")
        return b""
    return json.dumps(out[0]).encode() if out[0] else b""


def main(argv: list[str] | None = None) -> int:
    """Run one hook call; always exits 0 (fail open)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if sys.stdin.isatty():  # a person typed it: there is no payload to wait for
            sys.stderr.write(
                "watcher-hook: the agent CLI runs this with a hook payload on stdin; to ask the guard"
                " about a call, run `watcher hooks check 'COMMAND'` or `watcher hooks check --tool Read --path P`\n"
            )
            return 0
        found = answer(args, sys.stdin.buffer.read())
        if found:
            sys.stdout.buffer.write(found + b"\n")
            sys.stdout.flush()
        _judge_later()
    except BaseException as exc:  # noqa: BLE001 - a hook never breaks the session it watches
        _log(f"{args[0] if args else '?'}: failed open: {type(exc).__name__}: {exc}")
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # do not wait for an abandoned in-process evaluation thread
