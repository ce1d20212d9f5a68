"""``watcher spawn``: run an agent CLI on a task in its own worktree, supervised, through to a PR."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import secrets
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from watcher.cli._journal import journal_argument
from watcher.cli._numbers import at_least, seconds
from watcher.core.errors import ConfigurationError
from watcher.core.terminal import for_terminal, json_for_terminal
from watcher.roles import ROLE_NAMES
from watcher.runtime.journal import Journal, default_journal_path
from watcher.runtime.session import EndState
from watcher.spawn import SpawnConfig, SpawnResult, cleanup, run_spawn
from watcher.spawn._gitproc import stop_all as stop_git
from watcher.spawn.monitor import ProgressState
from watcher.spawn.plan import PLANNERS, plan_manifest
from watcher.spawn.provision import git, spawn_directory
from watcher.spawn.recover import STRATEGIES
from watcher.spawn.run import watcher_spec

_STOPPING = (signal.SIGTERM, signal.SIGHUP)  # a service manager or `kill`; the terminal closed
DEFAULT_ROLES = tuple(r for r in ("security", "stuck", "errors") if r in ROLE_NAMES)


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``spawn`` subcommand."""
    sp = sub.add_parser(
        "spawn",
        help="run an agent CLI on a task in a sandboxed worktree, supervised, through to a pull request",
        description="Run Claude Code, Gemini CLI or Codex headless on TASK in a new git worktree "
        "(branch spawn/<id>), with watchers supervising it live, then push the branch and open a pull request.",
    )
    sp.add_argument("task", nargs="?", help="what the agent should do")
    sp.add_argument(
        "--agent", "-a", choices=("claude", "gemini", "codex"), default="claude", help="the agent CLI (default: claude)"
    )
    sp.add_argument("--repo", type=Path, default=Path.cwd(), help="the repository to work in (default: here)")
    sp.add_argument("--base", help="the branch to start from and propose to (default: the current branch)")
    sp.add_argument(
        "--watcher",
        "-w",
        action="append",
        dest="roles",
        metavar="ROLE",
        help=f"a watcher role; ROLE:manual waits for you to inject or dismiss (repeatable; default: {', '.join(DEFAULT_ROLES)})",
    )
    sp.add_argument("--evaluator", default="rules", help="the watchers' evaluator (default: rules, offline)")
    sp.add_argument("--planner", choices=PLANNERS, help="an LLM plans the sandbox manifest (default: rules, offline)")
    sp.add_argument("--recovery", choices=STRATEGIES, default="moderate", help="what to do about permission errors")
    sp.add_argument(
        "--max-escalations",
        type=at_least(0),
        default=3,
        help="widenings moderate recovery may make (default 3; 0: none)",
    )
    sp.add_argument(
        "--no-pr", dest="pr", action="store_false", help="commit on the branch but do not push or open a PR"
    )
    sp.add_argument("--remote", default="origin", help="the remote to push to (default: origin)")
    sp.add_argument("--forge-api", help="REST API base (default: $WATCHER_FORGE_API or https://api.github.com)")
    sp.add_argument("--forge-repo", metavar="OWNER/REPO", help="the forge repository (default: from the remote URL)")
    sp.add_argument(
        "--cli-path",
        help="the agent CLI executable (default: the repository's node_modules/.bin, then the PATH the agent runs with)",
    )
    sp.add_argument("--idle-timeout", type=seconds, help="seconds without output before the CLI is stopped")
    sp.add_argument("--total-timeout", type=seconds, help="seconds before the CLI is stopped whatever it does")
    sp.add_argument(
        "--journal",
        type=journal_argument,
        help="the journal: a path or a postgresql:// URL (default: the project's .watcher/journal.sqlite3)",
    )
    sp.add_argument("--json", action="store_true", help="print the report as JSON")
    sp.add_argument("--plan", action="store_true", help="print the sandbox manifest inferred for TASK and exit")
    sp.add_argument("--cleanup", action="store_true", help="remove every spawn worktree of --repo and exit")
    sp.set_defaults(func=run)


