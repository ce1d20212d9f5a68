"""A shell command line as the simple commands it would run, read with tree-sitter-bash.

The parser is tree-sitter's bash grammar through ``ast-grep-py`` (already a dependency for the
JavaScript rules): a real parser, in native code, that reads ``$(…)``, subshells, pipelines,
``&&``/``;`` chains, here-strings and here-documents, functions and compound statements, and
recovers from a broken line instead of giving up. Every simple command anywhere in the tree is
reported with its words unquoted, its redirections and what feeds its standard input.

Wrappers are then peeled off (``sudo``, ``env``, ``timeout``, ``nice``, ``command``, ``\\rm``,
``/bin/rm``, ``xargs``, ``find -exec``) and scripts handed to a shell (``bash -c '…'``, ``eval``,
a here-string or a pipe into ``sh``) are read the same way, so the rules see the command that
would really run.
"""

from __future__ import annotations

import re
import shlex
from typing import NamedTuple

from ast_grep_py import SgNode, SgRoot

__all__ = ["SHELLS", "Command", "commands", "functions", "inner_script", "program"]

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "busybox", "powershell", "pwsh", "cmd"})
_REDIRECTS = frozenset({"file_redirect", "herestring_redirect", "heredoc_redirect"})
# wrapper -> its options that take a value (the wrapped command starts after the options)
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U", "--user", "--group"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "--unset", "--chdir"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "--class", "--classdata"}),
    "nohup": frozenset(),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "setsid": frozenset(),
    "unbuffer": frozenset(),
    "caffeinate": frozenset({"-t", "-w"}),
    "chrt": frozenset(),
    "taskset": frozenset(),
    "flock": frozenset({"-w", "-E", "--timeout"}),
    "watch": frozenset({"-n", "-d", "--interval"}),
    "strace": frozenset({"-e", "-o", "-p", "-s"}),
    "torsocks": frozenset(),
    "proxychains": frozenset({"-f"}),
    "proxychains4": frozenset({"-f"}),
    "systemd-run": frozenset({"-p", "-u", "--unit", "--property"}),
    "npx": frozenset({"-p", "--package", "-c", "--call"}),
    "pnpx": frozenset(),
    "bunx": frozenset(),
    "uvx": frozenset({"--from", "--with", "--python"}),
}
_TAKES_ONE_POSITIONAL = {"timeout": 1, "flock": 1, "chrt": 1, "taskset": 1}  # the duration, lock file, priority
_XARGS_VALUE = frozenset(
    {
        "-I",
        "-J",
        "-n",
        "-P",
        "-d",
        "-L",
        "-s",
        "-E",
        "-e",
        "-a",
        "--max-args",
        "--max-procs",
        "--delimiter",
        "--arg-file",
    }
)
_PARALLEL_VALUE = frozenset(
    {
        "-j",
        "--jobs",
        "-P",
        "--results",
        "--res",
        "-S",
        "--sshlogin",
        "--joblog",
        "-a",
        "--arg-file",
        "--delay",
        "--timeout",
        "--tmpdir",
        "-d",
        "--delimiter",
        "-I",
        "--colsep",
        "-n",
        "--max-args",
        "--workdir",
        "--wd",
    }
)
_NARROWING = frozenset({"-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-wholename", "-iwholename"})
_MAX_DEPTH = 6  # scripts inside scripts inside scripts: deeper than anyone writes by hand


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


def program(word: str) -> str:
    """``/bin/rm``, ``\\rm`` and ``RM`` (a case-insensitive filesystem, as macOS has, runs it) → ``rm``."""
    name = word.lstrip("\\").rsplit("/", 1)[-1]
    if name[-4:].lower() == ".exe":  # powershell.exe, rm.exe (Git Bash)
        name = name[:-4]
    return name.lower() if name.isupper() else name


