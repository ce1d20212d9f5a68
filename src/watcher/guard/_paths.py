"""Where a path points, seen from the session: resolved against its ``cwd`` and the user's home,
and what it is (the filesystem root, a system tree, the home, the project, a secret, a setting).

Paths are resolved as text (``~``, ``$HOME``, ``$PWD``, ``..``), so a verdict is the same whether
or not the file exists yet. The project is the session's ``cwd``. Where a path is judged, the rules
also ask ``Place.on_disk`` where it really is: a symbolic link an earlier call made (``ln -s ~ h``,
then ``rm -rf h/``) exists by then. (The guard's other reads of the disk: a script a command runs,
in ``_ran``; a file whose content tells whether it is a secret, in ``_files``.)
"""

from __future__ import annotations

import functools
import os
import re
import stat
from fnmatch import translate
from typing import Any, NamedTuple

__all__ = ["FOLDER_OF", "UNSET", "Place", "glob_parent", "matches_any"]

UNSET = "\0unset"  # a path made of a variable nobody set: empty, so `$DIR/` is `/`
_HOME_VARS = re.compile(
    r"^(?:~(?=/|$)|\$HOME\b|\$\{HOME(?::?[?=+-][^}]*)?\}|(?i:\$env:(?:USERPROFILE|HOME))\b|\$USERPROFILE\b)"
)  # %USERPROFILE% reaches here as $USERPROFILE
_PWD_VARS = re.compile(r"^(?:\$PWD\b|\$\{PWD(?::?[?=+-][^}]*)?\}|\$\(pwd\)|`pwd`)")
_TOP_VARS = re.compile(r"^(?:\$\(git rev-parse --show-toplevel\)|`git rev-parse --show-toplevel`)")
_LEAD_VAR = re.compile(r"^\$(?:\{(?P<b>[A-Za-z_]\w*|\d+)(?P<op>[:?=+-][^}]*)?\}|(?P<p>[A-Za-z_]\w*|\d))")
_TEMP_VARS = frozenset({"TMPDIR", "TMP", "TEMP", "RUNNER_TEMP"})
# what is inside $(dirname W), $(realpath W), $(readlink -f W), $(cd W && pwd): a folder worked out from
# a word (here as the line names it, in _own_path from a script's own path)
FOLDER_OF = re.compile(
    r"(?:(?P<dir>dirname)|realpath|readlink\s+-[fem]+)\s+(?:--\s+)?(?P<arg>.+)"
    r"|(?:builtin\s+)?cd(?:\s+-[PL])?\s+(?:--\s+)?(?P<cd>.+?)\s*(?:&&|;)\s*pwd(?:\s+-[PL])?",
    re.DOTALL,
)
_OTHER_HOMES = ("/home/[!/]*", "/Users/[!/]*", "/root", "/[A-Z]:/Users/[!/]*")  # the last: a Windows path
# any of them, as the start of an expression (fnmatch's `*` crosses folders: /home/a/b/.ssh too)
_OTHER_HOME = "(?:" + "|".join(translate(h).removesuffix(r"\Z") for h in _OTHER_HOMES) + ")"
_WHOLE_GLOB = frozenset({"*", ".*", "**", "*.*", "{*,.*}", ".[!.]*", "..?*", "[!.]*", "?*", ".??*", "*/"})


def _drive(path: str) -> str:
    """A Windows path (``C:\\Users\\x``, ``C:/x``, ``%USERPROFILE%``) as an absolute path here: ``/C:/Users/x``."""
    if len(path) >= 2 and path[1] == ":" and path[0].isalpha() and (len(path) == 2 or path[2] in "/\\"):
        return "/" + path[0].upper() + ":" + path[2:].replace("\\", "/")
    if path[:5].lower() == "$env:":  # PowerShell's $env:USERPROFILE\.aws\credentials
        return path.replace("\\", "/")
    if path.startswith("%") and "%" in path[1:]:
        return "$" + path[1:].split("%", 1)[0] + path[1:].split("%", 1)[1].replace("\\", "/")
    return path


