"""How the ``watcher fleet`` commands show what they read: the status table, JSON or text, and their journal.

What they read is the journal's, written by tasks, agents and models (a diagnosis, a relayed learning,
a task's error): it is shown fit for a terminal, its control sequences as code points.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from watcher.core.terminal import for_terminal, json_for_terminal
from watcher.runtime.journal import Journal, default_journal_path

__all__ = ["open_journal", "show", "status_table"]


def open_journal(args: argparse.Namespace, *, create: bool = False) -> Journal:
    """The journal the command names (``--journal``), else the project's."""
    return Journal(args.journal or default_journal_path(settings=args.settings), create=create)


def show(args: argparse.Namespace, data: Any, text: str) -> None:
    """``data`` as JSON with ``--json``, else ``text``; either fit for a terminal."""
    print(json_for_terminal(json.dumps(data, indent=2, default=str)) if args.json else for_terminal(text))


def status_table(rows: list[dict[str, Any]]) -> str:
    """The status table: ``nudges`` counts the nudges sent (as ``stats`` does), ``ladder`` the escalation step now."""
    lines = [
        f"{'task':20} {'health':10} {'status':10} {'iter':>5} {'idle s':>7} {'nudges':>6} {'ladder':>6} "
        f"{'tokens':>8} {'cost $':>8}"
    ]
    for r in rows:
        r = {k: for_terminal(v, one_line=True) if isinstance(v, str) else v for k, v in r.items()}
        idle = "-" if r["last_activity_s"] is None else f"{r['last_activity_s']:.1f}"
        lines.append(
            f"{r['task']:20} {r['health']:10} {r['status']:10} {r['iteration']:>5} {idle:>7} "
            f"{r['nudges']:>6} {r['ladder']:>6} {r['tokens']:>8} {r['cost_usd']:>8.4f}"
        )
    return "\n".join(lines)