def _replace_token(args: list[str]) -> str | None:
    """The placeholder ``xargs -I {}`` / ``-i`` / ``--replace`` / ``-J`` substitutes input into."""
    for i, a in enumerate(args):
        if a in ("-I", "-J") and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(("-I", "-J")) and len(a) > 2:
            return a[2:]
        if a in ("-i", "--replace", "--replace=") or a.startswith("-i"):
            return a[2:] if a.startswith("-i") and len(a) > 2 else "{}"
        if a.startswith("--replace="):
            return a.split("=", 1)[1]
    return None


def _runs_on_input(here: Command) -> list[tuple[str, ...]]:
    """The commands ``xargs``/``parallel`` run: their command with the input words put in (``{}``
    replaced, or appended), the words of ``parallel … ::: a b`` included; a command that is itself
    the input (``echo 'rm -rf /' | xargs -I{} bash -c {}``) is read as a script."""
    args = list(here.args)
    words = list(_xargs_words(here))
    if here.name == "parallel":
        if ":::" in args:
            at = args.index(":::")
            args, words = args[:at], [w for w in args[at + 1 :] if w not in (":::", "::::")]
        rest = _skip_options(args, _PARALLEL_VALUE)
        token: str | None = "{}"
    else:
        rest = _skip_options(args, _XARGS_VALUE)
        token = _replace_token(args)
    if not rest:
        return [("sh", "-c", w) for w in words if w != "{xargs input}"] if here.name == "parallel" else []
    if token is None and here.name == "xargs":
        return [(*rest, *words)]
    line = " ".join(words)
    items = [line] if here.name == "xargs" else words
    token = token or "{}"
    runs = []
    for item in items:
        if any(token in w for w in rest):
            runs.append(tuple(w.replace(token, item) for w in rest))
        else:  # parallel appends the input; xargs -I without its placeholder passes none
            runs.append((*rest, item) if here.name == "parallel" else tuple(rest))
    return runs


def _xargs_words(cmd: Command) -> tuple[str, ...]:
    """The words ``xargs`` appends: those an ``echo``/``printf`` or a here-string feeds it, when
    written out in the command line; else a placeholder the rules resolve (``find … | xargs rm``)."""
    feeder = cmd.feeder
    if feeder is not None and feeder.name in ("echo", "printf") and feeder.feeder is None:
        args = [a for a in feeder.args if not a.startswith("-")]
        if feeder.name == "printf" and len(args) > 1 and "%" in args[0]:
            args = args[1:]  # printf '%s\n' a b: the format, then the words
        words = [w for a in args for w in a.replace("\\n", " ").split()]
        if words and not any("%" in w or "$(" in w or "`" in w for w in words):
            return tuple(words)
    return ("{xargs input}",)


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.S)


def _value(node: SgNode) -> str:
    """A word as the shell would pass it (quotes removed; expansions kept as written)."""
    kind = node.kind()
    if kind == "word":
        return _unescape(node.text())
    if kind == "raw_string":
        return node.text()[1:-1]
    if kind == "ansi_c_string":
        body = node.text()[2:-1]
        try:
            return body.encode("latin-1", "backslashreplace").decode("unicode_escape")
        except UnicodeDecodeError:
            return body
    if kind == "string":  # inside double quotes only \\ \" \$ \` escape; expansions stay as written
        return re.sub(r'\\([\\"$`])', r"\1", node.text()[1:-1]).replace("\\\n", "")
    if kind == "concatenation":
        return "".join(_value(c) for c in node.children())
    inner = node.child(0) if kind == "command_name" else None
    return _value(inner) if inner is not None else node.text()  # "rm", '/bin/rm': quoted, it still runs


