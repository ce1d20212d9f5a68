"""The magics: ``%watch``, ``%%watch``, ``%watchers``, ``%unwatch``, ``%watcher_history``, ``%watcher_inject``.

Each takes ``--help``. Arguments are parsed with argparse; a bad argument or a configuration
problem prints one clear line to stderr (``watcher: ...``) instead of a traceback from our code.
"""

from __future__ import annotations

import argparse
import functools
import shlex
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.display import display

from watcher.core.errors import WatcherError
from watcher.core.spec import MODES
from watcher.evaluators.registry import EVALUATORS
from watcher.kernel_ext.extension import KernelExtension
from watcher.roles import ROLE_NAMES

__all__ = ["MAGIC_NAMES", "WatcherMagics"]


class _Stop(Exception):
    """argparse wanted to exit: after --help (message empty) or on a bad argument."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _Stop(f"{self.prog}: {message} (see {self.prog} --help)")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise _Stop(message or "")


def _watch_parser(prog: str) -> _Parser:
    p = _Parser(prog=prog, description="Attach a watcher to this notebook's cells (and to agent runs started here).")
    p.add_argument("role", help=f"the watcher's role: {', '.join(ROLE_NAMES)}")
    p.add_argument("--brief", help="the watching brief (default: the role's own)")
    p.add_argument("--evaluator", default="rules", help="rules (offline, default), anthropic or openai")
    p.add_argument("--model", help="the model an LLM evaluator uses")
    p.add_argument("--base-url", dest="base_url", help="an OpenAI-compatible or Anthropic endpoint")
    p.add_argument(
        "--mode", default="autonomous", choices=MODES, help="autonomous: delivers by itself; manual: waits for Inject"
    )
    p.add_argument("--name", help="the watcher's name (default: the role); must be unique in this notebook")
    return p


def _simple_parser(prog: str, description: str, *positionals: tuple[str, str]) -> _Parser:
    p = _Parser(prog=prog, description=description)
    for name, text in positionals:
        p.add_argument(name, help=text)
    return p


PARSERS: dict[str, Callable[[], _Parser]] = {
    "watch": lambda: _watch_parser("%watch"),
    "cellwatch": lambda: _watch_parser("%%watch"),
    "watchers": lambda: _simple_parser("%watchers", "List this notebook's watchers and their state."),
    "unwatch": lambda: _simple_parser("%unwatch", "Detach a watcher.", ("name", "the watcher's name")),
    "history": lambda: _simple_parser(
        "%watcher_history", "Evaluations and interjections of this notebook, as a polars DataFrame."
    ),
    "inject": lambda: _simple_parser(
        "%watcher_inject",
        "Inject TEXT by hand, as watcher NAME, into the active agent run.",
        ("name", "a watcher's name"),
        ("text", "what to say"),
    ),
    "pending": lambda: _simple_parser(
        "%watcher_pending", "List the interjections waiting for you (manual mode), with their ids."
    ),
    "accept": lambda: _accept_parser(),
    "dismiss": lambda: _simple_parser(
        "%watcher_dismiss", "Drop a pending interjection.", ("id", "its id (%watcher_pending lists them)")
    ),
}


def _accept_parser() -> _Parser:
    p = _Parser(prog="%watcher_accept", description="Deliver a pending interjection, or TEXT in its place.")
    p.add_argument("id", help="its id (%watcher_pending lists them)")
    p.add_argument("text", nargs="?", default=None, help="what to say instead (default: the interjection as it is)")
    return p


def _without_comment(line: str) -> str:
    """``line`` without a trailing ``# comment`` (a ``#`` that starts a word outside quotes), as a
    shell reads it: ``%watch security --mode manual  # you decide`` is pasted from docs and notes."""
    quote = ""
    for i, c in enumerate(line):
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line