class Place(NamedTuple):
    """The session's point of view: its working directory (the project) and the user's home."""

    cwd: str
    home: str
    root: str = ""  # the project: the session's cwd, where a `cd` in the command line does not move it
    values: tuple[tuple[str, str], ...] = ()  # variables the command line sets to a written-out path
    links: tuple[tuple[str, str], ...] = ()  # symbolic links the command line makes: (link, the path it points to)

    @property
    def project(self) -> str:
        return self.root or self.cwd

    def moved(self, word: str) -> Place:
        """This place after ``cd word``."""
        target = self.home if word in ("", "~") else self.resolve(word)
        return (
            self if target == UNSET or word == "-" else Place(target, self.home, self.project, self.values, self.links)
        )

    @classmethod
    def of(cls, cwd: str, home: str | None = None) -> Place:
        _REAL.clear()  # a new call: the disk may have changed since the last one
        home = os.path.normpath(_drive(home or os.path.expanduser("~")))
        return cls(os.path.normpath(os.path.expanduser(_drive(cwd) or home)), home)

    def resolve(self, word: str, assigned: frozenset[str] = frozenset()) -> str:
        """``word`` as an absolute, normalised path (``UNSET`` when it starts with an unset variable)."""
        text = _drive(word.strip())
        if text.startswith("~") and not _HOME_VARS.match(text):
            user = text[1:].split("/", 1)[0]  # ~alice/x
            text = os.path.join("/root" if user == "root" else f"/home/{user}", text[len(user) + 2 :])
        if text.startswith("$(") and (found := self._folder_of(text, assigned)) is not None:
            return found
        if text.startswith("${!") and (m := _INDIRECT.match(text)):
            named = dict(self.values).get(m[1], "")  # v=HOME; ${!v}: the variable v names
            if re.fullmatch(r"[A-Za-z_]\w*", named):
                return self.resolve("${" + named + "}" + text[m.end() :], assigned)
        if text.startswith("${") and (m := _CHANGED_VAR.match(text)) and (value := self._value_of(m["n"])):
            changed = _changed(value, m["op"])  # ${HOME%/*}: the home's value, changed as the shell changes it
            if changed is not None:
                return self.resolve(changed + text[m.end() :], assigned)
        text = _HOME_VARS.sub(lambda _: self.home, text, count=1)
        text = _PWD_VARS.sub(lambda _: self.cwd, text, count=1)
        text = _TOP_VARS.sub(lambda _: self.project, text, count=1)
        m = _LEAD_VAR.match(text)
        if m:
            name, op = m.group("b") or m.group("p"), m.group("op") or ""
            value = dict(self.values).get(name)
            if value is None and name not in assigned:
                if op.startswith((":-", "-", ":=", "=")) and op.lstrip(":")[1:]:
                    value = op.lstrip(":")[1:]  # ${TMPDIR:-/tmp}: the default, since nothing set it here
                elif name in _TEMP_VARS:
                    value = "/tmp"  # the system's temporary folder, set by the OS or the user's session
            rest = text[m.end() :]
            if value is not None and not value.startswith("$"):
                if rest and not rest.startswith("/"):  # x=.en; ${x}v: the value and the rest make one name
                    return self.resolve(value + rest, assigned)
                return self.resolve(value.rstrip("/") + "/" + rest.lstrip("/"), assigned)
            if op.startswith((":?", "?")) or name in assigned:
                return os.path.join(self.cwd, "{set-variable}", text[m.end() :].lstrip("/"))
            if text[m.end() :].strip("/*") == "":
                return UNSET
            text = "/" + text[m.end() :].lstrip("/")  # $UNSET/etc -> /etc: what runs when it is empty
        if text.startswith("file://"):
            text = text[len("file://") :]
        path = os.path.normpath(os.path.join(self.cwd, text))
        return self._through_links(path, text) if self.links else path

    def _through_links(self, path: str, text: str) -> str:
        """``path`` through a link the line makes (``ln -s ~ h && rm -rf h/``): what is under the link
        is what it points to; the link itself, named without a trailing ``/``, is only the link."""
        for link, target in self.links:
            if path.startswith(link.rstrip("/") + "/"):
                return os.path.normpath(target + path[len(link.rstrip("/")) :])
            if path == link and text.rstrip().endswith(("/", "/.", "/*")):
                return target
        return path

    def on_disk(self, path: str, *, last: bool = False) -> str:
        """Where ``path`` really is: through the symbolic links of the folders on its way that exist
        (``h/x`` with ``h`` a link to the home is ``~/x``), and of its last name too when ``last`` (a read or
        a write goes through a link; a delete of the link itself does not). The path as written when no link
        is on its way, or nothing of it exists. The project and the home are taken as they are named:
        a session in ``/tmp/p`` where ``/tmp`` is a link still works in ``/tmp/p``."""
        if path == UNSET or not path.startswith("/") or path.startswith(_NOT_FOLLOWED) or "{set-variable}" in path:
            return path
        folder, name = (path, "") if last else os.path.split(path)
        real = _REAL.get(folder)
        if real is None:
            real = _REAL[folder] = self._real_folder(folder)
        if real == folder:
            return path
        return os.path.join(real, name) if name else real

    def _real_folder(self, folder: str) -> str:
        """``folder`` through the first link on its way below the project or the home (or ``/``)."""
        anchor = max(
            (a for a in (self.project, self.home) if folder == a or folder.startswith(a.rstrip("/") + "/")),
            key=len,
            default="/",
        )
        current = anchor
        parts = folder[len(anchor) :].strip("/").split("/")
        for n, part in enumerate(p for p in parts if p):
            current = os.path.join(current, part)
            try:
                if not stat.S_ISLNK(os.lstat(current).st_mode):
                    continue
            except OSError:
                return folder  # missing from here on: as written
            real = os.path.realpath(os.path.join(current, *[p for p in parts if p][n + 1 :]))
            for named in sorted((self.project, self.home), key=len, reverse=True):  # its real name, as named here
                seen = _REAL.get("\0" + named) or _REAL.setdefault("\0" + named, os.path.realpath(named))
                if named != "/" and (real == seen or real.startswith(seen.rstrip("/") + "/")):
                    return named + real[len(seen) :]
            return real
        return folder

    def _folder_of(self, text: str, assigned: frozenset[str]) -> str | None:
        """``$(dirname "$(pwd)")/x`` and the like as the path they print, followed by the rest of the
        word; None when the substitution is none of those, or its word is not known here."""
        end = _closing(text)
        m = FOLDER_OF.fullmatch(text[2:end].strip()) if end > 0 else None
        if m is None:
            return None
        arg = bare = (m.group("arg") or m.group("cd")).replace('"', "")
        while (inner := re.sub(r"\$\([^()]*\)", "", bare)) != bare:  # its own $(…), innermost first
            bare = inner
        if re.search(r"\s", bare) or "'" in arg or "`" in arg:
            return None  # more than one word
        path = self.resolve(arg, assigned)
        if path == UNSET or "{set-variable}" in path or "$" in path:
            return None  # a word not known here (a variable nobody set, a command's output): nor is its folder
        folder = os.path.dirname(path) if m.group("dir") else path
        rest = text[end + 1 :]
        return self.resolve(folder + "/" + rest.lstrip("/"), assigned) if rest else folder

    def _value_of(self, name: str) -> str | None:
        """The value of the variable ``name`` known here: the home, the working folder, or one the line sets."""
        if name in ("HOME", "USERPROFILE"):
            return self.home
        if name == "PWD":
            return self.cwd
        value = dict(self.values).get(name)
        return value if value and not value.startswith("$") else None

    def known(self, word: str) -> bool:
        """Whether ``word`` starts with a variable whose value is known here: the home, the working
        folder, the repository's top, or one the line sets to a written-out path."""
        if _HOME_VARS.match(word) or _PWD_VARS.match(word) or _TOP_VARS.match(word):
            return True
        m = _LEAD_VAR.match(word)
        return m is not None and (m.group("b") or m.group("p")) in dict(self.values)

    def inside_project(self, path: str) -> bool:
        return self.project not in ("/", self.home) and path.startswith(self.project.rstrip("/") + "/")

    def holds_project(self, path: str) -> bool:
        """``path`` is the project or one of the folders above it."""
        return path == self.project or self.project.startswith(path.rstrip("/") + "/")

    def in_home(self, path: str) -> str | None:
        """``path`` relative to the home, or None outside it."""
        if path == self.home:
            return ""
        prefix = self.home.rstrip("/") + "/"
        return path[len(prefix) :] if path.startswith(prefix) else None

    def expand(self, pattern: str) -> str:
        return self.home + pattern[1:] if pattern.startswith("~") else pattern


