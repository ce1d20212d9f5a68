"""A shell script's own path, as it runs: ``$0`` and ``${BASH_SOURCE[0]}`` are the script, and the
idioms that find its folder from them (``$(dirname "$0")``, ``$(cd "$(dirname "$0")/.." && pwd)``,
``$(realpath …)``) are worked out. So ``ROOT=$(cd "$(dirname "$0")/.." && pwd); rm -rf "$ROOT"`` is
judged as the folder it names: the project's parent for a script at the project's root."""

from __future__ import annotations

import posixpath
import re

from watcher.guard._lazy import lazy
from watcher.guard._paths import FOLDER_OF

__all__ = ["with_own_path"]

_SELF = lazy(r"\$\{BASH_SOURCE(?:\[0\])?\}|\$BASH_SOURCE\b|\$\{0\}|\$0(?!\w)")
_INNERMOST = lazy(r"\$\(([^()]*)\)")  # a $(…) holding no other
_ROUNDS = 6  # nested as deep as `$(cd "$(dirname "$(realpath "$0")")/.." && pwd)`, and a little more


def with_own_path(script: str, path: str) -> str:
    """``script`` (run from the file at ``path``) with its own path in place of ``$0``, and the folders
    found from it written out."""
    if not _SELF.search(script) or re.search(r"[\s\"'$`\\]", path):
        return script
    text = _SELF.sub(path, script)
    for _ in range(_ROUNDS):  # innermost first: the dirname, then the cd … && pwd around it
        done = _INNERMOST.sub(_folder, text)
        if done == text:
            break
        text = done
    return text


def _folder(m: re.Match[str]) -> str:
    """The folder a ``$(dirname P)``, ``$(realpath P)`` or ``$(cd P && pwd)`` of a written-out path
    prints; any other substitution as it stands."""
    found = FOLDER_OF.fullmatch(m.group(1).strip())
    if found is None:
        return m.group(0)
    word = (found.group("arg") or found.group("cd")).strip()
    if len(word) > 1 and word[0] == word[-1] and word[0] in "\"'":
        word = word[1:-1]
    if not word or re.search(r"[\"'$`\s;&|]", word):
        return m.group(0)  # not one written-out path
    return (posixpath.dirname(word.rstrip("/")) or ".") if found.group("dir") else posixpath.normpath(word)