def _asker(progress: _Progress) -> Callable[[str], bool]:
    """Interactive recovery's question on the terminal, on a line of its own; one Ctrl-C stops the spawn there."""

    def ask(question: str) -> bool:
        progress.done()
        # the event loop waits for the answer, so asyncio's Ctrl-C (a cancel it would run) cannot act: raise instead
        try:
            previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        except ValueError:  # not the main thread
            previous = None
        try:
            print(f"watcher spawn: {for_terminal(question, one_line=True)} [y/N] ", end="", file=sys.stderr, flush=True)
            return sys.stdin.readline().strip().lower() in ("y", "yes")
        except KeyboardInterrupt:
            print(file=sys.stderr)  # what follows starts on a line of its own
            raise
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)

    return ask


class _Progress:
    """Live progress on stderr: one rewritten line on a terminal, a line per change otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self._last = ""

    def __call__(self, state: ProgressState) -> None:
        line = for_terminal(state.line(), one_line=True)  # it names the agent's last tool
        key = line.split("] ", 1)[-1]
        if self.tty:
            print(f"\r\033[K{line}", end="", file=sys.stderr, flush=True)
        elif key != self._last:
            print(line, file=sys.stderr, flush=True)
        self._last = key

    def done(self) -> None:
        """End the live line, if one is drawn."""
        if self.tty and self._last:
            print(file=sys.stderr)
        self._last = ""


def run(args: argparse.Namespace) -> int:
    """Plan, clean up, or run one spawn and print its report; 0 when it succeeded."""
    if args.cleanup:
        if args.task is not None or args.plan:
            raise ConfigurationError(
                "--cleanup removes the spawn worktrees of --repo and runs nothing: leave out "
                + ("the TASK" if args.task is not None else "--plan")
                + ", or run the task without --cleanup"
            )
        removed, kept = cleanup(args.repo)
        print(
            f"removed {len(removed)} spawn worktree(s) and their branches"
            + (": " + for_terminal(", ".join(removed), one_line=True) if removed else "")
        )
        for note in kept:
            print(f"kept the branch {for_terminal(note, one_line=True)}")
        return 0
    if not args.task or not args.task.strip():
        raise ConfigurationError('watcher spawn needs a TASK: watcher spawn "fix the failing test"')
    if args.plan:
        planned = asyncio.run(plan_manifest(args.task, args.planner, settings=args.settings))
        if planned.note:
            print(f"watcher spawn: {for_terminal(planned.note)}", file=sys.stderr)
        print(json_for_terminal(planned.manifest.to_json()))
        return 0
    if args.recovery == "interactive" and not sys.stdin.isatty():
        raise ConfigurationError(
            "--recovery interactive asks on the terminal, and stdin is not one; use moderate or aggressive"
        )
    progress = _Progress()
    spawn_id = secrets.token_hex(4)  # known here, so an interruption can say where the work was left
    ended: list[SpawnResult] = []  # the report, however the spawn ends (an interrupted one's: what happened so far)
    config = SpawnConfig(
        args.task,
        agent=args.agent,
        repo=args.repo,
        base=args.base,
        watchers=tuple(args.roles or DEFAULT_ROLES),
        evaluator=args.evaluator,
        planner=args.planner,
        recovery=args.recovery,
        max_escalations=args.max_escalations,
        ask=_asker(progress) if args.recovery == "interactive" else None,
        pr=args.pr,
        remote=args.remote,
        forge_api=args.forge_api,
        forge_repo=args.forge_repo,
        cli_path=args.cli_path,
        idle_timeout_s=args.idle_timeout,
        total_timeout_s=args.total_timeout,
        env=args.settings.environ,
        on_progress=progress,
        spawn_id=spawn_id,
        on_end=ended.append,
    )
    for role in config.watchers:  # a bad role or mode is refused before the journal file is created
        watcher_spec(str(role))
    journal = config.journal = Journal(args.journal or default_journal_path(settings=args.settings))
    if args.base is None:
        _note_uncommitted(args.repo)
    started = time.monotonic()
    try:
        result = _run_to_end(config)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the CLI is stopped and the end journaled; say what is left
        progress.done()
        if args.json:  # a script reading stdout gets the report of what happened so far, marked interrupted
            cut = ended[-1] if ended else _not_started(config, spawn_id, time.monotonic() - started)
            print(json_for_terminal(json.dumps(cut.to_dict(), indent=2)), flush=True)
        _left_behind(args.repo, spawn_id)
        raise
    finally:
        progress.done()
        journal.close()
    # the report quotes the agent (its output, commit subjects, interjections): shown, never obeyed
    report = json_for_terminal(json.dumps(result.to_dict(), indent=2)) if args.json else for_terminal(result.markdown())
    print(report, end="" if not args.json else "\n")
    return 0 if result.ok else 1


def _run_to_end(config: SpawnConfig) -> SpawnResult:
    """Run the spawn; SIGTERM or SIGHUP stops it as Ctrl-C does: the CLI is stopped and the run's end journaled.

    Python's own SIGTERM handler (``watcher.cli``) raises wherever the loop happens to be, which can
    skip the spawn's cleanup, and SIGHUP (the terminal closed) killed watcher at once, leaving the
    CLI running on its own; here both cancel the spawn's task instead, then raise ``Terminated``.
    """
    from watcher.cli import Terminated  # (the package imports this module)

    terminated = False

    async def main() -> SpawnResult | None:
        nonlocal terminated
        task, loop = asyncio.current_task(), asyncio.get_running_loop()
        assert task is not None

        def terminate() -> None:
            nonlocal terminated
            terminated = True
            task.cancel()

        previous = {sig: signal.getsignal(sig) for sig in _STOPPING}
        try:
            for sig in _STOPPING:
                loop.add_signal_handler(sig, terminate)
        except (ValueError, RuntimeError):  # not the main thread: whatever handles them there stays
            previous = {}
        try:
            return await run_spawn(config)
        except asyncio.CancelledError:
            stop_git()  # a git command waiting on a remote would hold the exit until its timeout
            if terminated:
                return None
            raise
        finally:
            for sig, handler in previous.items():
                loop.remove_signal_handler(sig)
                signal.signal(sig, handler if handler is not None else signal.SIG_DFL)

    result = asyncio.run(main())
    if result is None or terminated:
        raise Terminated
    return result


def _not_started(config: SpawnConfig, spawn_id: str, took: float) -> SpawnResult:
    """The report of a spawn interrupted before its worktree existed: nothing was made, nothing ran."""
    detail = "the spawn was interrupted before its worktree was made: nothing ran, nothing was left behind"
    return SpawnResult(
        spawn_id, config.task, config.agent, EndState.INTERRUPTED, round(took, 3), "", config.base or "", "", "",
        detail=detail,
    )  # fmt: skip


def _note_uncommitted(repo: Path) -> None:
    """Say that changes not committed in the checkout stay out of the spawn (it starts from the last commit)."""
    if git(repo, "status", "--porcelain", "--untracked-files=no", check=False):  # ('' outside a repository)
        print(
            "watcher spawn: note: the checkout has changes that are not committed; the agent starts from the "
            "last commit, without them (commit them first for the agent to see them)",
            file=sys.stderr,
        )


def _left_behind(repo: Path, spawn_id: str) -> None:
    """Say where an interrupted spawn left its work (nothing when it stopped before its worktree existed)."""
    with contextlib.suppress(Exception):  # the repository was checked before the run; this is only a courtesy
        worktree = spawn_directory(repo, spawn_id) / "worktree"
        if worktree.is_dir():
            print(
                f"watcher spawn: spawn {spawn_id} was stopped before its end, and its agent with it; what the "
                f"agent wrote stays in {worktree} (branch spawn/{spawn_id}): look there, or remove both with "
                "`watcher spawn --cleanup` (what is not committed goes with them)",
                file=sys.stderr,
            )
