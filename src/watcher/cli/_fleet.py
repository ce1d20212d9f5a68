"""``watcher fleet``: run many agent tasks under supervision, and look at or steer them from anywhere.

``run TASKS.toml`` runs a fleet in this process (``--no-supervision``: the tasks only), live on a
terminal; ``supervise --fleet NAME`` runs the supervision loops, with the settings its run
journaled, for a fleet whose tasks run in another process (they meet in the journal). Every other action reads the journal or writes a command to
it, so it works from another terminal while the fleet runs: ``status`` (``--watch`` keeps it
live), ``health TASK``, ``diagnoses``, ``syncs``, ``stats``; ``nudge TASK MESSAGE``,
``pause|resume|abort TASK`` (applied within a fraction of a second; ``--wait`` says how it
went). Each has ``--json``; ``--fleet`` picks one fleet of a journal that holds several
(default: the latest).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from watcher.cli._fleet_show import open_journal, show, status_table
from watcher.cli._journal import journal_argument
from watcher.cli._numbers import at_least, seconds
from watcher.core.errors import InvalidCommandError
from watcher.core.terminal import for_terminal
from watcher.runtime.fates import APPLIED, NEW, answer
from watcher.runtime.journal import Journal

_STEER = ("nudge", "pause", "resume", "abort")


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``fleet`` subcommand and its actions."""
    fp = sub.add_parser("fleet", help="supervise many agent tasks at once", description=__doc__)
    fsub = fp.add_subparsers(dest="fleet_command", required=True, metavar="ACTION")

    def action(name: str, help: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = fsub.add_parser(name, help=help)
        p.add_argument(
            "--journal",
            type=journal_argument,
            default=None,
            help="the journal: a path or a postgresql:// URL (default: the project's)",
        )
        p.add_argument("--json", action="store_true", help="print JSON")
        p.add_argument("--fleet", default=None, help="the fleet's name (default: the latest in the journal)")
        p.set_defaults(func=run)
        return p

    r = action("run", "run the tasks of a TOML tasks file")
    r.add_argument("tasks", type=Path, help="a TOML tasks file: [fleet] settings and one [[tasks]] table per task")
    r.add_argument("--no-supervision", action="store_true", help="run the same tasks with no watcher or syncer loop")
    r.add_argument(
        "--run",
        dest="shared_run",
        default=None,
        metavar="NAME",
        help="a run shared by several hosts (machines) on one journal: give each the same NAME and tasks file; "
        "they claim its tasks between them",
    )
    r.add_argument("--max-tasks", type=int, default=None, help="with --run: at most this many tasks at once here")
    r.add_argument("--base-url", default=None, help="the Messages API base URL (a local stub offline)")
    r.add_argument(
        "--evaluator", default=None, help='who judges the tasks: "rules" or "anthropic:MODEL" / "openai:MODEL"'
    )
    r.add_argument(
        "--extractor", default=None, help="who finds learnings besides the rules: an LLM's name, as --evaluator"
    )
    sv = action("supervise", "run only the supervision loops, for a fleet whose tasks run in another process")
    sv.add_argument(
        "--tasks",
        type=Path,
        default=None,
        metavar="FILE",
        help="take the settings from this tasks file (default: those the fleet's run journaled when it started)",
    )
    sv.add_argument("--watch-interval", type=seconds, default=None, help="seconds between watcher cycles")
    sv.add_argument("--sync-interval", type=seconds, default=None, help="seconds between syncer cycles")
    sv.add_argument("--for", dest="duration", type=seconds, default=None, help="stop after this many seconds")
    sv.add_argument(
        "--host-lost",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="a host silent this long is lost (default 60); a standby supervisor leads within this time",
    )
    st = action("status", "one line per task: health, iteration, last activity, nudges sent, ladder step, tokens, cost")
    st.add_argument(
        "--watch",
        type=seconds,
        nargs="?",
        const=1.0,
        default=None,
        metavar="SECONDS",
        help="keep the table live, refreshed every SECONDS (default 1) until Ctrl-C",
    )
    action("health", "a task's latest health check").add_argument("task")
    action("diagnoses", "the latest diagnoses that were not 'healthy'").add_argument(
        "--limit", type=at_least(1), default=20, help="show the latest N (default 20)"
    )
    s = action("syncs", "learnings relayed between tasks")
    s.add_argument("--task", default=None, help="only syncs to or from this task")
    s.add_argument("--limit", type=at_least(1), default=50, help="show the latest N (default 50)")
    action("stats", "cycles, nudges, syncs relayed, tasks paused and aborted")
    for name in _STEER:
        p = action(name, f"{name} a running task (through the journal)")
        p.add_argument("task")
        if name == "nudge":
            p.add_argument("message")
        else:
            p.add_argument("--reason", default=f"{name} by a person")
        p.add_argument("--wait", type=float, default=5.0, help="seconds to wait for the fleet to apply it (0: don't)")


def run(args: argparse.Namespace) -> int:
    """Dispatch to the action; 0 on success, 1 when a command was refused or the task is unknown."""
    # the fleet (agent runs, the SDKs) is imported only when a fleet command runs: every other
    # ``watcher`` command starts without it
    from watcher.fleet.query import read_fleet

    command: str = args.fleet_command
    if command in ("run", "supervise"):
        from watcher.cli._fleet_run import run_fleet, supervise

        return run_fleet(args) if command == "run" else supervise(args)
    with open_journal(args) as journal:
        if command in _STEER:
            return _steer(args, journal)
        if command == "status" and args.watch is not None and not args.json:
            return _live(args, journal)  # it may be started before the fleet it shows
        if args.fleet is not None:
            _check_named(journal, args.fleet)
        view = read_fleet(journal, args.fleet)
        if command == "status":
            rows = view.rows()
            show(args, rows, status_table(rows) if rows else "no fleet tasks in this journal")
            return 0
        if command == "health":
            checked = view.health_of(args.task)
            if checked is None:
                show(args, None, f"no health check of task {args.task!r} yet")
                return 1
            show(
                args,
                checked,
                _one_line(
                    f"{args.task}: {checked['health']} ({checked['status']}, {checked['freshness']}) — "
                    f"{checked['diagnosis'] or 'no diagnosis'}; {checked['nudges']} nudge(s) sent, ladder {checked['ladder']}"
                ),
            )
            return 0
        if command == "diagnoses":
            found = [c for c in view.checks if c.recommendation != "continue" or c.health not in ("healthy", "paused")]
            found = found[-args.limit :]
            lines = [_one_line(f"cycle {c.cycle} {c.session}: {c.recommendation} — {c.diagnosis}") for c in found]
            show(args, [{"task": c.session, **c.payload()} for c in found], "\n".join(lines) or "no diagnoses")
            return 0
        if command == "syncs":
            syncs = [s for s in view.syncs if args.task in (None, s.session, s.source_task)][-args.limit :]
            lines = [
                _one_line(f"{s.source_task} → {s.session} [{s.urgency or '-'}, {s.status}] {s.text}") for s in syncs
            ]
            show(args, [{"to": s.session, **s.payload()} for s in syncs], "\n".join(lines) or "no syncs")
            return 0
        stats = view.stats()
        show(args, stats, "\n".join(f"{k}: {v}" for k, v in stats.items()))
        return 0


def _one_line(text: str) -> str:
    """One item of a listing on one line: a diagnosis or a learning may run over several."""
    return for_terminal(text, one_line=True)


def _check_named(journal: Journal, fleet: str) -> None:
    """Refuse a ``--fleet`` the journal does not hold: a typo would otherwise read as a fleet with no tasks."""
    from watcher.fleet.runs import fleets  # imported here: see run()

    known = fleets(journal)
    if fleet not in known:
        held = (
            f"its fleets: {', '.join(known)}" if known else "it holds none: start one with watcher fleet run TASKS.toml"
        )
        raise InvalidCommandError(f"no fleet named {fleet!r} in this journal; {held}")


def _live(args: argparse.Namespace, journal: Journal) -> int:
    """``status --watch``: redraw the table every ``args.watch`` seconds until Ctrl-C (exit 130, one line)."""
    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    from watcher.fleet.query import read_fleet

    def frame() -> Text:
        view = read_fleet(journal, args.fleet)
        rows = view.rows()
        head = f"fleet {_one_line(view.name or '-')} · {len(rows)} task(s) · {time.strftime('%H:%M:%S')} (Ctrl-C to stop)\n"
        return Text(head + (status_table(rows) if rows else "no fleet tasks in this journal yet"))

    console = Console(soft_wrap=True)
    if not console.is_terminal:  # a pipe or a log file: a table per interval (a live region draws only at the end)
        while True:
            print(frame().plain, flush=True)
            time.sleep(max(args.watch, 0.1))
    with Live(frame(), console=console, auto_refresh=False) as live:
        while True:
            time.sleep(max(args.watch, 0.1))
            live.update(frame(), refresh=True)


# a task's ends: a paused task may be resumed, a lost one may come back with its host
_ENDED = frozenset({"completed", "failed", "crashed", "aborted", "interrupted", "cancelled", "timeout"})


def _steer(args: argparse.Namespace, journal: Journal) -> int:
    from watcher.fleet import COMMAND_PREFIX  # imported here: see run()
    from watcher.fleet.runs import latest_tasks

    kind: str = args.fleet_command
    name, tasks = latest_tasks(journal, args.fleet)
    if not tasks:  # refused here, not recorded for a fleet that will never apply it
        named = f" named {args.fleet!r}" if args.fleet else ""
        raise InvalidCommandError(f"no fleet{named} in this journal: start one with watcher fleet run TASKS.toml")
    if args.task not in tasks:
        raise InvalidCommandError(f"fleet {name!r} has no task {args.task!r}; its tasks: {', '.join(tasks)}")
    from watcher.fleet.query import read_fleet

    row = read_fleet(journal, name).tasks.get(args.task)
    if row is not None and row.status in _ENDED:  # nothing will ever apply it: say so rather than record it
        raise InvalidCommandError(f"task {args.task!r} of fleet {name!r} has ended ({row.status}); nothing to {kind}")
    payload = {"message": args.message} if kind == "nudge" else {"reason": args.reason}
    cid = journal.submit_command(COMMAND_PREFIX + args.task, kind, payload=payload)
    deadline = time.monotonic() + max(args.wait, 0.0)
    while args.wait > 0 and time.monotonic() < deadline:
        answered = answer(journal.commands(status=None, after=cid - 1), cid)
        if answered is not None:
            show(
                args,
                {"command": cid, "status": answered.state, "detail": answered.detail},
                f"{kind} {args.task}: {answered.state} ({answered.detail})",
            )
            return 0 if answered.state == APPLIED else 1
        time.sleep(0.05)
    show(
        args,
        {"command": cid, "status": NEW},
        f"{kind} {args.task}: recorded (command {cid}); no fleet has applied it yet",
    )
    return 0 if args.wait <= 0 else 1
