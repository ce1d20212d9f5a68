"""Variables a builtin sets, written out as plain assignments so the rules read their values:
``read -r d <<< ~`` as ``d=~``, ``mapfile -t a <<< ~`` as ``a=(~)``, ``printf -v t '%s/' ~`` as
``t="$HOME/"``, a name reference (``declare -n r=HOME``) as the variable it names, and words a line splits
on a ``IFS`` it sets (``IFS=,; x=rm,-rf,~; $x``) split on blanks, as the rest of the guard reads them."""

from __future__ import annotations

import re
import shlex
from itertools import islice

from watcher.guard._lazy import lazy

__all__ = ["builtins_assigned"]

_MOST = 64  # statements rewritten: a line of thousands of them must cost one pass
_NAMEREF = lazy(r"(?:^|(?<=[\s;&|(]))(?:declare|typeset|local)\s+-\w*n\w*\s+([A-Za-z_]\w*)=['\"]?([A-Za-z_]\w*)['\"]?")
# read [-r] [-a arr] [-d x] [-p prompt] NAMES <<< WORD, with an IFS=X before it or not
_READ = lazy(
    r"(?:^|(?<=[\s;&|(]))(?:IFS=(?P<ifs>'[^']*'|\"[^\"]*\"|\S*)\s+)?(?P<cmd>read|mapfile|readarray)"
    r"(?P<opts>(?:\s+-(?:[rsteu]*a\s*(?P<arr>[A-Za-z_]\w*)|[rstesu]+|[dnNptu]\s*\S+))*)"
    r"(?P<names>(?:\s+[A-Za-z_]\w*)*)\s*<<<\s*(?P<word>'[^'\n]*'|\"[^\"\n]*\"|[^\s;&|)]+)"
)
_PRINTF_V = lazy(r"(?:^|(?<=[\s;&|(]))printf\s+-v\s*([A-Za-z_]\w*)\s+('[^'\n]*'|\"[^\"\n]*\"|[^\s;&|]+)([^;&|\n)]*)")
# d=$(echo ~), d="$(printf '%s/' "$HOME")": what echo or printf prints, when its words are plain
_PRINTED = lazy(
    r"(?:^|(?<=[\s;&|(]))([A-Za-z_]\w*)=\"?\$\(\s*(echo|printf)\s+([^()`$\n]*(?:\$HOME\b[^()`$\n]*)*)\)\"?(?=[\s;&|)]|$)"
)
_IFS_SET = lazy(r"(?:^|(?<=[\s;&|(]))IFS=('[^'\s]+'|\"[^\"\s]+\"|\$'[^']+'|[^\s;&|'\"$]+)(?=\s*(?:[;&\n]|$))")
_ASSIGN = lazy(r"(?:^|(?<=[\s;&|(]))(?:export\s+)?([A-Za-z_]\w*)=('[^'\s]*'|\"[^\"\s]*\"|[^\s;&|'\"()]+)")


def builtins_assigned(script: str) -> str:
    """``script`` with the variables ``read``, ``mapfile``, ``printf -v`` and ``declare -n`` set written
    as assignments, and values split on a ``IFS`` the line sets written with blanks."""
    if "-n" in script and ("declare" in script or "typeset" in script or "local" in script):
        script = _namerefs(script)
    if "<<<" in script:
        script = _READ.sub(_read_as_assignment, script, count=_MOST)
    if "=$(" in script or '="$(' in script:
        script = _PRINTED.sub(_printed_as_assignment, script, count=_MOST)
    if "printf" in script and "-v" in script:
        script = _PRINTF_V.sub(_printf_as_assignment, script, count=_MOST)
    if "IFS=" in script:
        script = _split_on_ifs(script)
    return script


def _namerefs(script: str) -> str:
    for m in islice(_NAMEREF.finditer(script), _MOST):
        ref, target = m.group(1), m.group(2)
        script = re.sub(rf"\$\{{{ref}\}}|\${ref}\b", lambda _: "${" + target + "}", script)  # noqa: B023
    return script


def _unquoted(word: str) -> str:
    """A word as the builtin receives it: quotes dropped, ``~`` at its start the home."""
    if word[:1] == "'" or word[:1] == '"':
        return word[1:-1]
    return "$HOME" + word[1:] if word == "~" or word.startswith("~/") else word


