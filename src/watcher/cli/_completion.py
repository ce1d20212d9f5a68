"""``watcher completion bash|zsh|fish``: the shell code that completes ``watcher`` commands and flags."""

from __future__ import annotations

import argparse
from typing import Any

from argcomplete.shell_integration import shellcode

SHELLS = ("bash", "zsh", "fish")


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``completion`` subcommand."""
    cp = sub.add_parser(
        "completion",
        help="print shell code that completes watcher's commands and flags",
        description="Print shell code that completes watcher's commands and flags. Add it to your shell's "
        'start-up file, e.g. `eval "$(watcher completion bash)"` in ~/.bashrc, '
        "`watcher completion fish > ~/.config/fish/completions/watcher.fish`.",
    )
    cp.add_argument("shell", choices=SHELLS, help="the shell: bash, zsh or fish")
    cp.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the completion code for ``args.shell``."""
    print(shellcode(["watcher"], shell=args.shell))
    return 0
