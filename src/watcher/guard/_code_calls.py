"""What inline code does to files through its language's own calls: the permissions it changes
(``os.chmod``, ``FileUtils.chmod_R``, ``fs.chmodSync``, Perl's ``chmod``), written out as the
``chmod``/``chown`` commands they amount to so the permission rules judge them as they judge the
shell's, and the files it opens to write (``code_writes``).

A call inside a walk of a tree (``os.walk('/etc')``, ``Find.find``, ``fs.readdirSync(…, {recursive``)
changes the whole tree: ``chmod -R``. Only literal paths (and the home, as ``readable_code`` writes
it: ``'~'``) are read; a path computed at run time is not known here."""

from __future__ import annotations

import re

from watcher.guard._lazy import lazy

__all__ = ["code_writes", "file_calls"]

_PATH = r"""[fFrRbB]{0,2}['"`]([^'"`\n]{1,300})['"`]"""
_MODE = r"(0o[0-7]{3,4}|0[0-7]{3,4}|[1-9]\d{0,3}|['\"][0-7]{3,4}['\"])"
# (pattern, program, recursive, (the path's group, the mode's group))
_CALLS = (
    (lazy(rf"\bl?chmod(?:Sync)?\(\s*{_PATH}\s*,\s*{_MODE}"), "chmod", False, (1, 2)),  # Python, Node (fs.chmodSync)
    (lazy(rf"\bFileUtils\.chmod_R\(\s*{_MODE}\s*,\s*{_PATH}"), "chmod", True, (2, 1)),  # Ruby
    (lazy(rf"\b(?:FileUtils|File)\.chmod\(\s*{_MODE}\s*,\s*{_PATH}"), "chmod", False, (2, 1)),
    (lazy(rf"\bchmod\s*\(?\s*{_MODE}\s*,\s*{_PATH}"), "chmod", False, (2, 1)),  # Perl
)
_CHOWN_R = lazy(rf"\bFileUtils\.chown_R\(\s*([^,()]+(?:\([^()]*\))?[^,()]*)\s*,\s*[^,]+,\s*{_PATH}")
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
    out += [
        ("chown", "-R", re.sub(r"\W+", "_", m.group(1)).strip("_") or "user", m.group(2))
        for m in _CHOWN_R.finditer(code)
    ]
    return out[:32]


# the files inline code opens to write: open(P, 'w'), Path(P).write_text, fs.writeFileSync(P),
# File.write(P), os.open(P, O_WRONLY), Perl's open(F, '>', P) and open(F, ">P"); in each pattern,
# group 1 is the path as written, group 2 (when there is one) a variable holding it
_LIT = r"""(?:[fFrRbB]{0,2}['"]([^'"\n]{1,300})['"]|\$?([A-Za-z_]\w*))"""
_CODE_WRITES = tuple(
    lazy(pattern)
    for pattern in (
        rf"""\b(?:open|File\.open|io\.open|codecs\.open)\(\s*{_LIT}\s*,\s*(?:mode\s*=\s*)?['"](?=[rbtU]*[wax+])[rwxabtU+]{{1,4}}['"]""",
        rf"""(?:writeFileSync|appendFileSync|writeFile|appendFile|createWriteStream|File\.write|IO\.write|Path)\(\s*{_LIT}\s*\)?(?:\.write_(?:text|bytes)|[,)])""",
        r"""[fFrRbB]{0,2}['"]([^'"\n]{1,300})['"]\s*\.(?:write_text|write_bytes|open\(\s*['"][wa])""",  # '~/.x'.write_text(…)
        rf"""\bos\.open\(\s*{_LIT}\s*,[^)]{{0,80}}O_(?:WRONLY|RDWR|TRUNC|APPEND)""",  # os.open('/dev/sda', os.O_WRONLY)
        rf"""\bopen\s*\(?\s*(?:my\s+)?\$?\w+\s*,\s*['"]>>?['"]\s*,\s*{_LIT}""",
        r"""\bopen\s*\(?\s*(?:my\s+)?\$?\w+\s*,\s*['"]>>?\s*([^'"\n$]{1,300})['"]""",
        rf"""\b(?:file_put_contents|fopen|(?:fs\.)?openSync|fs\.open|fsp?\.(?:promises\.)?open)\(\s*{_LIT}\s*(?:\)|,\s*(?!['"][rR]['"])(?:['"][wWaAxX+]|[^,)]))""",  # PHP, Node
        r"""(?i)\b(?:Set-Content|Add-Content|Out-File)\b[^|;\n]*?-(?:Path|FilePath|LiteralPath)\s+['"]?([^'"\s;|]+)""",  # PowerShell
        # a copy or move onto a path: shutil.copy(src, '~/.bashrc'), fs.copyFileSync, FileUtils.cp, os.replace
        rf"""(?:\bshutil\.(?:copy2?|copyfile|move)|\bos\.(?:rename|replace)|copyFileSync|renameSync|\bcp|\bmv"""
        rf"""|FileUtils\.(?:cp|mv|copy|move|install)|File\.rename|\bcopy|\brename)\(\s*[^,()\n]{{1,300}},\s*{_LIT}\s*[,)]""",
    )
)


def code_writes(code: str) -> list[str]:
    """The paths inline code opens to write: written in the call, or set to a variable it is given
    (``p = os.path.expanduser('~/.claude/settings.json'); json.dump(d, open(p, 'w'))``)."""
    out = []
    for pattern in _CODE_WRITES:
        for m in pattern.finditer(code):
            literal, name = m.group(1), m.group(2) if pattern.groups > 1 else None
            if literal:
                out.append(literal)
            elif name:  # p = '…', p = os.path.expanduser('…'), p = Path('…'): the last value set
                values = re.findall(
                    rf"(?<![\w.]){re.escape(name)}\s*=\s*(?:[\w.]+\(\s*)?['\"]([^'\"\n]{{1,300}})['\"]", code
                )
                out += values[-1:]
    return out
