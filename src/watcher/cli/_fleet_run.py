"""``watcher fleet run`` and ``watcher fleet supervise``: the two commands that run a fleet's parts here.

``run`` shows the tasks live on a terminal (their health, status, steps and nudges, redrawn
every ``PROGRESS_S``) and prints the result alone in a pipe or with ``--json``. ``supervise``
judges with the settings the fleet's run journaled when it started (``FleetSettings``), so it
works from any machine that reaches the journal; ``--tasks FILE`` takes a tasks file's instead.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from watcher.cli._fleet_show import open_journal, show, status_table
from watcher.core.errors import ConfigurationError, MissingCredentialsError
from watcher.core.terminal import for_terminal
from watcher.evaluators.preflight import check_url
from watcher.runtime.journal import Journal, default_journal_path

if TYPE_CHECKING:
    from watcher.fleet import FleetConfig

__all__ = ["run_fleet", "supervise"]

PROGRESS_S = 0.5  # how often ``fleet run`` redraws its progress on a terminal
_T = TypeVar("_T")


def run_fleet(args: argparse.Namespace) -> int:
    """``watcher fleet run TASKS.toml``: the tasks and (unless ``--no-supervision``) their supervision, here."""
    from dataclasses import replace

    from watcher.fleet import Fleet, load_tasks  # imported here: see run()
    from watcher.fleet.tasks import SharedRun

    config, specs = load_tasks(args.tasks)
    if args.no_supervision:
        config = replace(config, supervision=False)
    if args.evaluator is not None:
        config = replace(config, evaluator=args.evaluator)
    if args.extractor is not None:
        config = replace(config, extractor=args.extractor)
    path = args.journal or default_journal_path(settings=args.settings)
    if args.base_url:  # a dead server is said before any task starts, not as every task failing
        check_url(args.base_url, who="the Messages API server")
    if args.max_tasks is not None and args.shared_run is None:
        raise ConfigurationError("--max-tasks shares a run between hosts: give --run NAME too (the same on every host)")
    if args.max_tasks is not None and args.max_tasks < 1:
        raise ConfigurationError(f"--max-tasks {args.max_tasks}: give a number of tasks of at least 1")
    shared = SharedRun(args.shared_run, args.max_tasks or 1_000_000) if args.shared_run else None

    live = sys.stdout.isatty() and not args.json  # progress on a terminal; a pipe or --json gets the result alone

    async def main() -> dict[str, Any]:
        journal = Journal(path)
        try:
            fleet = Fleet(specs, config=config, journal=journal, base_url=args.base_url, shared=shared)
            results = await (_progress(fleet.run(), journal, config.name) if live else fleet.run())
        finally:
            await asyncio.to_thread(journal.close)
        out: dict[str, Any] = {
            "stats": {
                k: getattr(fleet.stats, k)
                for k in (
                    "watcher_cycles",
                    "syncer_cycles",
                    "nudges_sent",
                    "syncs_relayed",
                    "tasks_paused",
                    "tasks_aborted",
                )
            }
        }
        out["tasks"] = {
            name: {"status": r.status, "steps": r.steps}
            if not isinstance(r, BaseException)
            else {"status": "failed", "error": f"{type(r).__name__}: {r}"}
            for name, r in results.items()
        }
        return out

    try:
        out = asyncio.run(main())
    except MissingCredentialsError as exc:  # said for the command line, not for the Python API
        raise MissingCredentialsError(
            "the fleet's agent-run tasks call the Anthropic Messages API and no key was found: set "
            "ANTHROPIC_API_KEY, or pass --base-url for a compatible server (offline: a local stub such as "
            "watcher.testing.StubAnthropicServer)"
        ) from exc
    lines = [  # one line a task: an error's text may run over several
        for_terminal(f"{name}: {t['status']}" + (f" ({t['error']})" if "error" in t else ""), one_line=True)
        for name, t in out["tasks"].items()
    ]
    lines.append(", ".join(f"{k} {v}" for k, v in out["stats"].items()))
    show(args, out, "\n".join(lines))
    return 0 if all(t["status"] == "completed" for t in out["tasks"].values()) else 1


async def _progress(work: Awaitable[_T], journal: Journal, name: str) -> _T:
    """Await ``work`` while a live table shows the fleet's tasks (health, status, steps, nudges) from ``journal``."""
    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    from watcher.fleet.query import read_fleet

    started = time.monotonic()
    shown = for_terminal(name, one_line=True)

    def frame() -> Text:
        rows = read_fleet(journal, name).rows()
        head = f"fleet {shown} · {len(rows)} task(s) · {time.monotonic() - started:.0f}s\n"
        return Text(head + (status_table(rows) if rows else "starting…"))

    job = asyncio.ensure_future(work)
    with Live(Text(f"fleet {shown} · starting…"), console=Console(soft_wrap=True), auto_refresh=False) as live:
        while not job.done():
            await asyncio.wait({job}, timeout=PROGRESS_S)
            live.update(await asyncio.to_thread(frame), refresh=True)
    return job.result()


