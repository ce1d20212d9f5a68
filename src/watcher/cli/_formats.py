"""``watcher formats``: the transcript formats ``watcher replay`` reads, with an example each."""

from __future__ import annotations

import argparse
from typing import Any

from watcher.transcripts import FORMATS


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``formats`` subcommand."""
    fp = sub.add_parser(
        "formats",
        help="list the transcript formats watcher replay reads",
        description="List the transcript formats `watcher replay` reads (detected automatically; --format overrides).",
    )
    fp.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print each format's name, what produces it, and an example command."""
    for fmt in FORMATS:
        print(f"{fmt.name} — {fmt.title}")
        print(f"    {fmt.example}")
    return 0
