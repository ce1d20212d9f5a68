"""``watcher serve``: the per-user daemon that answers hook calls (started on demand by the hooks)."""

from __future__ import annotations

import argparse
from typing import Any

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
        type=float,
        help="exit after this many idle seconds (default $WATCHER_SERVE_IDLE or 900)",
    )
    p.add_argument("--lock-fd", type=int, help=argparse.SUPPRESS)  # the lock a hook took and handed over
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until idle; 1 when another daemon already serves the socket."""
    from watcher.hooks._daemon import serve

    idle = args.idle if args.idle is not None else args.settings.serve_idle_s
    return serve(idle_s=idle, lock_fd=args.lock_fd, settings=args.settings)