def _supervision_config(
    args: argparse.Namespace, journal: Journal, name: str, given: FleetConfig | None
) -> FleetConfig:
    """The settings to supervise fleet ``name`` with: ``--tasks FILE``, else those its run journaled; then the flags."""
    from dataclasses import replace

    from watcher.fleet import FleetConfig
    from watcher.fleet.runs import fleets, run_settings
    from watcher.fleet.supervisor import journaled_config

    if given is not None:
        config = replace(given, name=name, supervision=True)
    elif (settings := run_settings(journal, name)) is not None:
        config = journaled_config(settings, name)
    elif name not in (known := fleets(journal)):  # started before its tasks (another machine's), or a typo
        config = FleetConfig(name=name)
        held = f"its fleets: {', '.join(known)}" if known else "it holds none yet"
        print(
            f"fleet {name!r} is not in this journal yet ({held}): supervising it with the defaults as its tasks "
            "arrive; if none come, check the name (--tasks FILE gives its tasks file's settings)",
            file=sys.stderr,
        )
    else:
        config = FleetConfig(name=name)
        print(
            f"fleet {name!r} journaled no settings (an older watcher started it): supervising with the defaults; "
            "pass --tasks FILE to use its tasks file's",
            file=sys.stderr,
        )
    if args.watch_interval is not None:
        config = replace(config, watch_interval_s=args.watch_interval)
    if args.sync_interval is not None:
        config = replace(config, sync_interval_s=args.sync_interval)
    if args.host_lost is not None:
        config = replace(config, host_lost_s=args.host_lost)
    return config


def supervise(args: argparse.Namespace) -> int:
    """Run a ``Supervisor`` on the journal until Ctrl-C (or ``--for`` seconds): the tasks run elsewhere."""
    from watcher.fleet import Supervisor, load_tasks
    from watcher.fleet.judges import aclose, fleet_evaluator
    from watcher.fleet.leader import supervise_while_leading
    from watcher.fleet.runs import fleets, run_start

    given = load_tasks(args.tasks)[0] if args.tasks is not None else None  # a bad file is said before anything
    with open_journal(args) as journal:
        named = args.fleet or (given.name if given is not None else None)
        name = named or next(reversed(fleets(journal)), None)
        if name is None:
            print("no fleet in this journal yet: start its tasks first (watcher fleet run TASKS.toml), or pass --fleet")
            return 1
        config = _supervision_config(args, journal, name, given)
        # the run's own judge: an LLM named in its settings judges here too (a missing key is said before it starts)
        evaluator = fleet_evaluator(config.evaluator, base_url=config.llm_base_url or None)

        def make() -> Supervisor:  # its latest run, not earlier ones; built when this process comes to lead
            return Supervisor(config, journal, after=run_start(journal, name), evaluator=evaluator)

        def say(line: str) -> None:  # who leads, as it changes; beside the JSON, not inside it
            print(for_terminal(line), file=sys.stderr if args.json else sys.stdout, flush=True)

        async def main() -> dict[str, Any]:  # several may run (on several machines): one leads, the others stand by
            try:
                stats = await supervise_while_leading(config, journal, make, duration_s=args.duration, say=say)
            finally:
                if evaluator is not None:
                    await aclose(evaluator)
            return {"fleet": name, **stats}

        out = asyncio.run(main())
    show(args, out, ", ".join(f"{k} {v}" for k, v in out.items()))
    return 0
