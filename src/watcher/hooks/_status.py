"""``watcher hooks status``: what is installed, whether the daemon runs, what the last session saw."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

from watcher.core.errors import ConfigurationError
from watcher.core.logs import logger
from watcher.hooks import client
from watcher.hooks._events import HookEvent
from watcher.hooks._settings import HOOK_PROGRAM, entry_point_problem, installed, missing_entries
from watcher.runtime.events import EvaluationEvent, InterjectionEvent, readable
from watcher.runtime.fates import PENDING, Fates
from watcher.runtime.journal import Journal, JournalRow, journal_label
from watcher.settings import Settings

__all__ = ["evaluator_problem", "evaluator_unreachable", "last_session_summary", "status_lines"]

log = logger("watcher.hooks")


def evaluator_problem(evaluator: str, settings: Settings) -> str:
    """Why ``evaluator`` cannot judge with ``settings`` ("" when it can, as far as can be told offline)."""
    if evaluator == "anthropic" and settings.anthropic_key is None:
        return "the anthropic evaluator has no API key: ANTHROPIC_API_KEY is not set"
    if evaluator == "openai" and settings.openai_key is None and settings.openai_base_url is None:
        return "the openai evaluator has no API key: OPENAI_API_KEY is not set"  # a local server needs none
    return ""


def evaluator_unreachable(evaluator: str, settings: Settings) -> str:
    """Why ``evaluator`` cannot judge from here: its server unreachable, its key refused or its model
    unknown, proved with one models request ("" when it answers, or for the offline rules).

    Checked once, when the hooks are installed: a hook call never pays for it.
    """
    if evaluator not in ("anthropic", "openai"):
        return ""
    from watcher.evaluators.preflight import check_reachable
    from watcher.evaluators.registry import make_evaluator

    try:
        check_reachable(make_evaluator(evaluator, "security", settings=settings))
    except ConfigurationError as exc:
        return str(exc).rstrip(".")
    return ""


def last_session_summary(journal_path: Path | str) -> dict[str, Any] | None:
    """The newest hooked session in the journal: hook calls by answer, evaluations, interjections."""
    if isinstance(journal_path, Path) and not journal_path.is_file():
        return None
    journal = Journal(journal_path, create=False)
    try:
        # the newest hook call's session, then only its rows and its subagents': a journal of months
        # of sessions is not read whole for one summary
        newest = journal.latest(HookEvent.kind)
        if not newest:
            return None
        session = max(newest, key=lambda row: row[0])[1].split("/", 1)[0]
        names = {name for _, name, _ in newest if name == session or name.startswith(session + "/")}
        rows = [row for name in names for row in _all_of(journal, name)]
    finally:
        journal.close()
    rows.sort(key=lambda row: row.id)
    mine = list(readable(rows, log, "hooks status"))
    hooks = [e for e in mine if isinstance(e, HookEvent)]
    if not hooks:
        return None
    fates = Fates()
    for event in mine:
        fates.apply(event)
    answers = Counter(e.answer for e in mine if isinstance(e, HookEvent))
    return {
        "session": session,
        "hook_calls": sum(answers.values()),
        "last_call_ts": hooks[-1].ts,
        "last_event": hooks[-1].event,
        "answers": dict(answers),
        "evaluations": sum(isinstance(e, EvaluationEvent) for e in mine),
        "interjections": sum(isinstance(e, InterjectionEvent) for e in mine),
        PENDING: len(fates.with_status(PENDING)),
        "problems": next((list(h.problems) for h in reversed(hooks) if h.problems), []),
    }


def _all_of(journal: Journal, session: str) -> list[JournalRow]:
    """Every row of ``session``, read page by page."""
    rows: list[JournalRow] = []
    while page := journal.read(rows[-1].id if rows else 0, limit=10_000, session=session):
        rows += page
    return rows


def _ago(seconds: float) -> str:
    if seconds < 90:
        return f"{max(seconds, 0):.0f} s ago"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min ago"
    return f"{seconds / 3600:.1f} h ago"


def status_lines(settings: Path, journal_path: Path | str, environment: Settings) -> list[str]:
    """The lines ``watcher hooks status`` prints (``environment``: the shell's, for the evaluator's key)."""
    lines = []
    try:
        found = installed(settings)
    except ConfigurationError as exc:  # a damaged record: say so, and still show the daemon and the sessions
        found = None
        lines.append(f"problem: {exc}")
    if found is None:
        lines.append(f"hooks: not installed in {settings}" if not lines else f"hooks: unknown in {settings}")
    else:
        cfg = found.config
        lines.append(
            f"hooks: installed in {settings} for {len(found.commands)} events "
            f"(agent {cfg.get('agent')}, watchers {', '.join(cfg.get('roles') or [])}, mode {cfg.get('mode')}, "
            f"evaluator {cfg.get('evaluator')})"
        )
        entries = missing_entries(found)
        if entries:
            lines.append(f"problem: {entries}")
        programs = {command.split(" ", 1)[0] for command in found.commands.values()}
        for program in sorted(programs):
            missing = entry_point_problem(program)
            if missing:
                lines.append(f"problem: {missing}")
        if programs - {HOOK_PROGRAM[0]}:
            lines.append(
                "note: these hooks run `watcher hook`, the command of an earlier version; "
                f"`watcher hooks install` again writes `{HOOK_PROGRAM[0]}`, which starts faster"
            )
        problem = evaluator_problem(str(cfg.get("evaluator")), environment)
        if problem:
            lines.append(
                f"problem: {problem} in this shell; the watchers judge with the offline rules, the guard denies as usual"
            )
    try:
        daemon = client.ask_daemon({"op": "status"}, 1.0)
    except OSError:
        daemon = None
    if daemon is None:
        lines.append(f"daemon: not running ({client.socket_path()}); the next hook call starts it")
    else:
        lines.append(f"daemon: pid {daemon.get('pid')}, up {daemon.get('uptime_s')}s, {daemon.get('calls')} calls")
        lines += [f"daemon problem: {p}" for p in daemon.get("problems") or []]
        lines += [f"daemon failure: {f}" for f in daemon.get("failures") or []]
    if isinstance(journal_path, Path) and journal_path.is_dir():
        lines.append(
            f"problem: the journal {journal_path} is a folder, so the hooks can journal nothing there; "
            "point WATCHER_JOURNAL (or --journal) at a file, such as "
            f"{journal_path / 'journal.sqlite3'}"
        )
        return lines
    summary = last_session_summary(journal_path)
    if summary is None:
        lines.append(f"events: none arrived yet in {journal_label(journal_path)}")
    else:
        answers = ", ".join(f"{k} {v}" for k, v in sorted(summary["answers"].items()))
        ago = _ago(time.time() - float(summary["last_call_ts"]))
        lines.append(
            f"last session {summary['session']}: {summary['hook_calls']} hook calls ({answers}), last "
            f"{summary['last_event']} {ago}; {summary['evaluations']} evaluations, {summary['interjections']} "
            f"interjections ({summary['pending']} pending)"
        )
        lines += [f"session problem: {p}" for p in summary["problems"]]
    return lines
