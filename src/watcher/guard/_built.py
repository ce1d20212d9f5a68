"""The commands a program builds and runs: ``xargs`` and ``parallel`` from their input (``{}``
replaced, or the words appended; a line of input that is itself a command), ``find`` from the
files it walks (``-delete``, ``-exec rm … {} ;``)."""

from __future__ import annotations

import itertools
import re

from watcher.guard._simple import SHELLS, Command, printed, program, skip_options

__all__ = ["INPUT", "fd_as_find", "find_runs", "input_file", "input_runs", "runs_its_input"]

INPUT = "{xargs input"  # the words xargs reads, unknown here: "{xargs input}", or "{xargs input:FILE}" from a file

_NARROWING = frozenset({"-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-wholename", "-iwholename"})

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


def input_runs(here: Command) -> list[tuple[str, ...]]:
    """The commands ``xargs``/``parallel`` run: their command with the input words put in (``{}``
    replaced, or appended), the words of ``parallel … ::: a b`` included; a command that is itself
    the input (``echo 'rm -rf /' | xargs -I{} bash -c {}``) is read as a script."""
    args = list(here.args)
    words = list(_xargs_words(here))
    if here.name == "parallel":
        if ":::" in args:
            at = args.index(":::")
            args, words = args[:at], [w for w in args[at + 1 :] if w not in (":::", "::::")]
        elif not words[0].startswith(INPUT):
            words = _input_lines(here) or words  # each input line whole: `echo 'rm -rf /' | parallel sh -c {}`
        rest = skip_options(args, _PARALLEL_VALUE)
        token: str | None = "{}"
    else:
        rest = skip_options(args, _XARGS_VALUE)
        token = _replace_token(args)
    if not rest:
        return [("sh", "-c", w) for w in words if not w.startswith(INPUT)] if here.name == "parallel" else []
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
    if any(a in ("-a", "--arg-file") or a.startswith(("--arg-file=", "-a")) for a in cmd.args):
        return (f"{INPUT}:{_list_file(cmd)}}}",)  # -a FILE: the words come from the file, not the pipe
    if feeder is not None and feeder.name in ("echo", "printf") and feeder.feeder is None:
        args = printed(feeder)
        if feeder.name == "printf" and len(args) > 1 and "%" in args[0]:
            args = args[1:]  # printf '%s\n' a b: the format, then the words
        words = [w for a in args for w in a.replace("\\n", " ").split()]
        if words and not any("%" in w or "$(" in w or "`" in w for w in words):
            return tuple(words)
    if feeder is None and cmd.stdin is not None and cmd.stdin.strip():  # xargs -I % sh -c 'rm -rf %' <<< ~
        words = cmd.stdin.split()[:_MOST_LINES]
        if not any("$(" in w or "`" in w for w in words):
            return tuple(words)
    listed = _list_file(cmd)
    return (f"{INPUT}:{listed}}}" if listed else INPUT + "}",)


def _list_file(cmd: Command) -> str:
    """The file ``xargs`` reads its words from, when the line names one: ``-a FILE``,
    ``< FILE``, ``cat FILE |``."""
    args = list(cmd.args)
    for i, a in enumerate(args):
        if a in ("-a", "--arg-file") and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--arg-file="):
            return a.split("=", 1)[1]
        if a.startswith("-a") and len(a) > 2 and cmd.name == "xargs":
            return a[2:]
    for op, target in cmd.redirects:
        if op == "<":
            return target
    feeder = cmd.feeder
    files = [a for a in feeder.args if not a.startswith("-")] if feeder is not None and feeder.name == "cat" else []
    if feeder is not None and len(files) == 1 and feeder.feeder is None:
        return files[0]
    return ""


def input_file(word: str) -> str | None:
    """The list file an xargs input placeholder names ("" for an input not from a file; None: not a placeholder)."""
    if not word.startswith(INPUT):
        return None
    return word[len(INPUT) + 1 : -1] if word.startswith(INPUT + ":") else ""


_MOST_LINES = 64  # a here-document's lines read as xargs's inputs


def _input_lines(cmd: Command) -> list[str]:
    """The lines an ``echo``/``printf`` written out on the line (or a here-string) feeds ``cmd``, each one whole."""
    feeder = cmd.feeder
    if feeder is None and cmd.stdin is not None:  # xargs -I % sh -c 'rm -rf %' <<< ~
        return [line.strip() for line in cmd.stdin.split("\n") if line.strip()][:_MOST_LINES]
    if feeder is None or feeder.name not in ("echo", "printf") or feeder.feeder is not None:
        return []
    args = printed(feeder)
    if feeder.name == "printf" and len(args) > 1 and "%" in args[0]:
        args = args[1:]
    text = " ".join(args).replace("\\n", "\n")
    return [line.strip() for line in text.split("\n") if line.strip()]


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


