"""The ``watcher`` command's argument parser: plain help, "did you mean", help for a bare group.

Every subcommand's parser is a ``Parser``, so each of them (``watcher replya``, ``watcher hooks
statsu``) answers a mistyped choice with the nearest one, shows its docstring-style description
without reStructuredText markup, and a command group run without its action prints its help.
"""

from __future__ import annotations

import argparse
import difflib
import re
from typing import Any, NoReturn

__all__ = ["Parser", "did_you_mean", "help_for_bare_groups"]

_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")
_MARKUP = re.compile(r"``([^`]+)``|:\w+:`([^`]+)`")


def did_you_mean(word: str, choices: list[str]) -> str:
    """`` (did you mean 'replay'?)`` for the nearest of ``choices``, or an empty string."""
    near = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {near[0]!r}?)" if near else ""


class _PlainHelp(argparse.RawDescriptionHelpFormatter):
    """Keeps a description's paragraphs and strips its ``literal`` and :role:`x` markup."""

    def _format_text(self, text: str) -> str:
        return super()._format_text(_MARKUP.sub(lambda m: m.group(1) or m.group(2), text))


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` with plain help and a suggestion for a mistyped choice."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _PlainHelp)
        super().__init__(*args, **kwargs)

    def parse_args(self, args: Any = None, namespace: Any = None) -> argparse.Namespace:  # type: ignore[override]
        """As argparse's, but an unknown option is answered by the subcommand it was given to, with the
        nearest of that subcommand's options (``watcher replay F --jsn`` -> did you mean '--json'?)."""
        parsed: argparse.Namespace
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            chosen = _chosen(self, parsed)
            unknown = next((e for e in extras if e.startswith("-")), "")
            options = [o for action in chosen._actions for o in action.option_strings]
            name = unknown.split("=", 1)[0]
            if name in options:  # given after `--`: an option's own name, taken as a value
                hint = f" ({name!r} came after '--', where every word is a value: put options before '--')"
            else:
                hint = did_you_mean(name, options) if unknown else ""
            chosen.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        return parsed

    def error(self, message: str) -> NoReturn:
        found = _INVALID_CHOICE.search(message)
        if found:
            choices = re.findall(r"'([^']*)'", found.group(2))
            message += did_you_mean(found.group(1), choices)
        super().error(message)


def _chosen(parser: argparse.ArgumentParser, parsed: argparse.Namespace) -> argparse.ArgumentParser:
    """The deepest subcommand's parser that ``parsed`` went through (``watcher hooks check`` -> check's)."""
    while parser._subparsers is not None:
        group = [a for a in parser._subparsers._group_actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(parsed, group[0].dest, None) if group else None
        if not isinstance(name, str) or name not in group[0].choices:
            break
        parser = group[0].choices[name]
    return parser


def help_for_bare_groups(parser: argparse.ArgumentParser, *, defaults: dict[str, list[str]] | None = None) -> None:
    """Make every command group (a parser with sub-actions) run without one print its help and exit 0.

    ``defaults`` maps a group's name to the argv it stands for instead (``hooks`` -> ``hooks status``).
    """
    for action in parser._subparsers._group_actions if parser._subparsers else []:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        action.required = False
        for name, child in action.choices.items():
            if child._subparsers is None:
                continue
            help_for_bare_groups(child, defaults=defaults)
            if defaults and name in defaults:
                child.set_defaults(bare=defaults[name])
            elif child.get_default("func") is None:
                child.set_defaults(func=_printer(child))


def _printer(parser: argparse.ArgumentParser) -> Any:
    def print_help(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 0

    return print_help
