"""``watcher hook EVENT`` (what the CLI runs) and ``watcher hooks install|status|uninstall``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from watcher.cli import _guard
from watcher.cli._journal import journal_argument
from watcher.core.errors import ConfigurationError
from watcher.core.terminal import for_terminal
from watcher.hooks import client
from watcher.hooks._session import DEFAULT_ROLES, HookConfig
from watcher.hooks._settings import SCOPES, entry_point_problem, install, manifest_path, settings_path, uninstall
from watcher.hooks._status import evaluator_problem, evaluator_unreachable, status_lines
from watcher.hooks._wire import AGENTS
from watcher.roles import ROLE_NAMES
from watcher.runtime.journal import default_journal_path

__all__ = ["register", "run_hook", "run_hooks", "run_stop"]


def register(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``hook`` and ``hooks`` subcommands."""
    hook = sub.add_parser(
        "hook",
        help="answer one Claude Code / Codex hook call (the CLI runs this)",
        description="Read a hook payload on stdin and print the answer. Always exits 0: a hook fails open.",
    )
    hook.add_argument("event", help="the hook event, e.g. PreToolUse")
    hook.add_argument("options", nargs=argparse.REMAINDER, help="--agent, --watcher, --mode, --evaluator, --budget")
    hook.set_defaults(func=run_hook)

    hooks = sub.add_parser(
        "hooks",
        help="supervise your own Claude Code or Codex sessions through their hooks",
        description="Install, show or remove watcher's hooks in Claude Code's or Codex's settings; "
        "read the guard's policy and try a call against it.",
    )
    action = hooks.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, text in (
        ("install", "add watcher's hooks (the file's first state is kept as one backup)"),
        ("status", "show what is installed, the daemon, and the last hooked session"),
        ("uninstall", "remove exactly the hooks watcher added (restoring the file as it was)"),
    ):
        p = action.add_parser(name, help=text, description=text)
        where = p.add_mutually_exclusive_group()
        where.add_argument(
            "--scope",
            choices=SCOPES,
            help="local: .claude/settings.local.json, this checkout only (the default for Claude Code); "
            "project: .claude/settings.json or .codex/hooks.json, which the team commits; user: "
            "~/.claude/settings.json or $CODEX_HOME/hooks.json (the default for Codex, which has no local file)",
        )
        where.add_argument("--project", dest="scope", action="store_const", const="project", help="--scope project")
        where.add_argument("--user", dest="scope", action="store_const", const="user", help="--scope user")
        p.add_argument("--agent", choices=AGENTS, default="claude", help="the CLI (default: claude)")
        if name == "install":
            p.add_argument(
                "--watcher",
                "-w",
                action="append",
                dest="roles",
                choices=ROLE_NAMES,
                metavar="ROLE",
                help=f"a role to attach (repeatable; default: {', '.join(DEFAULT_ROLES)})",
            )
            p.add_argument("--mode", choices=("autonomous", "manual"), default="autonomous")
            p.add_argument("--evaluator", choices=("rules", "anthropic", "openai"), default="rules")
            p.add_argument(
                "--allow-missing-key",
                action="store_true",
                help="install an LLM evaluator whose API key is not set here or whose server does not answer "
                "(the offline rules judge until it works)",
            )
            p.add_argument("--max-stop-blocks", type=int, default=2, help="times one turn may be kept going")
            p.add_argument("--budget", type=_seconds, default=2.0, help="a hook call's time budget in seconds")
            p.add_argument(
                "--journal",
                type=journal_argument,
                help="the journal: a path or a postgresql:// URL (default: the project's)",
            )
        if name == "status":
            p.add_argument(
                "--journal",
                type=journal_argument,
                help="the journal: a path or a postgresql:// URL (default: the project's)",
            )
        p.set_defaults(func=run_hooks)
    stop = action.add_parser(
        "stop", help="stop the hook daemon", description="Stop the hook daemon (the next hook call starts it again)."
    )
    stop.set_defaults(func=run_stop)
    _guard.add_parsers(action)