# fd's options that take a value (fd PATTERN PATH -x CMD: the command runs on every entry it finds)
_FD_VALUE = frozenset(
    {"-e", "--extension", "-t", "--type", "-d", "--max-depth", "--min-depth", "--exact-depth", "-E", "--exclude",
     "-S", "--size", "--changed-within", "--changed-before", "-o", "--owner", "-j", "--threads", "-c", "--color",
     "--base-directory", "--search-path", "--ignore-file", "--max-results", "--format", "--path-separator",
     "--batch-size", "--max-buffer-time", "--and"}
)  # fmt: skip
_FD_EXEC = frozenset({"-x", "--exec", "-X", "--exec-batch"})
_FD_EVERY = frozenset({"", ".", "^", ".*", "^.*$", "*"})  # a pattern that matches every name


def fd_as_find(fd: Command) -> Command | None:
    """``fd PATTERN PATH… -x CMD`` as the ``find PATH… -exec CMD {} +`` it amounts to (narrowed by a
    pattern, an extension or a glob that picks names); None when it runs nothing."""
    args = list(fd.args)
    words: list[str] = []
    narrowing: list[str] = []
    run: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in _FD_EXEC:
            run = list(itertools.takewhile(lambda b: b not in (";", "\\;"), args[i + 1 :]))
            i += len(run) + 2
            continue
        if a in ("-e", "--extension") and i + 1 < len(args):
            narrowing = ["-name", f"*.{args[i + 1]}"]
        elif a == "--search-path" and i + 1 < len(args):
            words.append(args[i + 1]) if words else words.extend(["", args[i + 1]])
        if a in _FD_VALUE:
            i += 2
            continue
        if not a.startswith("-") or a == "-":
            words.append(a)
        i += 1
    if not run:
        return None
    pattern, starts = (words[0], words[1:]) if words else ("", [])
    if pattern not in _FD_EVERY and not narrowing:
        narrowing = ["-name", pattern]
    if not any("{" in w for w in run):
        run.append("{}")
    return Command(("find", *(starts or ["."]), *narrowing, "-exec", *run, "+"), wrapped_by=(*fd.wrapped_by, "fd"))


def find_runs(find: Command) -> list[Command]:
    """``find START … -delete`` or ``-exec rm … {} ;`` as the delete it is (START, unless narrowed by name)."""
    args = list(find.args)
    starts = []
    for a in args:
        if a.startswith(("-", "(", "!")):
            break
        starts.append(a)
    starts = starts or ["."]
    tests = _find_tests(args[len(starts) :])  # -delete as an action, not -name's value or -exec's word
    # `! -name work`, `-not -name x`: everything but those, no narrowing
    kept = [a for i, a in enumerate(args) if not (i and args[i - 1] in ("!", "-not"))]
    narrowed = any(a in _NARROWING for a in kept)
    named = next(
        (args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-name", "-iname") and args[i - 1] not in ("!", "-not")),
        "",
    )
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
                out.append(Command(argv, wrapped_by=wrapped, source=find.source))
    return out


def runs_its_input(here: Command) -> bool:
    """``xargs``/``parallel`` handing a shell an input the line does not spell out as the script
    (``cat cmds | xargs bash -c``, ``… | parallel sh -c {}``): whatever it holds runs, unread. An
    input written out (``echo 'ls build' | parallel sh -c {}``) is read as the script it is, and a
    script written out with the input as its argument (``xargs -I{} sh -c 'wc -l {}'``) too."""
    if here.name not in ("xargs", "parallel") or not _xargs_words(here)[0].startswith(INPUT):
        return False
    if here.name == "parallel" and ":::" in here.args:
        return False  # `parallel sh -c {} ::: 'ls a'`: the inputs are on the line
    args = list(here.args)
    rest = skip_options(args, _PARALLEL_VALUE if here.name == "parallel" else _XARGS_VALUE)
    if not rest or program(rest[0]) not in SHELLS:
        return False
    at = next((i for i, a in enumerate(rest) if re.fullmatch(r"-\w*c", a)), None)
    if at is None:
        return False  # `xargs bash build.sh`: a script file, the input its arguments
    script = rest[at + 1] if at + 1 < len(rest) else None
    token = (_replace_token(list(here.args)) if here.name == "xargs" else None) or "{}"
    return script is None or script.strip() in (token, "{}", "{1}")
