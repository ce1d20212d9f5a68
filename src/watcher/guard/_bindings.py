"""What a command line sets up before it acts: the variables it sets (to a path, empty, a new
temporary folder, a default), the paths its ``for`` loops walk, the branch it checks out, and the
programs it names through a variable (``x=rm; $x -rf ~``), so the rules judge what really runs."""

from __future__ import annotations

import contextlib
import re
from itertools import islice

from watcher.guard._lazy import lazy
from watcher.guard._shell import Command, TooLong, commands

__all__ = ["MKTEMP_FOLDER", "bindings", "named_programs"]

MKTEMP_FOLDER = "/tmp/tmp.mktemp"  # the folder `D=$(mktemp -d)` names, as the rules read it


def bindings(script: str) -> tuple[frozenset[str], tuple[tuple[str, str], ...]]:
    """The variables the line sets, and the values it sets some of them to: a word written out
    (``D=/Users``, ``DB=app_test``), an empty value (``D=``: then ``$D/x`` is ``/x``), a new temporary folder
    (``D=$(mktemp -d)``), a disk a listing names (``D=$(findmnt -no SOURCE /)``), a default for when another is unset (``D=${OUT:-$HOME}``: the home), and
    the first path a ``for`` loop walks (``for d in ~/*/; do rm -rf "$d"``); and the branch a
    ``git checkout``/``git switch`` moves to, as ``{git-branch}``."""
    loops = re.findall(r"\bfor\s+([A-Za-z_]\w*)\b|\bread\s+(?:-\w+\s+)*([A-Za-z_]\w*)", script)
    looped = {name for pair in loops for name in pair if name}
    # every assignment holds a "=": a line without one (a 5 MB word) skips their patterns
    assigned, values = _assignments(script, looped) if "=" in script else (looped, [])
    if "printf" in script:  # printf -v stmt 'TRUNCATE TABLE %s;' "$t": its text, a part known only as it runs in braces
        for m in islice(_PRINTF_V.finditer(script), _MOST):
            values.append((m.group(1), _FORMAT_PART.sub("{value}", m.group(3))))
            assigned.add(m.group(1))
    switched = [m.group(1) for m in islice(_SWITCH.finditer(script), _MOST)] if "git" in script else []
    if switched:  # git checkout main && git push -f: the push is from main, whatever HEAD says now
        values.append(("{git-branch}", switched[-1]))
    for m in islice(_FOR_HEAD.finditer(script), _MOST) if "for" in script else ():
        words = _loop_words(script, m.end())
        path = next((w.strip("'\"") for w in words if w.strip("'\"").startswith(("/", "~", "$HOME"))), None)
        if path:
            values.append((m.group(1), _HOME_WORD.sub("~", path)))
    return frozenset(assigned), tuple(values)


