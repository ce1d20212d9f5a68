"""``watcher eval``: run a role's LLM evaluator over a labelled set and print its figures beside the rules'.

The set is any labelled JSONL file (``watcher.judgment.cases`` documents the format), the shared
security corpus included, read where it lies. Nothing is simulated: without a server (``--base-url``)
or a key the command refuses. Rows go to ``--out`` as they finish, so a rerun resumes. A run whose
model call failed is no judgement: it is left out of the rates, said on stderr, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import sys
from pathlib import Path
from typing import Any

from watcher.cli._outputs import check_out, check_plot
from watcher.core.errors import ConfigurationError, MissingCredentialsError
from watcher.core.evaluation import Evaluator
from watcher.core.logs import logger
from watcher.core.redact import redact
from watcher.core.spec import Caps
from watcher.core.terminal import for_terminal
from watcher.evaluators.preflight import check_reachable
from watcher.evaluators.registry import make_evaluator
from watcher.roles import ROLE_NAMES, spec_for_role

_DESCRIPTION = """\
Does an LLM watcher judge better than the rules? Runs a role's evaluator over a labelled set and
prints found / missed / false alarms / location accuracy with 95 % Wilson intervals, tokens, cost and
latency per run, beside the offline rules on the same cases.

A set is JSONL: security cases {"id", "label": "vulnerable"|"benign", "language", "code" or
"command", "lines": [labelled lines]} run as a Write, a notebook cell and a Bash command; loop cases
{"id", "label": "stuck"|"not_stuck", "stuck_from": N, "transcript": [records]}. The shared security
corpus is read as it is. Nothing is simulated: --evaluator openai needs --base-url, anthropic a key."""


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``eval`` subcommand."""
    p = sub.add_parser(
        "eval",
        help="measure an LLM watcher's judgment on a labelled set, beside the rules",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--role", required=True, choices=ROLE_NAMES, help="the role whose brief and rules are judged")
    p.add_argument("--set", dest="cases", required=True, type=Path, metavar="FILE", help="a labelled JSONL set")
    p.add_argument(
        "--evaluator",
        required=True,
        choices=("anthropic", "openai", "rules"),
        help="anthropic (ANTHROPIC_API_KEY), openai (any OpenAI-compatible server: LM Studio, Ollama, vLLM, "
        "a hosted API; needs --base-url), or rules alone",
    )
    p.add_argument("--base-url", help="the model's server, e.g. http://localhost:1234/v1")
    p.add_argument("--model", help="the model id on that server")
    p.add_argument(
        "--out", type=Path, help="rows as JSONL, appended as runs finish; a rerun resumes (default eval-ROLE.jsonl)"
    )
    p.add_argument("--plot", type=Path, help="where to draw the rates (PNG; default eval-ROLE.png)")
    p.add_argument("--no-plot", action="store_true", help="draw no plot")
    p.add_argument("--jobs", type=int, default=4, help="runs at once (default 4)")
    p.add_argument("--rate", type=float, metavar="PER_MINUTE", help="at most this many model calls a minute")
    p.add_argument("--prompt-budget", type=int, metavar="TOKENS", help="tokens one prompt may take (default 12000)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds one evaluation may take (default 60)")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N cases of the set")
    p.set_defaults(func=run)


def _llm(args: argparse.Namespace) -> Evaluator | None:
    if args.evaluator == "rules":
        return None
    if args.evaluator == "openai" and not (args.base_url or args.settings.openai_base_url):
        raise ConfigurationError(
            "watcher eval --evaluator openai needs --base-url (your server, e.g. http://localhost:1234/v1 for LM "
            "Studio, or https://api.openai.com/v1 with OPENAI_API_KEY); it measures a real model and never simulates one"
        )
    if args.evaluator == "openai" and not (args.model or args.settings.openai_model):
        # said here, before the set is read: the evaluator would say so only at its first case
        raise ConfigurationError(
            "watcher eval --evaluator openai needs --model: the id of a model your server has loaded "
            "(or set WATCHER_OPENAI_MODEL)"
        )
    options = {
        "model": args.model,
        "base_url": args.base_url,
        "prompt_budget": args.prompt_budget,
        "settings": args.settings,
    }
    try:
        # backstop=False: a failed call is no judgement of the model's, never the rules' judgement in its name
        return make_evaluator(args.evaluator, args.role, timeout=args.timeout, max_retries=2, backstop=False, **options)
    except MissingCredentialsError as exc:
        raise MissingCredentialsError(f"{exc}; watcher eval measures a real model and never simulates one") from None


def run(args: argparse.Namespace) -> int:
    """Run the set, print the table, write the rows and the plot."""
    from watcher.judgment import RateLimit, Runner, Throttled, plot, read_cases, read_rows, table

    for flag, value in (("--jobs", args.jobs), ("--limit", args.limit), ("--prompt-budget", args.prompt_budget)):
        if value is not None and value < 1:
            raise ConfigurationError(f"{flag} takes a number from 1, not {value}")
    if args.rate is not None and not (math.isfinite(args.rate) and args.rate > 0):
        raise ConfigurationError(f"--rate takes calls a minute above 0, not {args.rate}")
    if not (math.isfinite(args.timeout) and args.timeout > 0):  # else every call fails, or none ever ends
        raise ConfigurationError(f"--timeout takes seconds above 0, such as 60, not {args.timeout}")
    out = args.out or Path(f"eval-{args.role}.jsonl")
    picture = None if args.no_plot else (args.plot or Path(f"eval-{args.role}.png"))
    check_out(out, example=f"eval-{args.role}.jsonl")
    if picture is not None:
        check_plot(picture, example=f"eval-{args.role}.png")
    read_rows(out)  # rows of an earlier run that the report could not read are refused before this run
    cases = read_cases(args.cases)
    kind = "security" if args.role == "security" else "loop"
    chosen = [c for c in cases if c.kind == kind][: args.limit]
    if not chosen:
        raise ConfigurationError(f"--set {args.cases} holds no {kind} cases for the {args.role} role")
    llm = _llm(args)
    if llm is not None:
        check_reachable(llm)  # a dead server fails here, not as 100 % misses
    names = ["rules"] + ([llm.name] if llm is not None else [])
    limited = Throttled(llm, RateLimit(args.rate)) if llm is not None else None

    def evaluator_for(name: str) -> Evaluator:
        if name == "rules":
            return make_evaluator("rules", args.role)  # fresh per run: a role keeps state
        assert limited is not None
        return limited

    spec = spec_for_role(args.role, caps=Caps(timeout_s=args.timeout))
    total = sum(len(c.forms) for c in chosen) * len(names)
    finished = 0
    show = sys.stderr.isatty()

    def progress(_row: dict[str, Any]) -> None:
        nonlocal finished
        finished += 1
        if show:
            print(f"\r{finished} runs", end="", file=sys.stderr, flush=True)

    async def go() -> list[dict[str, Any]]:
        try:
            return await Runner(spec, evaluator_for, jobs=args.jobs, on_row=progress).run(chosen, names, out)
        finally:
            if llm is not None:
                await llm.aclose()  # type: ignore[attr-defined]

    engine_log = logger("watcher.engine")
    level = engine_log.level
    engine_log.setLevel(logging.ERROR)  # a failed call is in its row and summed up below, not a line per evaluation
    try:
        rows = asyncio.run(go())
    finally:
        engine_log.setLevel(level)
    if show:
        print(file=sys.stderr)
    wanted = {(c.id, f, n) for c in chosen for f in c.forms for n in names}
    rows = [r for r in rows if (r["case"], r["form"], r["evaluator"]) in wanted]
    where = f" at {llm.where}" if llm is not None and hasattr(llm, "where") else ""
    print(
        f"watcher eval: role {args.role}, {len(chosen)} cases from {args.cases}, {len(rows)} of {total} runs; "
        f"evaluators {', '.join(names)}{where}"
    )
    print(for_terminal(table(rows, names, loops=kind == "loop")))
    print(f"rows: {out}")
    if picture is not None:
        plot(
            rows,
            names,
            picture,
            title=f"{args.role}: {' vs '.join(reversed(names))} on {args.cases.name}",
            loops=kind == "loop",
        )
        print(f"plot: {picture}")
    return _failed_runs(rows)


def _failed_runs(rows: list[dict[str, Any]]) -> int:
    """Say on stderr how many runs had a failed model call (none is counted as a judgement); 1 when any did."""
    failed = [r for r in rows if r["error"]]
    if not failed:
        return 0
    unjudged = sum(r["outcome"] == "error" for r in failed)
    print(
        f"watcher eval: {len(failed)} of {len(rows)} runs had a failed model call; {unjudged} of them judged "
        f"nothing and are left out of the rates (the first: {for_terminal(redact(str(failed[0]['error'])), one_line=True)}); "
        "run the same command again to retry them",
        file=sys.stderr,
    )
    return 1
