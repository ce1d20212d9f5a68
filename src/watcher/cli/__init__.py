"""The ``watcher`` command: one module per subcommand, each with ``register`` and ``run``.

Exit status: 0 on success; 1 when the run failed (an LLM evaluator's server does not answer, or
every evaluation failed); 2 on bad input (a missing file, a malformed line, an unknown role) or a
journal that could not be written, with the message on stderr and stdout left clean; 130 on
Ctrl-C (one line on stderr); 141 when the reader of stdout went away (``| head``), silently.

A subcommand module exposes ``register(sub)``, which adds its parser and sets ``func`` (a
callable taking the parsed ``argparse.Namespace`` and returning the exit status). The environment
is read once, before the command runs, into ``args.settings`` (``watcher.settings.Settings``);
a command takes what it needs from there and hands it down.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence

import argcomplete

from watcher._version import __version__
from watcher.cli import _bench, _completion, _eval, _fleet, _formats, _hooks, _journal, _replay, _roles, _serve, _spawn
from watcher.cli._parser import Parser, help_for_bare_groups
from watcher.core.errors import UnreachableServerError, WatcherError
from watcher.core.redact import redact
from watcher.core.terminal import for_terminal
from watcher.settings import Settings

__all__ = ["main"]

# Each entry registers one subcommand; add a module here to add a command.
_COMMANDS = (_replay, _formats, _roles, _spawn, _hooks, _serve, _bench, _eval, _journal, _fleet, _completion)
# Commands that talk to no model or forge server: a bad *_BASE_URL variable must not stop them.
_NO_SERVER = frozenset({"completion", "formats", "journal", "roles"})


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="watcher", description="Watchers that supervise agent runs and notebooks.")
    parser.add_argument("--version", action="version", version=f"watcher {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in _COMMANDS:
        command.register(sub)
    help_for_bare_groups(parser, defaults={"hooks": ["hooks", "status"]})
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``watcher`` console script."""
    parser = _parser()
    argcomplete.autocomplete(parser)  # answers the shell's completion request and exits; else returns at once
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None and getattr(args, "bare", None):  # a group run bare stands for an action
        args = parser.parse_args(args.bare)
    if getattr(args, "func", None) is None:  # bare `watcher`
        parser.print_help()
        return 0
    # `kill`, `timeout`, a service manager: stopped as cleanly as by Ctrl-C (the handler is the
    # command's only: a caller in-process, such as a test, gets its own back)
    previous = signal.signal(signal.SIGTERM, _terminated) if _main_thread() else None
    try:
        return _run(args)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


_EVALUATOR_URLS = ("ANTHROPIC_BASE_URL", "WATCHER_OPENAI_BASE_URL", "OPENAI_BASE_URL")


def _run(args: argparse.Namespace) -> int:
    try:
        # the environment, read once here and handed down in ``args``
        args.settings = Settings.from_env(
            check_urls=args.command not in _NO_SERVER,
            overridden=_EVALUATOR_URLS if getattr(args, "base_url", None) else (),  # the flag's URL is used
        )
        status: int = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return status
    except UnreachableServerError as exc:  # the run could not happen: a failed run, not bad input
        print(f"watcher: error: {_shown(exc)}", file=sys.stderr)
        return 1
    except WatcherError as exc:
        print(f"watcher: error: {_shown(exc)}", file=sys.stderr)
        return 2
    except Terminated:
        print("watcher: terminated; what was journaled before it is kept", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("watcher: interrupted; what was journaled before it is kept", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 141  # 128 + SIGPIPE, as a Unix tool killed by it


def _shown(exc: WatcherError) -> str:
    """An error's message as printed: redacted (it may quote a URL holding a key) and with what a
    terminal would act on shown (it may quote a transcript's line, a file name or a server's answer)."""
    return for_terminal(redact(str(exc)))


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be: leases are released, journals flushed, children stopped."""


def _terminated(_signum: int, _frame: object) -> None:
    raise Terminated


def _main_thread() -> bool:
    """Whether this is the main thread (only it can set a signal handler; tests call ``main`` from others)."""
    import threading

    return threading.current_thread() is threading.main_thread()


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush cannot fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (captured): nothing to flush anyway
        pass
