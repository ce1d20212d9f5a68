"""``watcher bench longchain``: does a watcher lift an agent's success on long chains, and at what cost?

With no ``--base-url`` both models are simulated behind a local server speaking the real API, and
all four conditions run (no watcher, guided, blind, rules); the report's first line says the
figures are simulated. With ``--base-url`` the same harness talks to your server through the
official SDK: the agent alone, plus the watcher mode you enable.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from watcher.cli._outputs import check_out, check_plot
from watcher.core.errors import ConfigurationError
from watcher.core.terminal import for_terminal
from watcher.evaluators.preflight import check_url

CONDITIONS = ("none", "guided", "blind", "rules")
_DESCRIPTION = """\
Does a watcher lift an agent's success on long chains of files, and at what corrective overhead?

Without --base-url both models are simulated behind a local server that speaks the real API, and
all four conditions run (no watcher, guided, blind, rules); the report's first line says the
figures are simulated. With --base-url the same harness talks to your server through the official
SDK: the agent alone, plus the watcher mode you enable."""


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``bench`` and its ``longchain`` benchmark."""
    bench = sub.add_parser("bench", help="measure whether a watcher helps an agent")
    which = bench.add_subparsers(dest="benchmark", required=True, metavar="BENCHMARK")
    p = which.add_parser(
        "longchain",
        help="an agent follows a chain of trace files through distractors, with and without a watcher",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--tasks", type=int, default=200, help="tasks per condition (default 200)")
    p.add_argument(
        "--chain-length", default="4,8,12", help="chain length, or lengths spread over the tasks: 8 or 4,8,12 (default)"
    )
    p.add_argument("--distractors", type=int, default=3, help="distractors per link of the chain (default 3)")
    p.add_argument("--seed", type=int, default=0, help="seed of the worlds and of the simulated models (default 0)")
    p.add_argument("--enable-watcher", action="store_true", help="run the watcher condition (beside the agent alone)")
    p.add_argument(
        "--watcher",
        choices=("guided", "blind", "rules"),
        help="watcher mode (default guided; implies --enable-watcher)",
    )
    p.add_argument("--conditions", help="exact conditions to run, e.g. none,guided,blind,rules")
    p.add_argument(
        "--provider",
        choices=("openai", "anthropic"),
        default="openai",
        help="wire API: OpenAI-compatible chat completions (default) or Anthropic Messages",
    )
    p.add_argument("--model", help="the agent's model id on --base-url")
    p.add_argument(
        "--base-url", help="your server, e.g. http://localhost:1234/v1 (LM Studio); without it the models are simulated"
    )
    p.add_argument("--watcher-model", help="the watcher's model id (default: the agent's)")
    p.add_argument("--watcher-base-url", help="the watcher's server (default: --base-url)")
    p.add_argument(
        "--retry-cap",
        type=int,
        default=3,
        help="interventions per deviating step before the pause is released (default 3)",
    )
    p.add_argument("--max-steps", type=int, help="step limit per task, watcher steps included (default 2 per link + 6)")
    p.add_argument(
        "--watcher-timeout",
        type=float,
        default=30.0,
        help="seconds a watcher call may take before the run resumes without it",
    )
    p.add_argument("--out", type=Path, help="append one JSON row per task here; a rerun resumes from it")
    p.add_argument(
        "--plot",
        type=Path,
        default=Path("longchain.png"),
        help="where to write success rate and overhead against chain length (PNG; default longchain.png)",
    )
    p.add_argument("--no-plot", dest="plot", action="store_const", const=None, help="write no plot")
    p.add_argument("--jobs", type=int, default=16, help="tasks run concurrently (default 16)")
    p.add_argument("--follow", type=float, default=0.8, help="simulated agent: chance to follow a pointer correctly")
    p.add_argument("--heed", type=float, default=0.8, help="simulated agent: chance to heed a supervisor message")
    p.set_defaults(func=run)


def _lengths(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ConfigurationError(
            f"--chain-length takes numbers separated by commas, e.g. 8 or 4,8,12, not {text!r}"
        ) from None


def _conditions(args: argparse.Namespace) -> tuple[str, ...]:
    if args.conditions is not None:  # "," or "" names none: refused by the check, not read as all
        return tuple(c.strip() for c in args.conditions.split(",") if c.strip())
    if args.enable_watcher or args.watcher:
        return ("none", args.watcher or "guided")
    return CONDITIONS if args.base_url is None else ("none",)


def run(args: argparse.Namespace) -> int:
    """Run the suite, print the report, write the rows and the plot."""
    from watcher.bench import SimParams, SuiteConfig, plot, report, run_suite

    if args.out is not None:
        check_out(args.out, example="longchain.jsonl")
    if args.plot is not None:
        check_plot(args.plot, example="longchain.png")
    for name in ("follow", "heed"):
        if not 0.0 <= getattr(args, name) <= 1.0:
            raise ConfigurationError(f"--{name} is a probability between 0 and 1, not {getattr(args, name)}")
    config = SuiteConfig(
        tasks=args.tasks,
        chain_lengths=_lengths(args.chain_length),
        distractors=args.distractors,
        seed=args.seed,
        conditions=_conditions(args),
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        watcher_model=args.watcher_model,
        watcher_base_url=args.watcher_base_url,
        retry_cap=args.retry_cap,
        max_steps=args.max_steps,
        jobs=args.jobs,
        watcher_timeout=args.watcher_timeout,
        sim=SimParams(seed=args.seed, follow=args.follow, heed=args.heed),
    )
    config.check()
    for url, who in (
        (args.base_url, "the agent model's server"),
        (args.watcher_base_url, "the watcher model's server"),
    ):
        if url:  # a server that does not answer is said now, not as every task failing
            check_url(url, who=who, fix="--base-url" if url == args.base_url else "--watcher-base-url")
    total = len(config.conditions) * config.tasks
    finished = 0
    show = sys.stderr.isatty()

    def progress(_row: dict[str, Any]) -> None:
        nonlocal finished
        finished += 1
        if show:
            print(f"\r{finished}/{total} tasks", end="", file=sys.stderr, flush=True)

    rows = asyncio.run(run_suite(config, out=args.out, on_row=progress, settings=args.settings))
    if show:
        print(file=sys.stderr)
    print(for_terminal(report(config, rows)))
    if args.plot is not None:
        plot(
            rows,
            args.plot,
            title="simulated models"
            if config.simulated
            else f"{config.agent_model} (watcher {config.watcher_model_name})",
        )
        print(f"plot: {args.plot}")
    if args.out is not None:
        print(f"rows: {args.out}")
    failed = [row for row in rows if row.get("end") == "agent_error"]
    if rows and len(failed) == len(rows):  # no task ran at all: a broken run, not a 0 % result
        first = for_terminal(str((failed[0].get("errors") or ["?"])[0]), one_line=True)  # a server's words
        print(
            f"watcher: every one of the {len(rows)} tasks failed on the agent model; the first: {first}",
            file=sys.stderr,
        )
        return 1
    return 0