def _assignments(script: str, looped: set[str]) -> tuple[set[str], list[tuple[str, str]]]:
    """The variables the line assigns (``D=…``, ``export D=…``, and those its loops set), and the
    values known of some."""
    assigned = looped | set(
        re.findall(r"(?:^|[\s;&|(])(?:export\s+|local\s+|readonly\s+|declare\s+\S+\s+)?([A-Za-z_]\w*)=", script)
    )
    last = {  # each variable's last value set in the line (a later `D=build` undoes `D=`)
        name: value for name, value in re.findall(_SETS + r"(\S*)", script)
    }
    values = [
        (name, value.strip("'\""))
        for name, value in re.findall(
            _SETS
            + r"([^\s;&|$`'\"()]+|\"[/.][^\s;&|$`'\"()\\]*\"|\"\"|''|(?=[\s;&|]|$))",  # D=/Users, D="/Users" (a quoted ~ is no home)
            script,
        )
        if last.get(name, "").rstrip(";&|)") == value  # D=/Users, DB=app_test; TMPDIR= rm -rf $TMPDIR/x: empty, so /x
    ]
    values += (
        [
            (m.group(1), _HOME_WORD.sub("~", m.group(2)))  # F=$HOME/.docker/config.json, D="${HOME}/work"
            for m in islice(_AT_HOME.finditer(script), _MOST)
        ]
        if "HOME" in script
        else []
    )
    values += [(m.group(1), MKTEMP_FOLDER) for m in islice(_MKTEMP.finditer(script), _MOST)]
    if "$(" in script or "`" in script:  # dev=$(findmnt -no SOURCE /): a disk of this machine
        values += [(m.group(1), "/dev/{disk}") for m in islice(_DISK.finditer(script), _MOST)]
    if "rev-parse" in script:  # ROOT=$(git rev-parse --show-toplevel): the repository the line runs in
        values += [(m.group(1), ".") for m in islice(_TOPLEVEL.finditer(script), _MOST)]
    for m in islice(_DEFAULTED.finditer(script), _MOST):
        default = _PWD_WORD.sub(".", _HOME_WORD.sub("~", m.group(2).strip("'\"")))
        default = _on_known(default, dict(values))  # ${ENV_FILE:-$ROOT/.env}: built on a value set before
        if default.startswith(("/", "~", ".")):
            values.append((m.group(1), default))
    empty_defaults = _EMPTY_DEFAULT.finditer(script) if "-}" in script or "=}" in script else ()
    for m in islice(empty_defaults, _MOST):  # PREFIX=${INSTALL_PREFIX:-}: unset, so empty
        values.append((m.group(1), ""))
    set_here = {name for name, _ in values}
    for m in islice(_ASSIGNS_DEFAULT.finditer(script), _MOST):  # : "${DB_NAME:=orders_test}": set, if unset
        if m.group(1) not in set_here and m.group(1) not in assigned:
            values.append((m.group(1), _HOME_WORD.sub("~", m.group(2))))
            assigned.add(m.group(1))
    return assigned, values


def _on_known(word: str, known: dict[str, str]) -> str:
    """``word`` with the variable it starts with written as its known value (``$ROOT/.env``)."""
    m = re.match(r"\$(?:([A-Za-z_]\w*)\b|\{([A-Za-z_]\w*)\})", word)
    value = known.get((m.group(1) or m.group(2)) or "") if m else None
    return value + word[m.end() :] if m and value is not None else word


def _loop_words(script: str, start: int) -> list[str]:
    """The words a ``for … in`` starting at ``start`` walks, if a ``do`` follows them (a bounded look:
    a line of a thousand unfinished loops must not cost a thousand scans to its end)."""
    window = script[start : start + _WINDOW]
    end = min((i for i in (window.find(";"), window.find("\n")) if i >= 0), default=-1)
    if end < 0 or not window[end + 1 :].lstrip().startswith("do"):
        return []
    return window[:end].split()


_SWITCH = re.compile(
    r"\bgit\s+(?:-C\s+\S+\s+)?(?:checkout|switch)\s+(?:(?:-[bBcCf]|--create|--force|--discard-changes)\s+)*"
    r"([\w][\w./-]*)(?=\s*(?:$|[;&|)\n]))"
)
# each pattern reads a bounded stretch, and only the first _MOST matches are read: a line of
# thousands of unfinished constructs must cost one pass, not one per construct
_MOST = 256
_WINDOW = 2048
# a variable set at the start of a statement (`D=…`, `export D=…`, `local D=…`): its name
_SETS = r"(?:^|[\s;&|(])(?:export\s+|local\s+)?([A-Za-z_]\w*)="
_DEFAULTED = re.compile(_SETS + r"[\"']?\$\{\w+:?[-=]([^}\n]{1,300})\}")
_PRINTF_V = lazy(r"""\bprintf\s+-v\s+([A-Za-z_]\w*)\s+(['"])([^'"\n]{1,1000})\2""")
_FORMAT_PART = lazy(r"%[-+ #0-9.]*[sdiqb]")
_ASSIGNS_DEFAULT = lazy(r"\$\{([A-Za-z_]\w*):?=([\w./~:@+-]{1,300}|\$HOME[\w./-]{0,300})\}")
_EMPTY_DEFAULT = lazy(_SETS + r"([\"']?)\$\{\w+:?[-=]\}\2(?=[\s;&|)]|$)")
_TOPLEVEL = lazy(
    _SETS + r"[\"']?\$\(\s*git\s+rev-parse\s+--show-toplevel\s*\)[\"']?"
    r"(?=[\s;&|)]|$)"
)
_FOR_HEAD = re.compile(r"\bfor\s+([A-Za-z_]\w*)\s+in\s+")
_PWD_WORD = lazy(r"^(?:\$PWD\b|\$\{PWD\}|\$\(pwd\))")
_HOME_WORD = re.compile(r"^(?:\$HOME\b|\$\{HOME\})")
_MKTEMP = re.compile(_SETS + r"[\"']?\$\(\s*mktemp\b[^)\n]{0,200}\)")
_AT_HOME = re.compile(_SETS + r"[\"']?((?:\$HOME|\$\{HOME\})[\w./-]{0,300})")
_DISK = re.compile(_SETS + r"[\"']?(?:\$\(|`)\s*(?:sudo\s+)?(?:findmnt|lsblk|blkid|losetup|df)\b")
_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")  # a quoted part of a word: its text, quotes dropped
# $x, ${x}, ${x:-rm}: a program named through a variable, with the word run when it is unset
_PROGRAM_VAR = re.compile(r"\$\{([A-Za-z_]\w*)(?::?[-=]([\w./-]*))?\}|\$([A-Za-z_]\w*)")


