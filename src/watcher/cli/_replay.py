"""``watcher replay``: run watchers over a recorded transcript as if it were live."""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

from watcher.agents.replay import ReplayResult, replay
from watcher.agents.transcripts import read_transcript
from watcher.core.errors import ConfigurationError
from watcher.evaluators.registry import make_evaluator
from watcher.roles import ROLE_NAMES, spec_for_role
from watcher.runtime.events import EvaluationEvent
from watcher.runtime.journal import Journal

DEFAULT_REPLAY_ROLES = tuple(r for r in ("security", "stuck", "errors") if r in ROLE_NAMES)


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``replay`` subcommand."""
    rp = sub.add_parser(
        "replay",
        help="run watchers over a recorded transcript",
        description="Run watchers over a recorded transcript as if it were live.",
    )
    rp.add_argument("file", type=Path, help="a JSONL transcript, or a Claude Code stream-json / saved session file")
    rp.add_argument(
        "--watcher",
        "-w",
        action="append",
        dest="roles",
        metavar="ROLE",
        help=f"a role to run (repeatable; default: {', '.join(DEFAULT_REPLAY_ROLES)})",
    )
    rp.add_argument(
        "--evaluator",
        default="rules",
        choices=("rules", "anthropic", "openai"),
        help="evaluator for every watcher: rules (offline, default), anthropic (ANTHROPIC_API_KEY) or openai "
        "(any OpenAI-compatible server: LM Studio, Ollama, vLLM)",
    )
    rp.add_argument("--model", "--watcher-model", help="the LLM evaluator's model (also --watcher-model)")
    rp.add_argument(
        "--base-url",
        "--watcher-base-url",
        help="the LLM evaluator's server, e.g. http://localhost:1234/v1 (--watcher-base-url)",
    )
    rp.add_argument("--context", choices=("minimal", "full"), help="what an LLM evaluator is shown (default: minimal)")
    rp.add_argument("--json", action="store_true", help="print one JSON object per evaluation")
    rp.add_argument("--all", action="store_true", help="in the table, show continue decisions too")
    rp.add_argument("--journal", type=Path, metavar="PATH", help="also record the replay into this journal")
    rp.add_argument("--session", help="session name to record under (default: the file name)")
    rp.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Replay the transcript and print the evaluations."""
    return asyncio.run(_replay(args))


async def _replay(args: argparse.Namespace) -> int:
    observations = read_transcript(args.file)
    roles = args.roles or list(DEFAULT_REPLAY_ROLES)
    twice = sorted({role for role in roles if roles.count(role) > 1})
    if twice:
        raise ConfigurationError(
            f"replay: role {', '.join(map(repr, twice))} is given more than once with -w; "
            "each -w runs one watcher named after its role, so give each role once"
        )
    options = (
        {"model": args.model, "base_url": args.base_url, "context": args.context} if args.evaluator != "rules" else {}
    )
    watchers = [(spec_for_role(role), make_evaluator(args.evaluator, role, **options)) for role in roles]
    session = args.session or next((o.session for o in observations if o.session), None) or args.file.name
    journal = Journal(args.journal) if args.journal else None
    try:
        result = await replay(observations, watchers, session=session, journal=journal)
    finally:
        if journal is not None:
            journal.close()
    if args.json:
        for event in result.evaluations:
            print(json.dumps(evaluation_json(event), ensure_ascii=False))
    else:
        _table(result, show_all=args.all)
    return 0


def evaluation_json(event: EvaluationEvent) -> dict[str, object]:
    """The ``--json`` object of one evaluation."""
    i = event.interjection
    return {
        "watcher": event.watcher,
        "index": event.index,
        "decision": event.decision,
        "urgent": i.urgent if i else False,
        "severity": i.severity if i else None,
        "action": i.action if i else None,
        "content": i.content if i else None,
        "locations": [loc.to_dict() for loc in i.locations] if i else [],
        "note": event.note,
        "error": event.error,
    }


def _table(result: ReplayResult, *, show_all: bool) -> None:
    rows = [e for e in result.evaluations if show_all or e.decision == "interject" or e.error]
    width = shutil.get_terminal_size((160, 20)).columns
    print(
        f"replayed {len(result.observations)} observations of {result.session!r}: {len(result.evaluations)} evaluations, {sum(e.decision == 'interject' for e in result.evaluations)} interjections"
    )
    if not rows:
        print("no watcher interjected.")
        return
    print(f"{'#':>4}  {'watcher':<10} {'decision':<9} {'sev':<8} {'action':<8} what")
    for e in rows:
        i = e.interjection
        what = (i.content if i else e.error or e.note or "").replace("\n", " ")
        where = ", ".join(loc.render() for loc in i.locations) if i else ""
        flag = "!" if i and i.urgent else " "
        line = f"{e.index:>4}{flag} {e.watcher:<10} {e.decision:<9} {(i.severity if i else ''):<8} {(i.action if i else ''):<8} "
        body = f"[{where}] {what}" if where else what
        print(line + textwrap.shorten(body, width=max(width - len(line), 30), placeholder=" …"))
