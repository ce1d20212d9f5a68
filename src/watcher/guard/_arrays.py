"""A shell array written out where it is used: ``dirs=("$HOME/.cache" "$HOME")`` then ``rm -rf
"${dirs[@]}"`` is read as ``rm -rf "$HOME/.cache" "$HOME"`` (``"${dirs[0]}"`` as its first word), so
the rules judge each path the command is given. Words added later (``dirs+=(~)``) or set again are
added, in the order written, whatever branch they are in: every word the array may hold is judged."""

from __future__ import annotations

import re
import shlex
from itertools import islice

from watcher.guard._lazy import lazy

__all__ = ["arrays_in_place"]

_MOST = 64  # assignments read: a line of thousands of them must cost one pass
# name=( words ) or name+=( words ), on one line or several, the words plain or quoted (no command substitution)
_SET = lazy(r"""(?:^|[\s;&|{])(?:local\s+|declare\s+-a\s+|readonly\s+)?([A-Za-z_]\w*)(\+?)=\(([^()`]{0,2000})\)""")
_WORD = lazy(r"""(?:"(?:[^"\\]|\\.)*"|'[^']*'|[^\s"']+)+""")


def arrays_in_place(script: str) -> str:
    """``script`` with each array it sets (and adds to) written out where it is expanded: ``"${a[@]}"``
    as its words, each quoted as written; inside a longer string, as their text."""
    if "[@]" not in script and "[*]" not in script and "[0]" not in script:
        return script
    arrays: dict[str, list[str]] = {}
    lost: set[str] = set()
    for m in islice(_SET.finditer(script), _MOST):
        name, text = m.group(1), m.group(3)
        try:
            shlex.split(text)  # words that split as the shell splits them
        except ValueError:
            lost.add(name)
            continue
        arrays.setdefault(name, []).extend(_WORD.findall(text))  # set again: every list it may hold
    for name, words in arrays.items():
        if name in lost or re.search(rf"(?<![\w$]){name}=[^(]", script):
            continue
        for index, chosen in (("[@*]", words), ("0", words[:1])):
            if not chosen:
                continue
            written = " ".join(chosen).replace("\\", "\\\\")
            text = " ".join(w.strip("\"'") for w in chosen).replace("\\", "\\\\")
            script = re.sub(rf'"\$\{{{name}\[{index}\]\}}"', written, script)  # "${a[@]}": the words
            script = re.sub(rf"\$\{{{name}\[{index}\]\}}", text, script)  # "x ${a[@]}": their text
    return script