def _walk_commands(node: SgNode, out: list[tuple[SgNode, SgNode | None]], feeder: SgNode | None = None) -> None:
    """Every ``command`` node under ``node``, with the command piped into it (if any)."""
    kind = node.kind()
    if kind == "command" or (
        kind == "declaration_command" and not any(c.kind() == "variable_assignment" for c in node.children())
    ):  # `export -p`, `declare -x`: they print the environment (an assignment prints nothing)
        out.append((node, feeder))
    if kind == "redirected_statement" and all(c.kind() in _REDIRECTS for c in node.children() if c.is_named()):
        out.append((node, None))  # `> /dev/sda` alone: a redirection is a write, with no command at all
    if kind == "pipeline":
        previous: SgNode | None = None
        for child in node.children():
            if child.is_named():
                _walk_commands(child, out, previous)
                previous = _last_command(child)
        return
    for child in node.children():
        _walk_commands(child, out, None if kind != "redirected_statement" else feeder)


def _last_command(node: SgNode) -> SgNode | None:
    if node.kind() == "command":
        return node
    found = [n for n in node.children() if n.kind() in ("command", "redirected_statement", "subshell")]
    return _last_command(found[-1]) if found else None


def _redirects(command: SgNode) -> tuple[list[tuple[str, str]], str | None, SgNode | None, list[str]]:
    """The redirections of ``command`` (its own and its enclosing statement's), its here-text, a
    command a here-document pipes into (``cat <<EOF | sh``), and the command's words written after
    a redirection (``rm -rf 2>/dev/null /``: ``/`` is rm's)."""
    nodes = [c for c in command.children() if c.kind() in _REDIRECTS]
    parent = command.parent()
    if parent is not None and parent.kind() == "redirected_statement":
        nodes += [c for c in parent.children() if c.kind() in _REDIRECTS]
    redirects, stdin, piped, after = [], None, None, []
    for r in nodes:
        parts = [c for c in r.children()]
        op = next((c.text() for c in parts if not c.is_named()), "")
        if r.kind() == "herestring_redirect":
            stdin = "".join(_value(c) for c in parts if c.is_named())
        elif r.kind() == "heredoc_redirect":
            stdin = "".join(c.text() for c in parts if c.kind() == "heredoc_body")
            pipe = next((c for c in parts if c.kind() == "pipeline"), None)
            piped = _first_command(pipe) if pipe is not None else None
        else:
            targets = [c for c in parts if c.is_named() and c.kind() != "file_descriptor"]
            if targets:
                redirects.append((op, _value(targets[0])))
                after += [_value(t) for t in targets[1:]]
    return redirects, stdin, piped, after


def _first_command(node: SgNode) -> SgNode | None:
    if node.kind() == "command":
        return node
    for child in node.children():
        found = _first_command(child)
        if found is not None:
            return found
    return None


def functions(script: str) -> dict[str, str]:
    """The functions ``script`` defines: name -> body text (a fork bomb is a function that spawns itself)."""
    out: dict[str, str] = {}
    for node in SgRoot(script, "bash").root().find_all(kind="function_definition"):
        name = next((c for c in node.children() if c.kind() == "word"), None)
        body = next((c for c in node.children() if c.kind() in ("compound_statement", "subshell")), None)
        if name is not None and body is not None:
            out[name.text()] = body.text()
    return out


def commands(script: str, depth: int = 0) -> list[Command]:
    """Every simple command ``script`` would run, wrappers peeled and inner scripts read too."""
    if depth > _MAX_DEPTH or not script.strip():
        return []
    root = SgRoot(script, "bash").root()
    found: list[tuple[SgNode, SgNode | None]] = []
    _walk_commands(root, found)
    built: dict[int, Command] = {}
    out: list[Command] = []
    for node, feeder_node in found:
        words = [c for c in node.children() if c.is_named() and c.kind() not in _REDIRECTS | {"variable_assignment"}]
        argv = tuple(_value(c) for c in words) if node.kind() == "command" else (":",)
        if node.kind() == "declaration_command":
            keyword = node.child(0)
            argv = (keyword.text() if keyword is not None else "declare", *(_value(c) for c in words))
        redirects, stdin, piped, after = _redirects(node)
        if after and node.kind() == "command":
            argv = (*argv, *after)
        feeder = built.get(_key(feeder_node)) if feeder_node is not None else None
        nxt = node.next()
        cmd = Command(
            argv,
            tuple(redirects),
            stdin,
            feeder,
            source=node.text(),
            background=nxt is not None and nxt.text() == "&",
            captured_by=_captured_by(node),
        )
        built[_key(node)] = cmd
        out.extend(_unwrap(cmd, depth))
        if piped is not None:  # cat <<EOF | sh: the here-document is the shell's script
            inner = Command((_value(piped.child(0) or piped),), stdin=stdin, source=piped.text())
            out.extend(_unwrap(inner, depth))
    return out