def _parse(kind: str, line: str, *, rest_as_text: bool = False) -> argparse.Namespace | None:
    """Parsed arguments, or None after printing help or a clear error."""
    parser = PARSERS[kind]()
    try:
        line = _without_comment(line)
        words = shlex.split(line)
        if rest_as_text and words and words[0] not in ("-h", "--help"):
            name, _, text = line.strip().partition(" ")
            text = text.strip()
            if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
                text = text[1:-1]
            words = [name, text] if text else [name]
        return parser.parse_args(words)
    except _Stop as stop:
        if str(stop):
            print(f"watcher: {stop}", file=sys.stderr)
        return None
    except ValueError as exc:  # shlex: unbalanced quotes
        print(f"watcher: {parser.prog}: cannot read the arguments ({exc})", file=sys.stderr)
        return None


def _one_line_when_interrupted(magic: Callable[..., Any]) -> Callable[..., Any]:
    """A magic interrupted while it waits on the watchers' thread says so in one line, not a traceback of ours."""

    @functools.wraps(magic)
    def run(self: WatcherMagics, *args: Any) -> Any:
        try:
            return magic(self, *args)
        except KeyboardInterrupt:
            print(f"watcher: %{magic.__name__} interrupted", file=sys.stderr)
            return None

    return run


@magics_class
class WatcherMagics(Magics):
    """The watcher magics, bound to one ``KernelExtension``."""

    def __init__(self, shell: InteractiveShell, extension: KernelExtension) -> None:
        super().__init__(shell)
        self.ext = extension

    def _attach(self, args: argparse.Namespace, *, one_cell: bool) -> bool:
        if args.name is not None and not args.name.strip():
            print(
                "watcher: --name is blank; give the watcher a name, or leave --name out to use the role's",
                file=sys.stderr,
            )
            return False
        if args.evaluator not in EVALUATORS:
            print(
                f"watcher: unknown evaluator {args.evaluator!r}; expected one of {', '.join(sorted(EVALUATORS))}",
                file=sys.stderr,
            )
            return False
        options = {"model": args.model, "base_url": args.base_url}
        try:
            panel = self.ext.watch(
                args.role,
                name=args.name,
                brief=args.brief,
                evaluator=args.evaluator,
                mode=args.mode,
                options=options,
                one_cell=one_cell,
            )
        except WatcherError as exc:
            print(f"watcher: cannot attach {args.role!r}: {exc}", file=sys.stderr)
            return False
        scope = "this cell" if one_cell else "this notebook's cells and agent runs"
        print(f"watcher {panel.state.name!r} ({args.role}, {panel.state.evaluator}, {args.mode}) is watching {scope}")
        display(panel)  # type: ignore[no-untyped-call]
        return True

    @line_magic
    @_one_line_when_interrupted
    def watch(self, line: str) -> None:
        """%watch ROLE [--brief TEXT] [--evaluator E] [--model M] [--base-url URL] [--mode M] [--name N]"""
        args = _parse("watch", line)
        if args is not None:
            self._attach(args, one_cell=False)

    @cell_magic("watch")  # type: ignore[arg-type]  # IPython types the name-only form loosely
    @_one_line_when_interrupted
    def watch_cell(self, line: str, cell: str) -> None:
        """%%watch ROLE [options]: watch this cell only (the same options as %watch)."""
        __tracebackhide__ = True  # the user's errors show as if the cell ran without the magic
        args = _parse("cellwatch", line)
        if args is None:
            return
        if args.name is None:
            args.name = args.role if args.role not in self.ext.attached else f"{args.role}-cell"
        if self._attach(args, one_cell=True):
            assert self.shell is not None
            self.shell.run_cell(cell, store_history=False)  # type: ignore[no-untyped-call]

    @line_magic
    @_one_line_when_interrupted
    def watchers(self, line: str) -> None:
        """%watchers: list this notebook's watchers and their state."""
        if _parse("watchers", line) is None:
            return
        if not self.ext.attached:
            print("no watchers attached; attach one with %watch ROLE (roles: " + ", ".join(ROLE_NAMES) + ")")
            return
        settled = self.ext.settle()
        for row in self.ext.states():
            where = "notebook" if row["session"] == self.ext.session.name else row["session"]
            print(
                f"{row['name']:<12} {row['role']:<9} {row['mode']:<10} {row['status']:<10} on {where}: "
                f"{row['evaluations']} evaluations, {row['interjections']} interjections, {len(row['pending'])} pending"
            )
        if not settled:
            print("(some watchers are still evaluating)")

    @line_magic
    @_one_line_when_interrupted
    def unwatch(self, line: str) -> None:
        """%unwatch NAME: detach a watcher."""
        args = _parse("unwatch", line)
        if args is None:
            return
        try:
            count = self.ext.unwatch(args.name)
        except WatcherError as exc:
            print(f"watcher: %unwatch: {exc}", file=sys.stderr)
            return
        print(f"watcher {args.name!r} detached from {count} session{'s' if count != 1 else ''}")

    @line_magic
    @_one_line_when_interrupted
    def watcher_history(self, line: str) -> Any:
        """%watcher_history: evaluations and interjections of this notebook, as a polars DataFrame."""
        if _parse("history", line) is None:
            return None
        import polars as pl

        from watcher.runtime.history import history

        self.ext.settle()
        sessions = [self.ext.session.name, *(s.name for s in self.ext.agent_sessions)]
        try:
            frame = history(self.ext.journal_path)
        except WatcherError as exc:  # a damaged or missing journal: say what to do, no traceback
            print(f"watcher: %watcher_history: {exc}", file=sys.stderr)
            return None
        return frame.filter(pl.col("session").is_in(sessions))

    @line_magic
    @_one_line_when_interrupted
    def watcher_inject(self, line: str) -> None:
        """%watcher_inject NAME TEXT: inject TEXT by hand, as watcher NAME, into the active agent run."""
        args = _parse("inject", line, rest_as_text=True)
        if args is None:
            return
        try:
            outcome = self.ext.inject_by_hand(args.name, args.text)
        except WatcherError as exc:
            print(f"watcher: %watcher_inject: {exc}", file=sys.stderr)
            return
        print(f"{outcome}: {args.text}")

    @line_magic
    @_one_line_when_interrupted
    def watcher_pending(self, line: str) -> None:
        """%watcher_pending: the interjections waiting for you, with the ids the two magics below take."""
        if _parse("pending", line) is None:
            return
        self.ext.settle()
        rows = self.ext.pending()
        if not rows:
            print("nothing is pending")
            return
        for session, watcher, interjection in rows:
            content = " ".join(interjection.content.split())
            print(f"{interjection.id}  {watcher} · {interjection.severity} · for {session}: {content}")
        print("%watcher_accept ID [TEXT] delivers one (TEXT replaces it); %watcher_dismiss ID drops it")

    @line_magic
    @_one_line_when_interrupted
    def watcher_accept(self, line: str) -> None:
        """%watcher_accept ID [TEXT]: deliver a pending interjection (TEXT in its place, if given)."""
        args = _parse("accept", line, rest_as_text=True)
        if args is not None:
            self._act(args.id, accept=True, content=args.text)

    @line_magic
    @_one_line_when_interrupted
    def watcher_dismiss(self, line: str) -> None:
        """%watcher_dismiss ID: drop a pending interjection."""
        args = _parse("dismiss", line)
        if args is not None:
            self._act(args.id, accept=False, content=None)

    def _act(self, interjection_id: str, *, accept: bool, content: str | None) -> None:
        try:
            session, watcher = self.ext.act_on(interjection_id, accept=accept, content=content)
        except WatcherError as exc:
            print(f"watcher: %watcher_{'accept' if accept else 'dismiss'}: {exc}", file=sys.stderr)
            return
        print(f"{'accepted' if accept else 'dismissed'} {interjection_id} of watcher {watcher!r} for {session}")


# every magic the class defines, so that unloading removes them all (three were left behind, bound to a closed loop)
MAGIC_NAMES = {kind: tuple(names) for kind, names in WatcherMagics.magics.items()}
