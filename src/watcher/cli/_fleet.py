"""``watcher fleet``: run many agent tasks under supervision, and look at or steer them from anywhere.

``run TASKS.toml`` runs a fleet in this process (``--no-supervision``: the tasks only);
``supervise --fleet NAME`` runs the supervision loops for a fleet whose tasks run in another
process (they meet in the journal). Every other action reads the journal or writes a command to
it, so it works from another terminal while the fleet runs: ``status`` (``--watch`` keeps it
live), ``health TASK``, ``diagnoses``, ``syncs``, ``stats``; ``nudge TASK MESSAGE``,
``pause|resume|abort TASK`` (applied within a fraction of a second; ``--wait`` says how it
went). Each has ``--json``; ``--fleet`` picks one fleet of a journal that holds several
(default: the latest).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from watcher.core.errors import InvalidCommandError, MissingCredentialsError
from watcher.evaluators.preflight import check_url
from watcher.runtime.journal import Journal, default_journal_path, journal_target

_STEER = ("nudge", "pause", "resume", "abort")


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``fleet`` subcommand and its actions."""
    fp = sub.add_parser("fleet", help="supervise many agent tasks at once", description=__doc__)
    fsub = fp.add_subparsers(dest="fleet_command", required=True, metavar="ACTION")

    def action(name: str, help: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = fsub.add_parser(name, help=help)
        p.add_argument(
            "--journal",
            type=journal_target,
            default=None,
            help="the journal: a path or a postgresql:// URL (default: the project's)",
        )
        p.add_argument("--json", action="store_true", help="print JSON")
        p.add_argument("--fleet", default=None, help="the fleet's name (default: the latest in the journal)")
        p.set_defaults(func=run)
        return p

    r = action("run", "run the tasks of a TOML tasks file")
    r.add_argument("tasks", type=Path, help="a TOML tasks file: [fleet] settings and one [[task]] table per task")
    r.add_argument("--no-supervision", action="store_true", help="run the same tasks with no watcher or syncer loop")
    r.add_argument("--base-url", default=None, help="the Messages API base URL (a local stub offline)")
    r.add_argument(
        "--evaluator", default=None, help='who judges the tasks: "rules" or "anthropic:MODEL" / "openai:MODEL"'
    )
    r.add_argument(
        "--extractor", default=None, help="who finds learnings besides the rules: an LLM's name, as --evaluator"
    )
    sv = action("supervise", "run only the supervision loops, for a fleet whose tasks run in another process")
    sv.add_argument("--watch-interval", type=float, default=None, help="seconds between watcher cycles")
    sv.add_argument("--sync-interval", type=float, default=None, help="seconds between syncer cycles")
    sv.add_argument("--for", dest="duration", type=float, default=None, help="stop after this many seconds")
    sv.add_argument(
        "--host-lost",
        type=float,
        default=None,
        metavar="SECONDS",
        help="a host silent this long is lost (default 60); a standby supervisor leads within this time",
    )
    st = action("status", "one line per task: health, iteration, last activity, nudges, tokens, cost")
    st.add_argument(
        "--watch",
        type=float,
        nargs="?",
        const=1.0,
        default=None,
        metavar="SECONDS",
        help="keep the table live, refreshed every SECONDS (default 1) until Ctrl-C",
    )
    action("health", "a task's latest health check").add_argument("task")
    action("diagnoses", "the latest diagnoses that were not 'healthy'").add_argument("--limit", type=int, default=20)
    s = action("syncs", "learnings relayed between tasks")
    s.add_argument("--task", default=None, help="only syncs to or from this task")
    s.add_argument("--limit", type=int, default=50)
    action("stats", "cycles, nudges, syncs relayed, tasks paused and aborted")
    for name in _STEER:
        p = action(name, f"{name} a running task (through the journal)")
        p.add_argument("task")
        if name == "nudge":
            p.add_argument("message")
        else:
            p.add_argument("--reason", default=f"{name} by a person")
        p.add_argument("--wait", type=float, default=5.0, help="seconds to wait for the fleet to apply it (0: don't)")


def _journal(args: argparse.Namespace, *, create: bool = False) -> Journal:
    return Journal(args.journal or default_journal_path(), create=create)


def _print(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, indent=2, default=str) if args.json else text)