def _captured_by(node: SgNode) -> str:
    """Who takes ``node``'s output when it runs inside ``$(…)``: the enclosing command's program,
    ``=`` for an assignment, ``""`` when its output is not captured (it reaches the screen)."""
    parent = node.parent()
    while parent is not None and parent.kind() not in ("command_substitution", "program"):
        parent = parent.parent()
    if parent is None or parent.kind() != "command_substitution":
        return ""
    outer = parent.parent()
    while outer is not None and outer.kind() not in ("command", "variable_assignment", "declaration_command"):
        if outer.kind() in ("program", "command_substitution"):
            return "?"
        outer = outer.parent()
    if outer is None:
        return "?"
    if outer.kind() != "command":
        return "="
    first = outer.child(0)
    while first is not None and first.kind() == "variable_assignment":
        first = first.next()
    return program(_value(first)) if first is not None else "="


def _key(node: SgNode | None) -> int:
    if node is None:
        return -1
    r = node.range()
    return r.start.index * 100_003 + r.end.index


def _unwrap(cmd: Command, depth: int) -> list[Command]:
    """``cmd`` and what it runs: wrappers peeled, shells' scripts read."""
    argv, wrapped = list(cmd.argv), list(cmd.wrapped_by)
    while argv:
        name = program(argv[0])
        if name == "busybox" and len(argv) > 1 and not argv[1].startswith("-"):  # busybox rm: the applet runs
            wrapped.append(name)
            argv = argv[1:]
            continue
        if re.fullmatch(r"[A-Za-z_]\w*=.*", argv[0]):  # VAR=1 before the command (env's operands)
            argv = argv[1:]
            continue
        if name in ("python", "python3") and len(argv) > 2 and argv[1] == "-m":  # python -m twine: the module runs
            wrapped.append(name)
            argv = argv[2:]
            continue
        if name in _WRAPPERS:
            if name == "command" and any(a in ("-v", "-V") for a in argv[1:2]):
                break  # command -v rm: a lookup, not a call
            rest = _skip_options(argv[1:], _WRAPPERS[name])
            rest = rest[_TAKES_ONE_POSITIONAL.get(name, 0) :]
            if name == "env" and "-S" in argv[1:]:
                rest = shlex.split(rest[0]) + rest[1:] if rest else rest
            wrapped.append(name)
            argv = rest
            continue
        break
    if not argv:
        return [cmd._replace(wrapped_by=tuple(wrapped))]
    here = cmd._replace(argv=tuple(argv), wrapped_by=tuple(wrapped))
    out = [here]
    name = here.name
    if name in ("xargs", "parallel"):
        for argv_run in _runs_on_input(here):
            inner = Command(argv_run, stdin=cmd.stdin, feeder=cmd.feeder, wrapped_by=(*wrapped, name))
            out += _unwrap(inner, depth)
    elif name == "find":
        out += _find_actions(here, depth)
    elif name == "ssh" and (remote := _ssh_command(list(here.args))):  # it runs on the other machine
        out += [c._replace(wrapped_by=(*wrapped, *c.wrapped_by, name)) for c in commands(remote, depth + 1)]
    elif name in SHELLS or name in ("su", "runuser", "eval", "source", ".") or name in _RUNS_CODE:
        script = inner_script(here) if name not in _RUNS_CODE else _shelled_out(here)
        if script:
            out += [
                Command(c.argv, c.redirects, c.stdin, c.feeder, (*wrapped, *c.wrapped_by, name), c.source, c.background)
                for c in commands(script, depth + 1)
            ]
    return out


