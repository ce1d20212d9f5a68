"""Permission changes inline code makes through its language's own calls (``os.chmod``,
``FileUtils.chmod_R``, ``fs.chmodSync``, Perl's ``chmod``), written out as the ``chmod``/``chown``
commands they amount to, so the permission rules judge them as they judge the shell's.

A call inside a walk of a tree (``os.walk('/etc')``, ``Find.find``, ``fs.readdirSync(…, {recursive``)
changes the whole tree: ``chmod -R``. Only literal paths (and the home, as ``readable_code`` writes
it: ``'~'``) are read; a path computed at run time is not known here."""

from __future__ import annotations

import re

from watcher.guard._lazy import lazy

__all__ = ["file_calls"]

_PATH = r"""[fFrRbB]{0,2}['"`]([^'"`\n]{1,300})['"`]"""
_MODE = r"(0o[0-7]{3,4}|0[0-7]{3,4}|[1-9]\d{0,3}|['\"][0-7]{3,4}['\"])"
# (pattern, program, recursive, (the path's group, the mode's group))
_CALLS = (
    (lazy(rf"\bl?chmod(?:Sync)?\(\s*{_PATH}\s*,\s*{_MODE}"), "chmod", False, (1, 2)),  # Python, Node (fs.chmodSync)
    (lazy(rf"\bFileUtils\.chmod_R\(\s*{_MODE}\s*,\s*{_PATH}"), "chmod", True, (2, 1)),  # Ruby
    (lazy(rf"\b(?:FileUtils|File)\.chmod\(\s*{_MODE}\s*,\s*{_PATH}"), "chmod", False, (2, 1)),
    (lazy(rf"\bchmod\s*\(?\s*{_MODE}\s*,\s*{_PATH}"), "chmod", False, (2, 1)),  # Perl
)
_CHOWN_R = lazy(rf"\bFileUtils\.chown_R\(\s*['\"]?(\w+)['\"]?\s*,\s*[^,]+,\s*{_PATH}")
_WALK = lazy(rf"\b(?:os\.walk|Find\.find|Dir\.glob|glob\.glob|rglob|walkSync|readdirSync)\(\s*{_PATH}")


def _octal(mode: str) -> str:
    mode = mode.strip("'\"")
    if mode.startswith("0o"):
        return mode[2:]
    if mode.startswith("0") or (len(mode) == 3 and all(c in "01234567" for c in mode) and mode.startswith(("6", "7"))):
        return mode.lstrip("0") or "0"  # 0777; a Ruby or Perl mode written 777 by mistake reads the same
    return format(int(mode), "o")  # 511: decimal, as Python and Node take a bare integer


def file_calls(code: str) -> list[tuple[str, ...]]:
    """The ``chmod``/``chown`` commands ``code``'s own calls amount to (recursive inside a walk)."""
    if "chmod" not in code and "chown" not in code:
        return []
    walked = [m.group(1) for m in _WALK.finditer(code)]
    out: list[tuple[str, ...]] = []
    for pattern, program, recursive, (path_group, mode_group) in _CALLS:
        for m in pattern.finditer(code):
            out.append((program, *(["-R"] if recursive else []), _octal(m.group(mode_group)), m.group(path_group)))
    if walked and "chmod" in code:  # os.chmod(os.path.join(root, f), 0o777) inside os.walk('/etc')
        modes = re.findall(rf"chmod\w*\((?:[^()]|\([^()]*\))*?,\s*{_MODE}\s*\)", code) or re.findall(
            rf"chmod\w*\(\s*{_MODE}", code
        )
        out += [("chmod", "-R", _octal(mode), root) for root in walked for mode in modes[:1]]
    out += [("chown", "-R", m.group(1), m.group(2)) for m in _CHOWN_R.finditer(code)]
    return out[:32]
