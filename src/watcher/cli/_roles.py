"""``watcher roles``: list the roles and their briefs."""

from __future__ import annotations

import argparse
import json
import shutil
import textwrap
from typing import Any

from watcher.roles import ROLE_NAMES, role_class


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``roles`` subcommand."""
    rp = sub.add_parser("roles", help="list the roles and their briefs")
    rp.add_argument("--json", action="store_true", help="print a JSON array: name, description, authority, brief")
    rp.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print each role with its description, authority and brief."""
    if args.json:
        roles = [(name, role_class(name)) for name in ROLE_NAMES]
        shown = [
            {"name": n, "description": c.description, "authority": c.authority, "brief": c.brief} for n, c in roles
        ]
        print(json.dumps(shown, indent=2))
        return 0
    width = shutil.get_terminal_size((100, 20)).columns
    for name in ROLE_NAMES:
        cls = role_class(name)
        print(f"{name} — {cls.description} ({cls.authority})")
        print(textwrap.indent(textwrap.fill(cls.brief, width=max(width - 4, 40)), "    "))
        print()
    return 0