# interpreters whose inline code can hand a string to the shell (os.system, subprocess, execSync, ``...``)
_RUNS_CODE = {"python": "-c", "python3": "-c", "perl": "-e", "ruby": "-e", "node": "-e", "php": "-r", "bun": "-e"}
_SHELLS_OUT = re.compile(
    r"system\s*\(|subprocess|popen|exec(Sync|File)?\s*\(|spawn|`|%x|Runtime|shell_exec|passthru|check_output|run\s*\("
)
_STR_LIST = re.compile(r"""\[\s*(?:(?:"[^"]*"|'[^']*')\s*,\s*)+(?:"[^"]*"|'[^']*')\s*,?\s*\]""")
_LIST_ITEM = re.compile(r""""([^"]*)"|'([^']*)'""")
_LITERAL = re.compile(r"\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)'|`([^`]*)`")


def _shelled_out(cmd: Command) -> str:
    """The shell commands an interpreter's inline code runs: its string literals, when it shells out."""
    flag = _RUNS_CODE[cmd.name]
    args = list(cmd.args)
    code = next((args[i + 1] for i, a in enumerate(args[:-1]) if a == flag), "")
    if not code and not [a for a in args if not a.startswith("-")]:
        code = cmd.stdin or ""  # python3 <<EOF … EOF: the here-document is the program
    if not code or not _SHELLS_OUT.search(code):
        return ""
    lines = [" ".join(a or b for a, b in _LIST_ITEM.findall(m)) for m in _STR_LIST.findall(code)]  # ["rm", "-rf", "/"]
    code = _STR_LIST.sub(" ", code)
    literals = [a or b or c for a, b, c in _LITERAL.findall(code)]
    return "\n".join(lines + [lit for lit in literals if " " in lit.strip() or "/" in lit])


_SSH_VALUE = frozenset("bcDEeFIiJLlmOopQRSWw")


def _ssh_command(args: list[str]) -> str:
    """The command ``ssh [options] host COMMAND…`` runs on the remote machine ("" for a login)."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if len(args[i]) == 2 and args[i][1] in _SSH_VALUE else 1
    return " ".join(args[i + 1 :])


def _skip_options(argv: list[str], with_value: frozenset[str]) -> list[str]:
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


def inner_script(cmd: Command) -> str | None:
    """The script a shell (or ``eval``, ``su -c``) runs: ``-c``'s argument, or its standard input."""
    args = list(cmd.args)
    if cmd.name == "eval":
        return _here_text(" ".join(args))
    for i, a in enumerate(args):
        if a.startswith("-") and not a.startswith("--") and "c" in a[1:] and i + 1 < len(args):
            return _here_text(args[i + 1])
        if a.lower() in ("--command", "-command", "/c", "/k") and i + 1 < len(args):
            return " ".join(args[i + 1 :]) if cmd.name == "cmd" else args[i + 1]
    if cmd.name in ("source", "."):
        return None
    positional = [a for a in args if not a.startswith("-")]
    if positional:
        return None  # a script file: its text is not on the line
    if cmd.stdin is not None:
        return cmd.stdin
    return _piped_text(cmd.feeder)


_CAT_HEREDOC = re.compile(r"^\s*\$\(\s*cat\s+<<-?\s*['\"]?(\w+)['\"]?[^\n]*\n(.*?)\n\s*\1\s*\)\s*$", re.S)


def _here_text(script: str) -> str:
    """``bash -c "$(cat <<EOF … EOF)"``: the here-document is the script."""
    m = _CAT_HEREDOC.match(script)
    return m.group(2) if m else script


