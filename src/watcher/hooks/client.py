"""The hook command the CLI runs on every hook event: a thin client of the ``watcher serve`` daemon.

It reads the hook payload on stdin, forwards it to the daemon over a Unix socket and prints the
answer. When no daemon answers it starts one for the next call and judges this call in-process.
It fails open: whatever goes wrong (bad input, a dead daemon, a locked journal, an evaluator that
hangs), it prints nothing and exits 0 within its time budget, and logs why.

Only the standard library is imported on the way to the daemon, so a warm hook costs little more
than the interpreter's start. The installed command runs this file by path (``python -I -S
.../watcher/hooks/client.py EVENT ...``): not even the ``watcher`` package is imported then, and
``-S`` skips the site-packages set-up (a third of a bare start); the in-process fallback does
that set-up itself before it imports watcher.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from typing import Any

__all__ = ["main", "runtime_dir", "socket_path"]

DEFAULT_BUDGET_S = 2.0
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


def parse_args(argv: list[str]) -> tuple[str, dict[str, Any]]:
    """``EVENT [--agent A] [--watcher ROLE ...] [--mode M] [--evaluator E] [--max-stop-blocks N] [--budget S]``."""
    if not argv:
        raise ValueError("usage: watcher hook EVENT [--agent claude|codex] [--watcher ROLE ...] [--mode ...]")
    event, rest = argv[0], argv[1:]
    config: dict[str, Any] = {}
    roles: list[str] = []
    i = 0
    while i < len(rest):
        flag = rest[i]
        value = rest[i + 1] if i + 1 < len(rest) else None
        if value is None:
            raise ValueError(f"{flag} needs a value")
        if flag in ("--watcher", "-w"):
            roles.append(value)
        elif flag == "--budget":
            config["budget_s"] = float(value)
        elif flag == "--journal":
            config["journal"] = value
        elif flag in _OPTIONS:
            config[_OPTIONS[flag]] = int(value) if flag == "--max-stop-blocks" else value
        else:
            raise ValueError(f"unknown option {flag}")
        i += 2
    if roles:
        config["roles"] = roles
    if "journal" not in config and os.environ.get("WATCHER_JOURNAL"):
        config["journal"] = os.environ["WATCHER_JOURNAL"]
    return event, config


def ask_daemon(request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """The daemon's reply to ``request``, or None when no daemon answered (nothing listens, it died)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        try:
            conn.connect(socket_path())
        except OSError:
            return None
        conn.sendall(json.dumps(request).encode() + b"\n")
        chunks = []
        while True:
            try:
                chunk = conn.recv(65536)
            except ConnectionResetError:
                return None
            if not chunk:
                break
            chunks.append(chunk)
            if chunk.endswith(b"\n"):
                break
    data = b"".join(chunks)
    if not data.endswith(b"\n"):
        return None  # the daemon went away mid-answer
    reply = json.loads(data)
    return reply if isinstance(reply, dict) else None


def start_daemon() -> None:
    """Start ``watcher serve`` in the background for the next hook call (it exits when idle)."""
    import subprocess

    subprocess.Popen(
        [sys.executable, "-m", "watcher", "serve"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )


def _in_process(event: str, config: dict[str, Any], raw: bytes, out: list[dict[str, Any] | None]) -> None:
    try:
        if "site" not in sys.modules:  # started with -S: set site-packages up only now that it is needed
            import site

            site.main()
        from watcher.hooks._serve_one import answer_once

        out.append(answer_once(event, config, raw))
    except Exception as exc:  # noqa: BLE001 - fail open, logged
        _log(f"{event}: in-process evaluation failed: {type(exc).__name__}: {exc}")
        out.append(None)


def answer(event: str, config: dict[str, Any], raw: bytes) -> dict[str, Any] | None:
    """The answer to print for one hook call, within the budget (None: print nothing)."""
    started = time.monotonic()
    budget = float(config.get("budget_s") or DEFAULT_BUDGET_S)
    use_daemon = os.environ.get("WATCHER_HOOK_DAEMON", "1") != "0"
    if use_daemon:
        request = {"op": "hook", "event": event, "config": config, "payload": raw.decode("utf-8", "replace")}
        try:
            reply = ask_daemon(request, budget)
        except TimeoutError:
            _log(f"{event}: the daemon did not answer within {budget:g}s; failing open")
            return None
        except (OSError, ValueError) as exc:
            _log(f"{event}: the daemon failed ({type(exc).__name__}: {exc}); judging in-process")
            reply = None
        if reply is not None:
            found = reply.get("answer")
            return found if isinstance(found, dict) else None
        try:
            start_daemon()
        except OSError as exc:
            _log(f"{event}: cannot start the daemon: {exc}")
    # No daemon answered: judge in-process, on a thread we can walk away from at the deadline.
    import threading

    out: list[dict[str, Any] | None] = []
    worker = threading.Thread(target=_in_process, args=(event, config, raw, out), daemon=True)
    worker.start()
    worker.join(max(budget - (time.monotonic() - started), 0.05))
    if not out:
        _log(f"{event}: no verdict within the {budget:g}s budget; failing open")
        return None
    return out[0]


def main(argv: list[str] | None = None) -> int:
    """Run one hook call; always exits 0 (fail open)."""
    event = "?"
    try:
        event, config = parse_args(list(sys.argv[1:] if argv is None else argv))
        raw = sys.stdin.buffer.read()
        found = answer(event, config, raw)
        if found:
            sys.stdout.write(json.dumps(found) + "\n")
            sys.stdout.flush()
    except BaseException as exc:  # noqa: BLE001 - a hook never breaks the session it watches
        _log(f"{event}: failed open: {type(exc).__name__}: {exc}")
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # do not wait for an abandoned in-process evaluation thread
