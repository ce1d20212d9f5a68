"""Scripts a command runs from a file: ``bash x.sh``, ``source x``, ``./x.sh``, ``python x.py``,
``node x.js``, a notebook executed (``jupyter nbconvert --execute``, ``papermill``, ``ipython``), SQL
a database client runs (``psql -f x.sql``, ``mysql db < x.sql``).

The file's text is the command, so it is judged as the line would be: taken from the same line when
the line writes the file first (``cat > x.sh <<EOF … EOF; bash x.sh``), else read from the disk (a
file an earlier call wrote). This is the guard's one read of the disk for a verdict. Only a script
the session has just written is read: one changed in the last 30 minutes, of at most 16 KB, in the
project, the home or a temporary folder (not in a dot folder or installed packages). The project's
own scripts and installed programs are not: the rules are made for the commands an agent writes,
and read whole programs written for other purposes (a build script, a library) they would deny
work that is fine. A script that is not there yet, or not text, is judged by its command line alone.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from typing import NamedTuple

from watcher.guard._context import INTERPRETERS
from watcher.guard._files import regular_text
from watcher.guard._lazy import lazy
from watcher.guard._paths import Place
from watcher.guard._simple import SHELLS, Command, skip_options

__all__ = ["Ran", "notebook_parts", "notebook_run", "readable", "runner_of", "script_ran", "without_notes"]

# a script read from the disk: one written (or changed) this recently, and this small, is taken as
# one the session wrote to run; the project's own scripts and programs are judged by their line
MAX_SCRIPT_BYTES = 16 * 1024
RECENT_S = 30 * 60
_TEMP_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm", "/private/tmp")
_SH_FAMILY = frozenset(SHELLS - {"powershell", "pwsh", "cmd", "fish", "busybox"}) | {"source", "."}
_PY_LAUNCHERS = frozenset({"uv", "pdm", "rye", "pipx"})  # `uv run x.py`: a .py file is run with Python
_FILE_INTERPRETERS = frozenset({"python", "python2", "python3", "perl", "ruby", "node", "php", "bun", "Rscript"})
# database clients that run a file of SQL: the options that name it (and any client fed one by `<`)
_SQL_FILE_CLIENTS: dict[str, frozenset[str]] = {
    "psql": frozenset({"-f", "--file"}),
    "mysql": frozenset(),
    "mariadb": frozenset(),
    "sqlite3": frozenset({"-init"}),
    "duckdb": frozenset({"-init"}),
    "sqlcmd": frozenset({"-i"}),
    "clickhouse-client": frozenset({"--queries-file"}),
    "cockroach": frozenset({"--file", "-f"}),
}
# an interpreter's options that take a value, before the file it runs
_VALUED = frozenset({"-W", "-X", "-r", "--require", "--import", "--loader", "-I", "-e", "-c", "-m", "-M"})
# folders package managers fill: their programs are installed code, not a script the session wrote
_INSTALLED = frozenset({"node_modules", "site-packages", "dist-packages", "vendor", "__pypackages__"})
_C_OPTION = lazy(r"-[a-zA-Z]*c[a-zA-Z]*")  # bash -c, -lc, -xc: the script is on the line


class Ran(NamedTuple):
    """A file a command runs: as the command names it, and what runs it (``sh``, ``python3``, ``notebook``, ``sql``)."""

    word: str
    path: str
    runner: str


def notebook_run(c: Command) -> str:
    """The notebook ``c`` runs: ``jupyter nbconvert --execute N``, ``jupyter execute N``, ``papermill N out``."""
    words = [a for a in c.args if not a.startswith("-")]
    runs = c.name == "jupyter" and (words[:1] == ["execute"] or (words[:1] == ["nbconvert"] and "--execute" in c.args))
    if not runs and c.name not in ("papermill", "ipython"):
        return ""
    return next((w for w in words if w.endswith((".ipynb", ".ipy"))), "")


def script_ran(c: Command, place: Place) -> Ran | None:
    """The file ``c`` runs as a script, when it names one (not ``bash -c`` text, not ``python -m``)."""
    if not c.argv:
        return None
    if notebook := notebook_run(c):
        return Ran(notebook, place.resolve(notebook), "notebook")
    if c.wrapped_by[-1:] and c.wrapped_by[-1] in _PY_LAUNCHERS and c.argv[0].endswith((".py", ".pyw")):
        return Ran(c.argv[0], place.resolve(c.argv[0]), "python3")  # uv run x.py: Python runs it, #! or not
    if "/" in c.argv[0] and "://" not in c.argv[0] and c.name not in SHELLS and c.name not in INTERPRETERS:  # ./x.sh
        return Ran(c.argv[0], place.resolve(c.argv[0]), "")
    ts = [a for a in c.args if not a.startswith("-")]
    if (c.name == "npx" and ts[:1] in (["tsx"], ["ts-node"])) or (c.name == "deno" and ts[:1] == ["run"]):
        ts = ts[1:]  # npx tsx x.ts, deno run x.ts: TypeScript run by Node's (or Deno's) rules
    if c.name in ("tsx", "ts-node", "npx", "deno") and ts and ts[0].endswith((".ts", ".mts", ".js", ".mjs")):
        return Ran(ts[0], place.resolve(ts[0]), "node")
    fed = next((t for op, t in c.redirects if op == "<"), "")  # bash < x.sh, psql db < x.sql
    if c.name in _SQL_FILE_CLIENTS:
        args = list(c.args)
        given = [args[i + 1] for i, a in enumerate(args[:-1]) if a in _SQL_FILE_CLIENTS[c.name]]
        given += [a.split("=", 1)[1] for a in args if a.startswith("--file=")]
        given += [a.split(None, 1)[1] for a in args if a.startswith(".read ")]  # sqlite3 db '.read x.sql'
        word = given[0] if given else fed
        return Ran(word, place.resolve(word), "sql") if word else None
    if c.name in _SH_FAMILY and fed and not [a for a in c.args if not a.startswith("-")]:
        return Ran(fed, place.resolve(fed), "sh")
    if c.name in _SH_FAMILY or c.name in _FILE_INTERPRETERS:
        args = list(c.args)
        options = args[: _first_operand(args)]
        if c.name in _SH_FAMILY and any(_C_OPTION.fullmatch(a) or a == "-n" for a in options):
            return None  # bash -c '…': the script is on the line; bash -n x.sh: read, not run
        rest = skip_options(args, _VALUED)
        flag = INTERPRETERS.get(c.name, "")
        if not rest or rest[0] == "-" or (flag and flag in args) or "-m" in args[: len(args) - len(rest)]:
            return None
        if c.name == "bun" and rest[0] in ("run", "x", "install", "add", "test", "build"):
            return None
        return Ran(rest[0], place.resolve(rest[0]), "sh" if c.name in _SH_FAMILY else c.name)
    return None


def _first_operand(args: list[str]) -> int:
    return next((i for i, a in enumerate(args) if not a.startswith("-")), len(args))


def readable(path: str, place: Place) -> str | None:
    """The text of the script at ``path``, when the session may have written it and it is text."""
    root = next(
        (p for p in (place.project, *_TEMP_FOLDERS, place.home) if p and path.startswith(p.rstrip("/") + "/")), ""
    )
    parts = path[len(root) :].strip("/").split("/")
    if not root or any(p.startswith(".") or p in _INSTALLED for p in parts):
        return None  # start-up files and installed packages (~/.bashrc, .venv/bin/activate): not the session's
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SCRIPT_BYTES or time.time() - info.st_mtime > RECENT_S:
            return None  # not a script the session has just written: a folder, a FIFO, the project's own, installed
        text = regular_text(path)  # opened without blocking, in case it was swapped for a FIFO meanwhile
    except OSError:  # not there (yet), unreadable: judged by its command line alone
        return None
    return None if "\0" in text else text  # a program, not a script


def runner_of(ran: Ran, text: str) -> str:
    """What runs a file run by its own name: its ``#!`` line's program (a shell when it has none)."""
    if ran.runner:
        return ran.runner
    first = text.split("\n", 1)[0]
    if not first.startswith("#!"):
        return "sh"  # the shell runs a text file without a #! line as a shell script
    words = first[2:].split()
    if words and words[0].endswith("/env"):
        words = [w for w in words[1:] if not w.startswith("-")]
    name = os.path.basename(words[0]) if words else ""
    name = re.sub(r"[\d.]+$", "", name) if name.startswith("python") else name  # python3.12 is python
    return "sh" if name in _SH_FAMILY else (name if name in _FILE_INTERPRETERS or name == "python" else "")