def _piped_text(feeder: Command | None) -> str | None:
    """What a command pipes out when the line spells it: ``echo``/``printf`` words, or their base64 decoded."""
    if feeder is None:
        return None
    if feeder.name in ("echo", "printf"):
        text = " ".join(a for a in feeder.args if not (a.startswith("-") and len(a) <= 3))
        if feeder.name == "printf" and re.search(
            r"\\(x[0-9a-fA-F]{2}|[0-7]{3})", text
        ):  # escaped bytes, as printf writes them
            text = re.sub(
                r"\\x([0-9a-fA-F]{2})|\\([0-7]{3})", lambda m: chr(int(m[1], 16) if m[1] else int(m[2], 8)), text
            )
        return text
    if feeder.name == "base64" and any(a in ("-d", "-D", "--decode") for a in feeder.args):
        encoded = feeder.stdin if feeder.stdin is not None else _piped_text(feeder.feeder)
        if encoded:
            import base64
            import binascii

            data = "".join(encoded.split())
            try:  # only real base64 is read; anything else stays hidden (and is denied when run)
                decoded = base64.b64decode(data + "=" * (-len(data) % 4), validate=True).decode("utf-8")
            except (binascii.Error, ValueError):
                return None
            return decoded if decoded.isprintable() or "\n" in decoded else None
    return None


_FIND_VALUE = frozenset(
    {
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-regex",
        "-iregex",
        "-wholename",
        "-iwholename",
        "-type",
        "-xtype",
        "-size",
        "-user",
        "-group",
        "-perm",
        "-newer",
        "-maxdepth",
        "-mindepth",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-uid",
        "-gid",
        "-links",
        "-inum",
        "-samefile",
        "-fstype",
        "-printf",
        "-fprint",
        "-fprintf",
        "-regextype",
        "-lname",
        "-ilname",
        "-used",
        "-context",
        "-newermt",
    }
)


def _find_tests(args: list[str]) -> list[str]:
    """``find``'s own tests and actions: option values and ``-exec … ;`` words left out."""
    out, i = [], 0
    while i < len(args):
        a = args[i]
        if a in ("-exec", "-execdir", "-ok", "-okdir"):
            while i < len(args) and args[i] not in (";", "+", "\\;"):
                i += 1
        elif a in _FIND_VALUE:
            i += 1
        else:
            out.append(a)
        i += 1
    return out


def _find_actions(find: Command, depth: int) -> list[Command]:
    """``find START … -delete`` or ``-exec rm … {} ;`` as the delete it is (START, unless narrowed by name)."""
    args = list(find.args)
    starts = []
    for a in args:
        if a.startswith(("-", "(", "!")):
            break
        starts.append(a)
    starts = starts or ["."]
    tests = _find_tests(args[len(starts) :])  # -delete as an action, not -name's value or -exec's word
    narrowed = any(a in _NARROWING for a in args)
    named = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-name", "-iname")), "")
    out: list[Command] = []
    wrapped = (*find.wrapped_by, "find")
    if "-delete" in tests:  # narrowed by name: the files named, in that tree
        rm = ("rm", "-rf") if not narrowed else ("rm",)
        out += [
            Command((*rm, s if not narrowed else f"{s.rstrip('/')}/{named or '*.*'}"), wrapped_by=wrapped)
            for s in starts
        ]
    for i, a in enumerate(args):
        if a in ("-exec", "-execdir", "-ok", "-okdir"):
            inner: list[str] = []
            for b in args[i + 1 :]:
                if b in (";", "+"):
                    break
                inner.append(b)
            if not inner:
                continue
            if narrowed and program(inner[0]) in ("rm", "shred", "unlink"):  # the files named, not the tree
                out += [Command(("rm", f"{s.rstrip('/')}/{named or '*.*'}"), wrapped_by=wrapped) for s in starts]
                continue
            if program(inner[0]) == "rm":  # find walks the tree: its rm deletes all of it
                inner.insert(1, "-rf")
            for s in starts:
                found = f"{s.rstrip('/')}/{named}" if named else s  # what -exec gets: the files found
                argv = tuple(found if w == "{}" else w for w in inner)
                out += _unwrap(Command(argv, wrapped_by=wrapped, source=find.source), depth)
    return out
