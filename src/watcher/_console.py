"""The ``watcher`` console script (and ``python -m watcher``): the hook call first, the CLI otherwise.

``watcher hook EVENT ...`` is what the installed hooks run on every tool call, so it goes straight
to the thin hook client (``watcher.hooks.client``) without loading the CLI, argparse or any
subcommand: on the way to a warm daemon nothing else of watcher is imported, and without one only
the guard is. Every other command loads the CLI as usual.
"""

from __future__ import annotations

import os
import sys

__all__ = ["main"]


def main() -> int:
    """Run ``watcher`` with ``sys.argv``."""
    if sys.argv[1:2] == ["hook"] and sys.argv[2:3] not in (["-h"], ["--help"]):
        from watcher.hooks.client import main as hook

        code = hook(sys.argv[2:])
        sys.stdout.flush()
        os._exit(code)  # do not wait for an abandoned in-process evaluation thread
    from watcher.cli import main as cli

    return cli()