def run(args: argparse.Namespace) -> int:
    """Dispatch to the action; 0 on success, 1 when a command was refused or the task is unknown."""
    # the fleet (agent runs, the SDKs) is imported only when a fleet command runs: every other
    # ``watcher`` command starts without it
    from watcher.fleet.query import read_fleet

    command: str = args.fleet_command
    if command == "run":
        return _run(args)
    if command == "supervise":
        return _supervise(args)
    with _journal(args) as journal:
        if command in _STEER:
            return _steer(args, journal)
        if command == "status" and args.watch is not None and not args.json:
            return _live(args, journal)
        view = read_fleet(journal, args.fleet)
        if command == "status":
            rows = view.rows()
            _print(args, rows, _table(rows) if rows else "no fleet tasks in this journal")
            return 0
        if command == "health":
            checks = [c for c in view.checks if c.session == args.task]
            if not checks:
                _print(args, None, f"no health check of task {args.task!r} yet")
                return 1
            c = checks[-1]
            _print(
                args,
                {"task": c.session, **c.payload()},
                f"{c.session}: {c.health} ({c.status}, {c.freshness}) — {c.diagnosis}",
            )
            return 0
        if command == "diagnoses":
            found = [c for c in view.checks if c.recommendation != "continue" or c.health not in ("healthy", "paused")]
            found = found[-args.limit :]
            lines = [f"cycle {c.cycle} {c.session}: {c.recommendation} — {c.diagnosis}" for c in found]
            _print(args, [{"task": c.session, **c.payload()} for c in found], "\n".join(lines) or "no diagnoses")
            return 0
        if command == "syncs":
            syncs = [s for s in view.syncs if args.task in (None, s.session, s.source_task)][-args.limit :]
            lines = [f"{s.source_task} → {s.session} [{s.urgency or '-'}, {s.status}] {s.text}" for s in syncs]
            _print(args, [{"to": s.session, **s.payload()} for s in syncs], "\n".join(lines) or "no syncs")
            return 0
        stats = view.stats()
        _print(args, stats, "\n".join(f"{k}: {v}" for k, v in stats.items()))
        return 0


def _table(rows: list[dict[str, Any]]) -> str:
    lines = [
        f"{'task':20} {'health':10} {'status':10} {'iter':>5} {'idle s':>7} {'nudges':>6} {'tokens':>8} {'cost $':>8}"
    ]
    for r in rows:
        idle = "-" if r["last_activity_s"] is None else f"{r['last_activity_s']:.1f}"
        lines.append(
            f"{r['task']:20} {r['health']:10} {r['status']:10} {r['iteration']:>5} {idle:>7} "
            f"{r['nudges']:>6} {r['tokens']:>8} {r['cost_usd']:>8.4f}"
        )
    return "\n".join(lines)


def _live(args: argparse.Namespace, journal: Journal) -> int:
    """``status --watch``: redraw the table every ``args.watch`` seconds until Ctrl-C (exit 130, one line)."""
    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    from watcher.fleet.query import read_fleet

    def frame() -> Text:
        view = read_fleet(journal, args.fleet)
        rows = view.rows()
        head = f"fleet {view.name or '-'} · {len(rows)} task(s) · {time.strftime('%H:%M:%S')} (Ctrl-C to stop)\n"
        return Text(head + (_table(rows) if rows else "no fleet tasks in this journal yet"))

    with Live(frame(), console=Console(soft_wrap=True), auto_refresh=False) as live:
        while True:
            time.sleep(max(args.watch, 0.1))
            live.update(frame(), refresh=True)


