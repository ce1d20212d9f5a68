"""``watcher fleet``: run many agent tasks under supervision, and look at or steer them from anywhere.

``run TASKS.toml`` runs a fleet in this process. Every other action reads the journal or writes a
command to it, so it works from another terminal while the fleet runs: ``status``, ``health
TASK``, ``diagnoses``, ``syncs``, ``stats``; ``nudge TASK MESSAGE``, ``pause|resume|abort TASK``
(applied by the fleet within a fraction of a second; ``--wait`` says how it went). Each has ``--json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from watcher.core.errors import JournalError
from watcher.runtime.journal import Journal, default_journal_path

_STEER = ("nudge", "pause", "resume", "abort")


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``fleet`` subcommand and its actions."""
    fp = sub.add_parser("fleet", help="supervise many agent tasks at once", description=__doc__)
    fsub = fp.add_subparsers(dest="fleet_command", required=True, metavar="ACTION")

    def action(name: str, help: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = fsub.add_parser(name, help=help)
        p.add_argument("--journal", type=Path, default=None, help="the journal (default: the project's)")
        p.add_argument("--json", action="store_true", help="print JSON")
        p.set_defaults(func=run)
        return p

    r = action("run", "run the tasks of a TOML tasks file")
    r.add_argument("tasks", type=Path)
    r.add_argument("--no-supervision", action="store_true", help="run the same tasks with no watcher or syncer loop")
    r.add_argument("--base-url", default=None, help="the Messages API base URL (a local stub offline)")
    action("status", "one line per task: health, iteration, last activity, nudges, tokens")
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
    with _journal(args) as journal:
        if command in _STEER:
            return _steer(args, journal)
        view = read_fleet(journal)
        if command == "status":
            rows = view.rows()
            lines = [f"{'task':20} {'health':10} {'status':10} {'iter':>5} {'idle s':>7} {'nudges':>6} {'tokens':>8}"]
            for r in rows:
                idle = "-" if r["last_activity_s"] is None else f"{r['last_activity_s']:.1f}"
                lines.append(
                    f"{r['task']:20} {r['health']:10} {r['status']:10} {r['iteration']:>5} {idle:>7} "
                    f"{r['nudges']:>6} {r['tokens']:>8}"
                )
            _print(args, rows, "\n".join(lines) if rows else "no fleet tasks in this journal")
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


def _steer(args: argparse.Namespace, journal: Journal) -> int:
    from watcher.fleet import COMMAND_PREFIX  # imported here: see run()

    kind: str = args.fleet_command
    payload = {"message": args.message} if kind == "nudge" else {"reason": args.reason}
    cid = journal.submit_command(COMMAND_PREFIX + args.task, kind, payload=payload)
    deadline = time.monotonic() + max(args.wait, 0.0)
    while args.wait > 0 and time.monotonic() < deadline:
        done = [c for c in journal.commands(status=None, after=cid - 1) if c.id == cid and c.status != "new"]
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
    from watcher.fleet import Fleet, load_tasks  # imported here: see run()

    config, specs = load_tasks(args.tasks)
    if args.no_supervision:
        from dataclasses import replace

        config = replace(config, supervision=False)
    path = args.journal or default_journal_path()

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
    except JournalError:
        raise
    lines = [f"{name}: {t['status']}" for name, t in out["tasks"].items()]
    lines.append(", ".join(f"{k} {v}" for k, v in out["stats"].items()))
    _print(args, out, "\n".join(lines))
    return 0 if all(t["status"] == "completed" for t in out["tasks"].values()) else 1
