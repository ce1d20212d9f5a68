"""One simple command that would run, as the guard's rules read it: its words, redirections and
what feeds it; and the program a word names (``/bin/rm``, ``\\rm``, ``RM``, ``rm.exe`` are ``rm``)."""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["SHELLS", "Command", "printed", "printed_text", "program", "skip_options"]

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "busybox", "powershell", "pwsh", "cmd"})


class Command(NamedTuple):
    """One simple command that would run: its words, where its output goes, what it reads.

    ``redirects`` are (operator, target) pairs; ``stdin`` is the text a here-string or
    here-document feeds it; ``feeder`` is the command piped into it; ``wrapped_by`` names the
    wrappers peeled off (``sudo``, ``xargs``, ``find``); ``source`` is the command's own text.
    """

    argv: tuple[str, ...]
    redirects: tuple[tuple[str, str], ...] = ()
    stdin: str | None = None
    feeder: Command | None = None
    wrapped_by: tuple[str, ...] = ()
    source: str = ""
    background: bool = False
    captured_by: str = ""  # the program a ``$(…)`` hands this command's output to ("=": a variable)

    @property
    def name(self) -> str:
        """The program, without a path or a leading backslash (``/bin/rm``, ``\\rm`` → ``rm``)."""
        return program(self.argv[0]) if self.argv else ""

    @property
    def args(self) -> tuple[str, ...]:
        return self.argv[1:]


def program(word: str) -> str:
    """``/bin/rm``, ``\\rm`` and ``RM`` (a case-insensitive filesystem, as macOS has, runs it) → ``rm``."""
    name = word.lstrip("\\").rsplit("/", 1)[-1]
    if name[-4:].lower() == ".exe":  # powershell.exe, rm.exe (Git Bash)
        name = name[:-4]
    return name.lower() if name.isupper() else name


def skip_options(argv: list[str], with_value: frozenset[str]) -> list[str]:
    """``argv`` from its first operand on: options (and the values of ``with_value``) skipped."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return argv[i + 1 :]
        if not a.startswith("-") or a == "-":
            if re.fullmatch(r"[A-Za-z_]\w*=.*", a):  # env VAR=1 cmd
                i += 1
                continue
            break
        i += 2 if a in with_value else 1
    return argv[i:]


def printed(cmd: Command) -> list[str]:
    """The words ``echo`` or ``printf`` prints: echo's leading options (``-n``, ``-e``) left out, and
    only those (``echo rm -rf /`` prints ``-rf``)."""
    args = list(cmd.args)
    if cmd.name == "echo":
        while args and re.fullmatch(r"-[neE]+", args[0]):
            args = args[1:]
    return args


def printed_text(c: Command) -> str:
    """What ``echo`` or ``printf`` writes: its escapes (``\\n``) as the characters, printf's ``%s`` filled
    (its format repeated until every value is used)."""
    words = printed(c)
    if c.name == "printf" and words:
        fmt, values = words[0], words[1:]
        slots = len(re.findall(r"%[sb]", fmt))
        rounds = max(1, -(-len(values) // slots)) if slots else 1
        filled = iter(values)
        text = "".join(re.sub(r"%[sb]", lambda _: next(filled, ""), fmt) for _ in range(rounds))
    else:
        text = " ".join(words) + "\n"
    return re.sub(r"\\([nt])", lambda m: "\n" if m[1] == "n" else "\t", text)
