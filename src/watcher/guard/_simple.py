"""One simple command that would run, as the guard's rules read it: its words, redirections and
what feeds it; and the program a word names (``/bin/rm``, ``\\rm``, ``RM``, ``rm.exe`` are ``rm``)."""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

__all__ = ["SHELLS", "Command", "option_outputs", "printed", "printed_text", "program", "skip_options"]

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


@functools.lru_cache(maxsize=4096)  # asked for every command by every rule: a line of 5,000 asks it 270,000 times
def program(word: str) -> str:
    """``/bin/rm``, ``\\rm`` and ``RM`` (a case-insensitive filesystem, as macOS has, runs it) → ``rm``;
    a program that is another under its own name (``hub``) → that one."""
    name = word.lstrip("\\").rsplit("/", 1)[-1]
    if name[-4:].lower() == ".exe":  # powershell.exe, rm.exe (Git Bash)
        name = name[:-4]
    name = name.lower() if name.isupper() else name
    return _SAME_PROGRAM.get(name, name)


_SAME_PROGRAM = {"hub": "git"}  # hub runs git with whatever it is given: `hub push -f` is `git push -f`


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


# the options that name the file a program writes: (short letters, long names)
_OUTPUT_OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "curl": ("o", ("--output",)),
    "wget": ("O", ("--output-document",)),
    "sort": ("o", ("--output",)),
    "tar": ("f", ("--file",)),
    "bsdtar": ("f", ("--file",)),
}
_TAR_WRITES = re.compile(r"-?[A-Za-z]*[cru][A-Za-z]*|--(?:create|append|update)")


def option_outputs(name: str, args: list[str] | tuple[str, ...]) -> list[str]:
    """The files ``name`` writes that its options name: ``curl -o F``, ``wget -qO F``, ``sort -o F``,
    ``tar -czf F`` (when it creates an archive; not ``-``, the standard output)."""
    if name not in _OUTPUT_OPTIONS:
        return []
    letters, longs = _OUTPUT_OPTIONS[name]
    if name in ("tar", "bsdtar") and not any(
        _TAR_WRITES.fullmatch(a) for i, a in enumerate(args) if a.startswith("-") or i == 0
    ):
        return []  # tar -xf, tar -tf: the archive is read
    out: list[str] = []
    for i, a in enumerate(args):
        following = args[i + 1] if i + 1 < len(args) else ""
        if a in longs:
            out.append(following)
        elif any(a.startswith(f"{long}=") for long in longs):
            out.append(a.split("=", 1)[1])
        elif letters and ((a.startswith("-") and not a.startswith("--")) or (i == 0 and name in ("tar", "bsdtar"))):
            bundle = a.lstrip("-")
            at = next((n for n, ch in enumerate(bundle) if ch in letters), -1)
            if at < 0 or (at and not bundle[:at].isalpha()):
                continue
            if name in ("tar", "bsdtar"):
                out.append(following)  # tar -cvf F, tar cf F: the archive is the next word
            else:
                out.append(bundle[at + 1 :] or following)  # -o F, -oF, -sSLo F, -qO-
    return [w for w in out if w and w != "-"]
