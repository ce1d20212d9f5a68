"""The ``watcher`` console script (and ``python -m watcher``): the hook call first, the CLI otherwise.

``watcher hook EVENT ...`` and the ``watcher-hook`` script (the command the installed hooks run
on every tool call) go straight to the thin hook client (``watcher.hooks.client``) without loading
the CLI, argparse or any subcommand: on the way to a warm daemon nothing else of watcher is
imported, and without one only the guard is. Every other command loads the CLI as usual.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing costs every hook call (a process each)
if TYPE_CHECKING:
    from typing import NoReturn

__all__ = ["hook", "main"]


def hook(argv: list[str] | None = None) -> NoReturn:
    """Answer one hook call (``EVENT ...``, by default ``sys.argv[1:]``) and exit 0: hooks fail open."""
    from watcher.hooks.client import main as answer

    code = answer(sys.argv[1:] if argv is None else argv)
    sys.stdout.flush()
    os._exit(code)  # do not wait for an abandoned in-process evaluation thread


def main() -> int:
    """Run ``watcher`` with ``sys.argv``."""
    if sys.argv[1:2] == ["hook"] and sys.argv[2:3] not in (["-h"], ["--help"]):
        hook(sys.argv[2:])
    from watcher.cli import main as cli

    return cli()