def named_programs(script: str, cmds: list[Command], deadline: float) -> list[Command]:
    """The commands run through a variable the line sets to a program (``x=rm; $x -rf ~``): read
    again with the name written out, as the shell runs them."""
    if not any(c.argv and ("$" in c.argv[0] or "`" in c.argv[0]) for c in cmds):
        return []  # the usual line: no program named through a variable, no pass over the script
    words = {
        name: _QUOTED.sub(lambda q: q.group(1) or q.group(2) or "", value)
        for name, value in re.findall(
            r"""(?:^|[\s;&|(])(?:export\s+)?([A-Za-z_]\w*)=((?:[\w./-]+|'[^'\n]{0,200}'|"(?:[^"$`\n]|\$HOME\b|\$\{HOME\}){0,200}")+)(?=[\s;&|)]|$)""",
            script,
        )
    }  # x=rm, A='rm -rf', x="r""m", c="rm -rf $HOME": the program, or the program and its first words, quotes joined
    out: list[Command] = []
    for c in cmds:
        m = _PROGRAM_VAR.fullmatch(c.argv[0]) if c.argv else None
        if m and ((m.group(1) or m.group(3)) in words or m.group(2)) and c.source:
            written = _PROGRAM_VAR.sub(lambda v: _program_word(v, words), c.source)
            with contextlib.suppress(TooLong):
                out += commands(written, 1, deadline)
        elif c.argv and c.source and (name := _built_name(c.argv[0], words)) and c.source.startswith(c.argv[0]):
            with contextlib.suppress(TooLong):  # ${r}${m} -rf ~, $(echo rm) -rf ~: the name, as the shell builds it
                out += commands(name + c.source[len(c.argv[0]) :], 1, deadline)
    return out


_PRINTED_NAME = re.compile(
    r"\$\(\s*(?:echo|printf)\s+['\"]?([\w./-]+)['\"]?\s*\)|`\s*(?:echo|printf)\s+['\"]?([\w./-]+)['\"]?\s*`"
)


def _built_name(word: str, words: dict[str, str]) -> str | None:
    """A program's name built of parts (``${r}${m}``, ``$(echo rm)``, ``r$x``): None when a part is not known."""
    if not re.fullmatch(r"(?:\$\{?\w+\}?|[\w./-]+|" + _PRINTED_NAME.pattern + r")+", word) or (
        "$" not in word and "`" not in word
    ):
        return None
    built = _PRINTED_NAME.sub(lambda m: m.group(1) or m.group(2), word)
    unknown = False

    def part(v: re.Match[str]) -> str:
        nonlocal unknown
        value = words.get(v.group(1) or v.group(3) or "")
        unknown = unknown or value is None or " " in value
        return value or ""

    built = _PROGRAM_VAR.sub(part, built)
    return None if unknown or not re.fullmatch(r"[\w./-]+", built) else built


def _program_word(m: re.Match[str], words: dict[str, str]) -> str:
    """What runs for ``$x``/``${x:-rm}``: the word the line sets it to, else its default, else as written."""
    name = m.group(1) or m.group(3)
    return words.get(name) or m.group(2) or m.group(0)
