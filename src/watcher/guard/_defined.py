"""What a command line defines and then calls: shell functions (``f() { rm -rf "$1"; }; f ~``),
aliases (``alias nuke='rm -rf'; nuke ~``) and the positional parameters ``set --`` gives
(``set -- rm -rf ~; "$@"``). Each call is read again as the shell runs it, its arguments in place
of ``$1``/``$@``, so the rules judge the command that really runs, not its unset template."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from itertools import islice

from watcher.guard._lazy import lazy
from watcher.guard._shell import Command, TooLong, commands

__all__ = ["defined_calls"]

_WINDOW = 4096  # the longest function body read
_MOST = 64  # calls read again: a line of thousands of calls must not cost thousands of parses
# a function's definition up to its body's opening bracket, in one pass (each word tried once)
_FUNCTION = lazy(
    r"(?:\bfunction\s+(?P<kw>[\w.:-]+)(?:\s*\(\s*\))?|(?<![\w.:-])(?P<name>[\w.:-]+)\s*\(\s*\))\s*(?=[{(])"
)
_POSITIONAL = lazy(r"\"\$(?:\{[@*]\}|[@*])\"|\$\{(\d)\}|\$(\d)|\$\{[@*]\}|\$[@*]")
_PARAMETERS = frozenset("123456789@*#")
# an argument written back as is (no quoting to undo; a variable in it, ${PREFIX}/bin, is expanded where it lands)
_PLAIN_ARG = lazy(r"[^\"'`\\\n;&|<>()]*")


def defined_calls(script: str, cmds: list[Command], deadline: float) -> tuple[list[Command], frozenset[str]]:
    """The commands that calls of the line's own functions and aliases, and ``"$@"`` after a
    ``set --``, would run: read again with the arguments written into them; and the positional
    parameters thereby given (none when nothing was written out: an unset ``$1`` is then empty)."""
    out: list[Command] = []
    complete = True
    for text in islice(_written_out(script, cmds), _MOST):
        complete = complete and _POSITIONAL.search(text) is None  # an argument too odd to write in stays
        with contextlib.suppress(TooLong):
            out += commands(text, 1, deadline)
    return out, _PARAMETERS if out and complete else frozenset()


def _written_out(script: str, cmds: list[Command]) -> Iterator[str]:
    if "(" in script or "function" in script:
        bodies = _bodies(script, {c.argv[0] for c in cmds if c.argv})
        for c in cmds:
            if c.argv and c.argv[0] in bodies:
                yield _with_arguments(bodies[c.argv[0]], c.args)
    aliases = dict(_aliases(cmds))
    for c in cmds:
        value = aliases.get(c.argv[0]) if c.argv and c.name != "alias" else None
        if value is not None and c.source.startswith(c.argv[0]):
            yield value + c.source[len(c.argv[0]) :]
    given = next((c.args[1:] for c in reversed(cmds) if c.name == "set" and c.args[:1] == ("--",)), None)
    if given is not None:
        for c in cmds:
            if c.name != "set" and _POSITIONAL.search(c.source):
                yield _with_arguments(c.source, given)


def _bodies(script: str, names: set[str]) -> dict[str, str]:
    """The body of each function of ``names`` the line defines (the last definition wins, as in bash):
    from its opening ``{`` or ``(`` to the one that closes it, quotes skipped, within a bounded look."""
    found: dict[str, str] = {}
    read_to = 0  # each stretch is scanned once: a definition inside one read already is left to it
    for m in _FUNCTION.finditer(script):
        name = m.group("kw") or m.group("name")
        if name not in names or m.start() < read_to:
            continue
        body = _closed(script, m.end())
        read_to = m.end() + (len(body) or _WINDOW)
        if body:
            found[name] = body
    return found


def _closed(script: str, start: int) -> str:
    """``script[start:]`` up to the bracket that closes the one at ``start`` ("" if none closes it soon)."""
    opening = script[start]
    closing = "}" if opening == "{" else ")"
    depth, quote = 0, ""
    for i in range(start, min(len(script), start + _WINDOW)):
        ch = script[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == opening:
            depth += 1
        elif ch == closing:
            depth -= 1
            if depth == 0:
                return script[start : i + 1]
    return ""


def _aliases(cmds: list[Command]) -> Iterator[tuple[str, str]]:
    for c in cmds:
        if c.name == "alias":
            for word in c.args:
                name, eq, value = word.partition("=")
                if eq and value:
                    yield name, value


def _with_arguments(text: str, args: tuple[str, ...]) -> str:
    """``text`` with ``$1``…``$9``, ``$@`` and ``$*`` replaced by ``args`` (a ``~`` as ``$HOME``,
    which the shell had expanded before the call). A plain argument is written as it is; one with
    the shell's own characters (``"DROP DATABASE ${DB};"``) as one quoted word, as the shell passes
    it: an expansion's value is never read again for ``;`` or ``|``."""
    given = [_HOME.sub("$HOME", a) for a in args]
    plain = [a if _PLAIN_ARG.fullmatch(a) else None for a in given]
    quoted = [a.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`") for a in given]
    text = _named_parameters(text, len(args))
    inside = _in_double_quotes(text)

    def put(m: re.Match[str]) -> str:
        number = m.group(1) or m.group(2)
        if number is None:  # "$@", $*: every argument, each its own word
            return " ".join(f'"{a}"' for a in quoted)
        at = int(number) - 1
        if at < 0:
            return m.group(0)
        if at >= len(given):
            return ""
        if plain[at] is not None:
            return plain[at] or ""
        return quoted[at] if inside(m.start()) else f'"{quoted[at]}"'

    return _POSITIONAL.sub(put, text)


def _in_double_quotes(text: str) -> Callable[[int], bool]:
    """Whether a position of ``text`` is inside double quotes (single quotes and escapes kept apart)."""
    spans: list[tuple[int, int]] = []
    start, quote, i = -1, "", 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and quote != "'":
            i += 2
            continue
        if quote == "" and ch in "\"'":
            quote, start = ch, i
        elif ch == quote:
            if quote == '"':
                spans.append((start, i))
            quote = ""
        i += 1
    return lambda at: any(a < at < b for a, b in spans)


_HOME = re.compile(r"^~(?=/|$)")
# a name given a positional parameter in a function's body: `local dir="$1"`, `target=${2:-build}`
_NAMED = lazy(
    r"""(?:^|[\s;{(])(?:local\s+|declare\s+(?:-\w+\s+)?|readonly\s+)?([A-Za-z_]\w*)=(["']?)"""
    r"""\$(?:(\d)|\{(\d)(?::?-([^}"'\n]*))?\})\2(?=[\s;&|)}]|$)"""
)


def _named_parameters(text: str, given: int) -> str:
    """``text`` with each name a positional parameter was given to (``local dir="$1"``) read as that
    parameter where it is used (``rm -rf "$dir"`` as ``rm -rf "$1"``); a parameter not given, as its
    default (``${2:-build}``), or empty. A name assigned again is left as it is."""
    named: dict[str, str] = {}
    for m in _NAMED.finditer(text):
        number = int(m.group(3) or m.group(4))
        named[m.group(1)] = f"${number}" if number <= given else (m.group(5) or "")
    for name, value in named.items():
        if len(re.findall(rf"(?<![\w$]){name}=", text)) != 1:
            continue  # set again (or never, as read here): not one value
        text = re.sub(rf"\$(?:{name}\b|\{{{name}\}})", value.replace("\\", "\\\\"), text)
    return text