def _read_as_assignment(m: re.Match[str]) -> str:
    text = _unquoted(m.group("word"))
    if m.group("cmd") != "read":  # mapfile -t a <<< WORD: one element per line
        names = m.group("names").split()
        return f'{names[0] if names else "MAPFILE"}=("{text}")'
    ifs = _ifs_chars(m.group("ifs")) if m.group("ifs") is not None else " \t\n"
    if m.group("arr"):
        fields = [f for f in re.split("[" + re.escape(ifs) + "]+", text) if f] if ifs else [text]
        return m.group("arr") + "=(" + " ".join(f'"{f}"' for f in fields) + ")"
    names = m.group("names").split() or ["REPLY"]
    fields = re.split("[" + re.escape(ifs) + "]+", text.strip(ifs), maxsplit=len(names) - 1) if ifs else [text]
    return " ".join(f'{name}="{value}"' for name, value in zip(names, fields, strict=False))


def _ifs_chars(value: str) -> str:
    if value.startswith("$'"):
        return value[2:-1].encode().decode("unicode_escape")
    return value.strip("'\"")


def _printed_as_assignment(m: re.Match[str]) -> str:
    """``d=$(echo ~)``: ``d`` set to what ``echo`` prints; ``printf`` as ``printf -v``."""
    try:
        words = shlex.split(m.group(3))
    except ValueError:
        return m.group(0)
    if m.group(2) == "printf":
        printed = _filled(words[0], words[1:]) if words else None
    else:
        while words and re.fullmatch(r"-[neE]+", words[0]):
            words = words[1:]
        printed = " ".join("$HOME" + w[1:] if w == "~" or w.startswith("~/") else w for w in words)
    printed = printed if printed is None else re.sub(r"(?:\\n)+$", "", printed)  # $(…) drops the last newlines
    return m.group(0) if printed is None or not _plain(printed) else f'{m.group(1)}="{printed}"'


def _plain(value: str) -> bool:
    """A value that can be written between double quotes as it is: no quote, escape or expansion but ``$HOME``."""
    return not re.search(r'["`\\]|\$(?!HOME\b)', value.replace("\\n", ""))


def _printf_as_assignment(m: re.Match[str]) -> str:
    """``printf -v t FORMAT ARGS``: ``t`` set to what printf prints, when the arguments are plain words."""
    try:
        args = shlex.split(m.group(3))
    except ValueError:
        return m.group(0)
    if re.search(r"[`]|\$\(", m.group(3)):
        return m.group(0)  # an argument read here no further
    filled = _filled(_unquoted(m.group(2)), args)
    return m.group(0) if filled is None or not _plain(filled) else f'{m.group(1)}="{filled}"'


def _filled(fmt: str, args: list[str]) -> str | None:
    """What ``printf FMT ARGS`` prints (its ``%s``-like conversions; None for others)."""
    args = ["$HOME" + a[1:] if a == "~" or a.startswith("~/") else a for a in args]
    specs = re.findall(r"%[-+ #0-9.]*[a-zA-Z%]", fmt)
    if any(s[-1] not in "sqbd%" for s in specs):
        return None
    given = iter(args)
    return re.sub(r"%[-+ #0-9.]*[sqbd%]", lambda s: "%" if s.group(0) == "%%" else next(given, ""), fmt)


def _split_on_ifs(script: str) -> str:
    """After ``IFS=X`` (a statement of its own), a value with an ``X`` in it and no blank, expanded
    unquoted, is split there: written as an array of its words, and its unquoted uses as the array's."""
    m = _IFS_SET.search(script)
    if m is None:
        return script
    chars = _ifs_chars(m.group(1)).replace(" ", "")
    if not chars or not chars.strip():
        return script
    head, tail = script[: m.end()], script[m.end() :]
    lists: list[str] = []

    def split(a: re.Match[str]) -> str:
        value = a.group(2)
        if a.group(1) == "IFS" or not any(ch in value for ch in chars):
            return a.group(0)
        words = [w for w in re.split("[" + re.escape(chars) + "]+", value.strip("'\"")) if w]
        lists.append(a.group(1))  # its unquoted expansion is these words: an array's, as the rules read one
        return a.group(0)[: a.start(2) - a.start(0)] + "(" + " ".join(f'"{w}"' for w in words) + ")"

    tail = _ASSIGN.sub(split, tail, count=_MOST)
    for name in lists:  # $t unquoted: the words; "$t" quoted stays one word
        tail = re.sub(rf'(?<!["\w])\$(?:{name}\b|\{{{name}\}})(?!")', lambda _: '"${' + name + '[@]}"', tail)  # noqa: B023
    return head + tail
