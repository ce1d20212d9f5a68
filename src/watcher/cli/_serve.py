"""``watcher serve``: the per-user daemon that answers hook calls (started on demand by the hooks)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any

from watcher.cli._numbers import seconds

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``serve`` subcommand."""
    p = sub.add_parser(
        "serve",
        help="run the hook daemon (the first hook call starts it; it exits when idle)",
        description="Answer hook calls (`watcher-hook`) over a Unix socket ($WATCHER_SOCKET), keeping watchers warm.",
    )
    p.add_argument(
        "--idle",
        type=seconds,
        help="exit after this many idle seconds (default $WATCHER_SERVE_IDLE or 900)",
    )
    p.add_argument("--lock-fd", type=int, help=argparse.SUPPRESS)  # the lock a hook took and handed over
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until idle; 1, and a line saying which daemon, when another one already serves the socket."""
    from watcher.hooks._daemon import serve
    from watcher.hooks.client import socket_path

    idle = args.idle if args.idle is not None else args.settings.serve_idle_s
    status = serve(idle_s=idle, lock_fd=args.lock_fd, settings=args.settings)
    if status == 1:
        print(f"watcher: error: {_already_served(Path(socket_path()))}", file=sys.stderr)
    return status


def _already_served(sock: Path) -> str:
    """Which daemon holds ``sock`` (its pid, when its pid file says) and what to do about it."""
    pid = ""
    with contextlib.suppress(OSError, ValueError):
        pid = f" (pid {int(sock.with_suffix('.pid').read_text())})"
    return (
        f"a hook daemon already serves {sock}{pid}; stop it first with `watcher hooks stop`, "
        "or set WATCHER_SOCKET to another path to run a second one"
    )