def notebook_parts(text: str) -> tuple[str, str]:
    """A notebook's (or an ``.ipy`` file's) shell lines (``!cmd``, ``%%bash`` cells) and its Python code."""
    try:
        cells = json.loads(text).get("cells", [])
        sources = [
            "".join(s) if isinstance(s := cell.get("source", ""), list) else str(s)
            for cell in cells
            if isinstance(cell, dict) and cell.get("cell_type") == "code"
        ]
    except (ValueError, AttributeError):
        sources = [text]  # an .ipy file: IPython's lines as they are
    shell: list[str] = []
    python: list[str] = []
    for source in sources:
        first, _, body = source.lstrip().partition("\n")
        if re.match(r"%%(?:bash|sh|zsh|script\s+(?:ba|z)?sh|system)\b", first):
            shell.append(body)
            continue
        for line in source.splitlines():
            m = re.match(r"\s*(?:\w+\s*=\s*)?(?:!!?|%(?:system|sx)\s)(.*)", line)
            (shell if m else python).append(m.group(1) if m else line)
    return "\n".join(shell), "\n".join(python)


# a program's notes: docstrings (strings standing alone, whose quotes would pair the wrong way with
# the code's strings), block comments and whole-line comments in Python, shell, Ruby, Perl and JavaScript
_NOTES = lazy(
    r'^[ \t]*[rRuU]?(?:"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\')[ \t]*$'  # a docstring: a string standing alone
    r"|/\*[\s\S]*?\*/|^[ \t]*(?:#|//)[^\n]*|^=begin[\s\S]*?^=end",
    re.M,
)


def without_notes(code: str) -> str:
    """``code`` without its docstrings and comments: what it does, for rules that read its strings."""
    return _NOTES.sub(" ", code)