def _steer(args: argparse.Namespace, journal: Journal) -> int:
    from watcher.fleet import COMMAND_PREFIX  # imported here: see run()
    from watcher.fleet.query import latest_tasks

    kind: str = args.fleet_command
    name, tasks = latest_tasks(journal, args.fleet)
    if not tasks:  # refused here, not recorded for a fleet that will never apply it
        named = f" named {args.fleet!r}" if args.fleet else ""
        raise InvalidCommandError(f"no fleet{named} in this journal: start one with watcher fleet run TASKS.toml")
    if args.task not in tasks:
        raise InvalidCommandError(f"fleet {name!r} has no task {args.task!r}; its tasks: {', '.join(tasks)}")
    payload = {"message": args.message} if kind == "nudge" else {"reason": args.reason}
    cid = journal.submit_command(COMMAND_PREFIX + args.task, kind, payload=payload)
    deadline = time.monotonic() + max(args.wait, 0.0)
    while args.wait > 0 and time.monotonic() < deadline:
        done = [
            c for c in journal.commands(status=None, after=cid - 1) if c.id == cid and c.status in ("applied", "failed")
        ]
        if done:
            ok = done[0].status == "applied"
            _print(
                args,
                {"command": cid, "status": done[0].status, "detail": done[0].detail},
                f"{kind} {args.task}: {done[0].status} ({done[0].detail})",
            )
            return 0 if ok else 1
        time.sleep(0.05)
    _print(
        args,
        {"command": cid, "status": "new"},
        f"{kind} {args.task}: recorded (command {cid}); no fleet has applied it yet",
    )
    return 0 if args.wait <= 0 else 1


def _run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from watcher.fleet import Fleet, load_tasks  # imported here: see run()

    config, specs = load_tasks(args.tasks)
    if args.no_supervision:
        config = replace(config, supervision=False)
    if args.evaluator is not None:
        config = replace(config, evaluator=args.evaluator)
    if args.extractor is not None:
        config = replace(config, extractor=args.extractor)
    path = args.journal or default_journal_path()
    if args.base_url:  # a dead server is said before any task starts, not as every task failing
        check_url(args.base_url, who="the Messages API server")

    async def main() -> dict[str, Any]:
        fleet = Fleet(specs, config=config, journal=path, base_url=args.base_url)
        results = await fleet.run()
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
    lines = [f"{name}: {t['status']}" for name, t in out["tasks"].items()]
    lines.append(", ".join(f"{k} {v}" for k, v in out["stats"].items()))
    _print(args, out, "\n".join(lines))
    return 0 if all(t["status"] == "completed" for t in out["tasks"].values()) else 1


def _supervise(args: argparse.Namespace) -> int:
    """Run a ``Supervisor`` on the journal until Ctrl-C (or ``--for`` seconds): the tasks run elsewhere."""
    from dataclasses import replace

    from watcher.fleet import FleetConfig, Supervisor
    from watcher.fleet.leader import supervise_while_leading
    from watcher.fleet.query import fleets, run_start

    with _journal(args) as journal:
        name = args.fleet or next(reversed(fleets(journal)), None)
        if name is None:
            print("no fleet in this journal yet: start its tasks first (watcher fleet run TASKS.toml), or pass --fleet")
            return 1
        config = FleetConfig(name=name)
        if args.watch_interval is not None:
            config = replace(config, watch_interval_s=args.watch_interval)
        if args.sync_interval is not None:
            config = replace(config, sync_interval_s=args.sync_interval)
        if args.host_lost is not None:
            config = replace(config, host_lost_s=args.host_lost)

        def make() -> Supervisor:  # its latest run, not earlier ones; built when this process comes to lead
            return Supervisor(config, journal, after=run_start(journal, name))

        async def main() -> dict[str, Any]:  # several may run (on several machines): one leads, the others stand by
            stats = await supervise_while_leading(
                config, journal, make, duration_s=args.duration, say=lambda line: print(line, flush=True)
            )
            return {"fleet": name, **stats}

        out = asyncio.run(main())
    _print(args, out, ", ".join(f"{k} {v}" for k, v in out.items()))
    return 0