_REAL: dict[str, str] = {}  # folders of this call -> where they really are (a link is followed once per call)
_NOT_FOLLOWED = ("/dev/", "/proc/", "/sys/")  # /dev/stdout is a link to the terminal: a device is judged by its name

_INDIRECT = re.compile(r"^\$\{!([A-Za-z_]\w*)\}")  # ${!v}: the value of the variable whose name v holds
# ${NAME#pat} ${NAME%%pat} ${NAME/pat/new} ${NAME:1:4} ${NAME^^}: a known value, changed by the shell
_CHANGED_VAR = re.compile(r"^\$\{(?P<n>[A-Za-z_]\w*)(?P<op>(?:##?|%%?|//?|:\s*\d|:\s+-\d|\^\^?|,,?)[^}]*)\}")


def _glob_re(pattern: str) -> str:
    """A shell pattern as a regular expression (``*`` ``?`` ``[…]``, the rest literal)."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "[" and (end := pattern.find("]", i + 2)) > 0:
            inside = pattern[i + 1 : end]
            out.append("[" + ("^" + inside[1:] if inside[:1] == "!" else inside).replace("\\", "\\\\") + "]")
            i = end
        elif ch == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def _changed(value: str, op: str) -> str | None:
    """``value`` after the expansion operator ``op`` (``%/*``, ``##*/``, ``/a/b``, ``:0:5``, ``^^``);
    None for one not worked out here."""
    try:
        if op[0] in "#%":
            longest = op[:2] in ("##", "%%")
            pattern = re.compile(_glob_re(op[2 if longest else 1 :]), re.S)
            ends = range(len(value) + 1)
            if op[0] == "#":  # a prefix: the shortest (or longest) that matches goes
                cuts = [n for n in ends if pattern.fullmatch(value[:n])]
                return value[(max(cuts) if longest else min(cuts)) :] if cuts else value
            cuts = [n for n in ends if pattern.fullmatch(value[n:])]  # a suffix
            return value[: (min(cuts) if longest else max(cuts))] if cuts else value
        if op[0] == "/":
            every = op.startswith("//")
            pattern_text, _, new = op[2 if every else 1 :].partition("/")
            if not pattern_text:
                return value
            anchor = {"#": "^", "%": "$"}.get(pattern_text[0], "") if not every else ""
            body = _glob_re(pattern_text[1:] if anchor else pattern_text)
            expression = "^" + body if anchor == "^" else body + "$" if anchor else body
            return re.sub(expression, lambda _: new, value, count=0 if every else 1, flags=re.S)
        if op[0] == ":":
            parts = [p.strip() for p in op[1:].split(":")]
            start = int(parts[0])
            length = int(parts[1]) if len(parts) > 1 and parts[1] else None
            part = value[start:]
            return part if length is None else part[:length]  # a negative length counts from the end
        if op[0] in "^,":
            change = str.upper if op[0] == "^" else str.lower
            return change(value) if len(op) == 2 else change(value[:1]) + value[1:]
    except (ValueError, re.error):
        return None
    return None


def _closing(text: str) -> int:
    """The index of the ``)`` that closes the ``$(`` ``text`` starts with; -1 when none does."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def glob_parent(word: str) -> tuple[str, bool]:
    """(the folder a glob lists, whether it names everything in it): ``build/*`` -> (``build``, True)."""
    if re.search(r"\$\{[^}]*\}", word) and not re.search(r"[*?\[]", re.sub(r"\$\{[^}]*\}", "", word)):
        return word, False  # ${VAR:?} is an expansion, not a glob
    head, _, last = word.rstrip("/").rpartition("/") if "/" in word.rstrip("/") else ("", "", word.rstrip("/"))
    if last in _WHOLE_GLOB:
        while head.rpartition("/")[2] in ("*", "**") and head:  # **/*, */*: every entry of every folder under it
            head = head.rpartition("/")[0] if "/" in head else ""
        return head or ("/" if word.startswith("/") else "."), True
    if any(ch in last for ch in "*?["):
        return head or ("/" if word.startswith("/") else "."), False
    return word, False


def matches_any(place: Place, path: str, patterns: list[str] | Any) -> bool:
    """``path`` matches one of ``patterns``: a bare name matches the file name, others the path."""
    names, paths, exact = _matcher(tuple(patterns), place.home)
    return bool(
        (names is not None and names.match(path.rsplit("/", 1)[-1]))
        or (paths is not None and paths.match(path))
        or path in exact
    )


@functools.lru_cache(maxsize=256)
def _matcher(
    patterns: tuple[str, ...], home: str
) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None, frozenset[str]]:
    """``patterns`` as one expression for the file name, one for the path, and the paths they name exactly.

    A pack's list is a few dozen globs and every path of a call is matched against several lists:
    one expression each instead of a ``fnmatch`` per glob (the same answers).
    """
    names: list[str] = []
    paths: list[str] = []
    exact: set[str] = set()
    for pattern in patterns:
        if "/" not in pattern:
            names.append(translate(pattern))
            continue
        full = home + pattern[1:] if pattern.startswith("~") else pattern
        if full.startswith("**/"):
            paths += [translate("*/" + full[3:]), translate(full[3:])]
            continue
        paths.append(translate(full))
        exact.add(full.rstrip("/*"))
        if pattern.startswith("~/"):  # another account's copy: /home/alice/.kube/config is a credential too
            paths.append(_OTHER_HOME + translate(pattern[1:]))
    return (
        re.compile("|".join(names)) if names else None,
        re.compile("|".join(paths)) if paths else None,
        frozenset(exact),
    )


def under_any(place: Place, path: str, folders: list[str]) -> bool:
    """``path`` is one of ``folders`` or inside one (another account's copy of a ``~/`` folder too)."""
    return bool(_folders(tuple(folders), place.home).match(path))


@functools.lru_cache(maxsize=64)
def _folders(folders: tuple[str, ...], home: str) -> re.Pattern[str]:
    """``folders`` as one expression: each folder itself or anything in it (``rm`` of 200 files
    asks it 800 times; one expression instead of a glob per folder and account)."""
    parts = []
    for folder in folders:
        full = (home + folder[1:] if folder.startswith("~") else folder).rstrip("/")
        parts.append(re.escape(full) + r"(?:/.*)?\Z")
        if folder.startswith("~/"):
            parts.append(_OTHER_HOME + translate(folder[1:].rstrip("/")).removesuffix(r"\Z") + r"(?:/.*)?\Z")
    return re.compile("|".join(f"(?:{p})" for p in parts) or r"(?!)", re.S)
