"""A shell script's own path, as it runs: ``$0`` and ``${BASH_SOURCE[0]}`` are the script, and the
idioms that find its folder from them (``$(dirname "$0")``, ``$(cd "$(dirname "$0")/.." && pwd)``,
``$(realpath …)``) are worked out. So ``ROOT=$(cd "$(dirname "$0")/.." && pwd); rm -rf "$ROOT"`` is
judged as the folder it names: the project's parent for a script at the project's root."""

from __future__ import annotations

import posixpath
import re

from watcher.guard._lazy import lazy

__all__ = ["with_own_path"]

_SELF = lazy(r"\$\{BASH_SOURCE(?:\[0\])?\}|\$BASH_SOURCE\b|\$\{0\}|\$0(?!\w)")
_PATH = r"""(["']?)([^"'$`()\s;&|]+)\1"""
_DIRNAME = lazy(rf"\$\(\s*dirname\s+(?:--\s+)?{_PATH}\s*\)")
_REAL = lazy(rf"\$\(\s*(?:realpath|readlink\s+-[fem]+)\s+(?:--\s+)?{_PATH}\s*\)")
_CD_PWD = lazy(rf"\$\(\s*(?:builtin\s+)?cd\s+(?:-[PL]\s+)?(?:--\s+)?{_PATH}\s*(?:&&|;)\s*pwd(?:\s+-[PL])?\s*\)")
_ROUNDS = 6  # nested as deep as `$(cd "$(dirname "$(realpath "$0")")/.." && pwd)`, and a little more


def with_own_path(script: str, path: str) -> str:
    """``script`` (run from the file at ``path``) with its own path in place of ``$0``, and the folders
    found from it written out."""
    if not _SELF.search(script) or re.search(r"[\s\"'$`\\]", path):
        return script
    text = _SELF.sub(path, script)
    for _ in range(_ROUNDS):  # innermost first: the dirname, then the cd … && pwd around it
        done = _DIRNAME.sub(lambda m: posixpath.dirname(m.group(2).rstrip("/")) or ".", text)
        done = _REAL.sub(lambda m: posixpath.normpath(m.group(2)), done)
        done = _CD_PWD.sub(lambda m: posixpath.normpath(m.group(2)), done)
        if done == text:
            break
        text = done
    return text
