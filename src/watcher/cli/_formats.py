"""``watcher formats``: the transcript formats ``watcher replay`` reads, with an example each."""

from __future__ import annotations

import argparse
import json
from typing import Any

from watcher.transcripts import FORMATS


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``formats`` subcommand."""
    fp = sub.add_parser(
        "formats",
        help="list the transcript formats watcher replay reads",
        description="List the transcript formats `watcher replay` reads (detected automatically; --format overrides).",
    )
    fp.add_argument("--json", action="store_true", help="print a JSON array: name, title, example")
    fp.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print each format's name, what produces it, and an example command."""
    if args.json:
        print(json.dumps([{"name": f.name, "title": f.title, "example": f.example} for f in FORMATS], indent=2))
        return 0
    for fmt in FORMATS:
        print(f"{fmt.name} — {fmt.title}")
        print(f"    {fmt.example}")
    return 0
