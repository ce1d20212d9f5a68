"""The ``watcher`` command: one module per subcommand, each with ``register`` and ``run``.

Exit status: 0 on success, 2 on bad input (a missing file, a malformed line, an unknown role),
with the message on stderr and stdout left clean; 130 on Ctrl-C.

A subcommand module exposes ``register(sub)``, which adds its parser and sets ``func`` (a
callable taking the parsed ``argparse.Namespace`` and returning the exit status).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from watcher.cli import _bench, _hooks, _replay, _roles, _serve, _spawn
from watcher.core.errors import WatcherError

__all__ = ["main"]

# Each entry registers one subcommand; add a module here to add a command.
_COMMANDS = (_replay, _roles, _spawn, _hooks, _serve, _bench)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="watcher", description="Watchers that supervise agent runs and notebooks.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in _COMMANDS:
        command.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``watcher`` console script."""
    args = _parser().parse_args(argv)
    try:
        status: int = args.func(args)
        return status
    except WatcherError as exc:
        print(f"watcher: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
