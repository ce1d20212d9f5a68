"""``watcher replay``: run watchers over a recorded transcript as if it were live."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from watcher.agents.replay import ReplayResult, replay_sessions
from watcher.cli._journal import journal_argument
from watcher.cli._show_prompt import PromptCapture, prompt_evaluator, show
from watcher.core.errors import ConfigurationError, TranscriptError
from watcher.core.evaluation import Evaluator
from watcher.core.redact import redact, redact_value
from watcher.core.spec import WatcherSpec
from watcher.core.terminal import for_terminal, json_for_terminal
from watcher.evaluators.preflight import check_reachable
from watcher.evaluators.registry import make_evaluator
from watcher.roles import ROLE_NAMES, spec_for_role
from watcher.runtime.events import EvaluationEvent
from watcher.runtime.journal import Journal, stored_session
from watcher.transcripts import FORMATS, Transcript, read_file

DEFAULT_REPLAY_ROLES = tuple(r for r in ("security", "stuck", "errors") if r in ROLE_NAMES)


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``replay`` subcommand."""
    rp = sub.add_parser(
        "replay",
        help="run watchers over a recorded transcript",
        description="Run watchers over a recorded transcript as if it were live.",
    )
    rp.add_argument("file", type=Path, help="a transcript of any supported agent (`watcher formats` lists them)")
    rp.add_argument(
        "--format",
        choices=[f.name for f in FORMATS],
        metavar="FORMAT",
        help="the transcript's format (default: detected; `watcher formats` lists them)",
    )
    rp.add_argument(
        "--strict", action="store_true", help="fail on a record the format does not know instead of skipping it"
    )
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
    rp.add_argument(
        "--prompt-budget",
        type=int,
        metavar="TOKENS",
        help="tokens one LLM evaluation's prompt may take; longer ones are shortened (default 12000)",
    )
    rp.add_argument(
        "--worktree",
        type=Path,
        metavar="DIR",
        help="the parent's working tree: an LLM evaluator reads a file an edit changes there when the transcript "
        "never showed it, to number the edit as the file reads",
    )
    rp.add_argument(
        "--show-prompt",
        type=int,
        metavar="N",
        help="print the exact request the Nth evaluation of the first watcher would send to the --evaluator's "
        "model (system and messages; with --json the SDK's JSON body), without calling it or needing a key",
    )
    rp.add_argument("--json", action="store_true", help="print one JSON object per evaluation")
    rp.add_argument("--all", action="store_true", help="in the table, show continue decisions too")
    rp.add_argument("--wide", action="store_true", help="in the table, one line per finding, however long")
    rp.add_argument(
        "--journal",
        type=journal_argument,
        metavar="PATH|URL",
        help="also record the replay into this journal (a path or a postgresql:// URL)",
    )
    rp.add_argument(
        "--session",
        help="session name to record under (default: the transcript's session id, else the file name; "
        "a file holding several sessions keeps their names)",
    )
    rp.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Replay the transcript and print the evaluations."""
    return asyncio.run(_replay(args))


async def _replay(args: argparse.Namespace) -> int:
    transcript = read_file(args.file, format=args.format, strict=args.strict)
    if not transcript.observations:
        raise TranscriptError(
            f"holds no observations ({transcript.format} format; {_skipped_text(transcript) or 'nothing skipped'}); "
            "is it a transcript?",
            source=transcript.source,
        )
    sessions = transcript.sessions()
    if args.session and len(sessions) == 1:
        sessions = {args.session: next(iter(sessions.values()))}
    if args.prompt_budget is not None and args.prompt_budget < 1:
        raise ConfigurationError(f"--prompt-budget takes a number of tokens from 1, not {args.prompt_budget}")
    roles = args.roles or list(DEFAULT_REPLAY_ROLES)
    twice = sorted({role for role in roles if roles.count(role) > 1})
    if twice:
        raise ConfigurationError(
            f"replay: role {', '.join(map(repr, twice))} is given more than once with -w; "
            "each -w runs one watcher named after its role, so give each role once"
        )
    options = (
        {
            "model": args.model,
            "base_url": args.base_url,
            "context": args.context,
            "prompt_budget": args.prompt_budget,
            "worktree": args.worktree,
            "settings": args.settings,
        }
        if args.evaluator != "rules"
        else {}
    )
    if args.worktree is not None and not args.worktree.is_dir():
        raise ConfigurationError(f"--worktree {args.worktree}: not a folder; give the parent session's working tree")
    if args.show_prompt is not None:
        return await _show_prompt(args, sessions, roles[0], options)

    made: list[Evaluator] = []  # each holds an LLM client (its connections) until it is closed

    def watchers_for(_session: str) -> list[tuple[WatcherSpec, Evaluator]]:
        pairs = [(spec_for_role(role), make_evaluator(args.evaluator, role, **options)) for role in roles]
        made.extend(evaluator for _, evaluator in pairs)
        return pairs

    for _, evaluator in watchers_for(
        ""
    ):  # a bad role, a missing key or a dead server fails before anything is recorded
        check_reachable(evaluator)
        if args.evaluator != "rules":
            break  # one server for every watcher: one look is enough
    journal = Journal(args.journal) if args.journal else None
    try:
        with _progress(args, sum(len(obs) for _, obs in sessions.values())) as on_progress:
            results = await replay_sessions(sessions, watchers_for, journal=journal, on_progress=on_progress)
    finally:
        if journal is not None:
            journal.close()
        for evaluator in made:
            aclose = getattr(evaluator, "aclose", None)  # the rules hold nothing to close
            if aclose is not None:
                await aclose()
    evaluations = [e for r in results for e in r.evaluations]
    failed = [e for e in evaluations if e.error]
    if args.json:
        for result in results:
            for event in result.evaluations:
                print(json_for_terminal(json.dumps(evaluation_json(event, session=result.session), ensure_ascii=False)))
        if transcript.skipped:  # stdout stays one evaluation per line; the counts go to stderr
            skipped = json.dumps({"skipped": dict(transcript.skipped)}, ensure_ascii=False)
            print(json_for_terminal(skipped), file=sys.stderr)
    else:
        _summary(transcript, results)
        for result in results:
            _table(result, show_all=args.all, wide=args.wide)
    if failed:
        first = for_terminal(redact(failed[0].error or ""), one_line=True)
        print(f"watcher: {len(failed)} of {len(evaluations)} evaluations failed; the first: {first}", file=sys.stderr)
    # every evaluation failing is a broken audit, not a clean one: say so in the exit status
    return 1 if evaluations and len(failed) == len(evaluations) else 0


async def _show_prompt(args: argparse.Namespace, sessions: dict[str, Any], role: str, options: dict[str, Any]) -> int:
    if args.show_prompt < 1:
        raise ConfigurationError(f"--show-prompt takes an evaluation's number from 1, not {args.show_prompt}")
    extra = {k: v for k, v in options.items() if k not in ("model", "base_url", "settings") and v is not None}
    llm = prompt_evaluator(args.evaluator, args.settings, model=args.model, base_url=args.base_url, **extra)
    capture = PromptCapture(llm, args.show_prompt)
    try:
        await replay_sessions(sessions, lambda _session: [(spec_for_role(role), capture)])
    finally:
        await llm.aclose()
    print(show(capture, as_json=args.json))
    return 0


_PROGRESS_FROM = 2000  # observations: a smaller transcript replays in a blink


@contextlib.contextmanager
def _progress(args: argparse.Namespace, total: int) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on a terminal's stderr for a long replay; nothing for --json, a pipe or a short one."""
    if args.json or total < _PROGRESS_FROM or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (
        TextColumn("replaying"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("observations"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("replay", total=total)
        yield lambda done: bar.update(task, completed=done)


def _skipped_text(transcript: Transcript) -> str:
    counts = sorted(transcript.skipped.items(), key=lambda kv: (-kv[1], kv[0]))
    return "skipped " + ", ".join(f"{n} {kind!r}" for kind, n in counts) if counts else ""


def _summary(transcript: Transcript, results: list[ReplayResult]) -> None:
    observations = sum(len(r.observations) for r in results)
    sessions = f"{len(results)} sessions" if len(results) != 1 else "1 session"
    line = f"read {redact(str(transcript.source))} as {transcript.format}: {transcript.records} records, {observations} observations, {sessions}"
    skipped = _skipped_text(transcript)
    print(for_terminal(f"{line}; {skipped}" if skipped else line, one_line=True))


def evaluation_json(event: EvaluationEvent, *, session: str | None = None) -> dict[str, object]:
    """The ``--json`` object of one evaluation (secrets redacted, like everything that leaves watcher)."""
    i = event.interjection
    shown: dict[str, object] = redact_value(
        {
            "session": stored_session(session if session is not None else event.session),
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
    )
    return shown


def _table(result: ReplayResult, *, show_all: bool, wide: bool = False) -> None:
    rows = [e for e in result.evaluations if show_all or e.decision == "interject" or e.error]
    width = shutil.get_terminal_size((160, 20)).columns
    interjections = sum(e.decision == "interject" for e in result.evaluations)
    session = stored_session(result.session)  # as --json and the journal name it: a key in a session id is masked
    parent = stored_session(result.parent_session or "")
    of = f"the subagent {session!r} of {parent!r}" if result.parent_session else repr(session)
    print(
        f"\nreplayed {len(result.observations)} observations of {of}: "
        f"{len(result.evaluations)} evaluations, {interjections} interjections"
    )
    if not rows:
        print("no watcher interjected.")
        return
    print(f"{'#':>4}  {'watcher':<10} {'decision':<9} {'sev':<8} {'action':<8} what")
    urgent = False
    for e in rows:
        i = e.interjection
        # a model's words and a transcript's paths: shown, never obeyed by the terminal
        what = for_terminal(redact(i.content if i else e.error or e.note or ""), one_line=True)
        where = ", ".join(for_terminal(redact(loc.render()), one_line=True) for loc in i.locations) if i else ""
        flag = "!" if i and i.urgent else " "
        urgent = urgent or flag == "!"
        line = for_terminal(
            f"{e.index:>4}{flag} {e.watcher:<10} {e.decision:<9} {(i.severity if i else ''):<8} {(i.action if i else ''):<8} ",
            one_line=True,
        )
        body = " ".join(f"[{where}] {what}".split()) if where else " ".join(what.split())
        if wide:
            print(line + body)
            continue
        wrapped = textwrap.wrap(body, width=max(width - len(line), 30)) or [""]
        print(line + wrapped[0])
        for more in wrapped[1:]:
            print(" " * len(line) + more)
    print("# the observation judged at" + (" · ! urgent: it interrupts the agent" if urgent else ""))