def _seconds(value: str) -> float:
    """A hook budget, as the hook command itself accepts it."""
    try:
        return client.budget_seconds(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--budget ")) from None


def run_hook(args: argparse.Namespace) -> int:
    """Answer one hook call (always 0)."""
    return client.main([args.event, *args.options])


def run_hooks(args: argparse.Namespace) -> int:
    """Install, show or uninstall."""
    here, scope = _repository_root(), args.scope or _default_scope(args)
    settings = settings_path(scope, agent=args.agent, project=here, codex_home=args.settings.codex_home)
    if here != Path.cwd().resolve() and settings.is_relative_to(here):
        print(f"(the repository's root is {here}: its settings are the ones the CLI reads there)")
    for other in (s for s in _installed_scopes(args) if s != scope and args.action in ("install", "status")):
        print(
            f"note: watcher's hooks are also installed with --scope {other}, so the CLI runs them twice on every "
            f"event; remove one with `watcher hooks uninstall --scope {other}`"
        )
    if args.action == "install":
        unreachable = entry_point_problem()
        if unreachable:
            raise ConfigurationError(unreachable)
        problem = evaluator_problem(args.evaluator, args.settings) or evaluator_unreachable(
            args.evaluator, args.settings
        )
        if problem and not args.allow_missing_key:
            raise ConfigurationError(
                f"{problem}. Hooks with --evaluator {args.evaluator} would judge with the offline rules only; fix that "
                "and install again, use --evaluator rules, or pass --allow-missing-key to install anyway"
            )
        config = HookConfig(
            agent=args.agent,
            roles=tuple(args.roles or DEFAULT_ROLES),
            mode=args.mode,
            evaluator=args.evaluator,
            max_stop_blocks=args.max_stop_blocks,
            budget_s=args.budget,
            journal=str(args.journal.resolve() if isinstance(args.journal, Path) else args.journal)
            if args.journal
            else None,
        )
        done = install(settings, config)
        print(f"installed watcher hooks for {len(done.commands)} events in {settings}")
        print(f"watchers: {', '.join(config.roles)} ({config.mode}); backup: {done.backup or 'none (new file)'}")
        if problem:
            print(
                f"warning: {problem}.\nUntil that is fixed the watchers judge with the offline rules; the guard denies as usual"
            )
        if config.agent == "codex":
            print("Codex runs new hooks only once you trust them: open /hooks in Codex and trust watcher's.")
        return 0
    if args.action == "uninstall":
        removed = uninstall(settings)
        print(
            f"removed {removed} watcher hook entries from {settings}" if removed else f"no watcher hooks in {settings}"
        )
        return 0
    journal = args.journal or default_journal_path(settings=args.settings)
    # a line each: the last session's id and the daemon's failures are what hook payloads and servers said
    print("\n".join(for_terminal(line, one_line=True) for line in status_lines(settings, journal, args.settings)))
    return 0


def _repository_root() -> Path:
    """The git repository's top folder holding the working folder (the working folder outside one).

    Claude Code and Codex read a project's settings at the root they run from: hooks installed from
    a subfolder would sit in a ``.claude`` nobody reads, and ``uninstall`` at the root would miss them.
    """
    here = Path.cwd().resolve()
    return next((folder for folder in (here, *here.parents) if (folder / ".git").exists()), here)


def _default_scope(args: argparse.Namespace) -> str:
    """local for Claude Code, user for Codex; status and uninstall look where an install is recorded."""
    default = "local" if args.agent == "claude" else "user"
    if args.action == "install":
        return default
    return next(iter(_installed_scopes(args)), default)


def _installed_scopes(args: argparse.Namespace) -> list[str]:
    """The scopes whose settings hold watcher's hooks for ``args.agent`` (by their install records)."""
    scopes = [s for s in SCOPES if args.agent == "claude" or s != "local"]
    home, root = args.settings.codex_home, _repository_root()
    return [
        s for s in scopes if manifest_path(settings_path(s, agent=args.agent, project=root, codex_home=home)).exists()
    ]


def run_stop(_args: argparse.Namespace) -> int:
    """Stop the daemon (0 also when none ran)."""
    from watcher.hooks._daemon import stop_daemon  # the daemon's imports only for this action

    print(for_terminal(stop_daemon()))
    return 0
