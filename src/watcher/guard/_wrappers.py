"""What a command really runs: wrappers peeled off (``sudo``, ``env``, ``timeout``, ``nice``,
``command``, ``busybox``, ``python -m``, ``c8``, ``nyc``, ``cross-env``, ``rtk``), the commands ``xargs`` and ``parallel`` build from their
input, ``find``'s ``-delete`` and ``-exec``, ``ssh``'s remote command, the command lines ``watch``,
``tmux``, ``screen``, ``script -c``, ``at``, ``awk``'s ``system()``, ``vim -c '!…'`` and ``osascript``'s ``do shell script`` run, and the scripts handed to a
shell, ``eval`` or an interpreter (``bash -c``, here-documents, ``$(cat <<EOF …)``, decoded
base64, ``os.system``/``subprocess`` strings), read with the parser the caller passes in."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from itertools import pairwise

from watcher.guard._built import fd_as_find, find_runs, input_runs
from watcher.guard._code_shell import shell_strings
from watcher.guard._containers import container_run, mounted
from watcher.guard._readable import readable_code
from watcher.guard._simple import SHELLS, Command, printed, printed_text, program, skip_options

__all__ = ["STDIN_PATHS", "inner_script", "unwrap"]

# a script file name that is the standard input: `curl … | source /dev/stdin` runs what it is fed
STDIN_PATHS = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})

Parse = Callable[[str, int], list[Command]]  # the shell parser: a script, its depth -> its commands

# wrapper -> its options that take a value (the wrapped command starts after the options)
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U", "--user", "--group"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "--unset", "--chdir"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "--class", "--classdata"}),
    "nohup": frozenset(),
    "coproc": frozenset(),
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
    "chroot": frozenset({"--userspec", "--groups", "--skip-chdir"}),
    "strace": frozenset({"-e", "-o", "-p", "-s"}),
    "torsocks": frozenset(),
    "proxychains": frozenset({"-f"}),
    "proxychains4": frozenset({"-f"}),
    "systemd-run": frozenset({"-p", "-u", "--unit", "--property"}),
    "npx": frozenset({"-p", "--package", "-c", "--call"}),
    "pnpx": frozenset(),
    "bunx": frozenset(),
    "uvx": frozenset({"--from", "--with", "--python"}),
    # coverage and environment runners that run the rest of their line
    "c8": frozenset(
        {"-r", "--reporter", "-o", "--reports-dir", "--temp-directory", "-n", "--include", "-x", "--exclude"}
    ),
    "nyc": frozenset({"-r", "--reporter", "-n", "--include", "-x", "--exclude", "--report-dir", "--temp-dir", "-i"}),
    "cross-env": frozenset(),
    "env-cmd": frozenset({"-f", "--file", "-e", "--environments", "-r", "--rc-file"}),
    "firejail": frozenset(),  # its options are --name=value words: the command follows them
    "rtk": frozenset(),  # a proxy that compacts a command's output for the agent: `rtk rm …`, `rtk proxy rm …`
}
_TAKES_ONE_POSITIONAL = {"timeout": 1, "flock": 1, "chrt": 1, "taskset": 1, "chroot": 1}  # duration, lock, …, new root


def _chdir(options: list[str]) -> str | None:
    """The folder ``env -C DIR`` (``--chdir=DIR``) or ``sudo -D DIR`` runs its command in, if one is given."""
    for i, a in enumerate(options):
        if a in ("-C", "--chdir", "-D") and i + 1 < len(options):
            return options[i + 1]
        if a.startswith("--chdir="):
            return a[len("--chdir=") :]
        if re.fullmatch(r"-[CD]\S+", a):
            return a[2:]
    return None


def unwrap(cmd: Command, depth: int, parse: Parse) -> list[Command]:
    """``cmd`` and what it runs: wrappers peeled, shells' scripts read (with ``parse``, the shell parser)."""
    argv, wrapped = list(cmd.argv), list(cmd.wrapped_by)
    moved: list[Command] = []  # env -C DIR rm …: the command runs in DIR, as after `cd DIR`
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
            rest = skip_options(argv[1:], _WRAPPERS[name])
            if name == "rtk" and rest[:1] == ["proxy"]:
                rest = rest[1:]
            rest = rest[_TAKES_ONE_POSITIONAL.get(name, 0) :]
            options = argv[1 : len(argv) - len(rest)]
            if name == "env" and "-S" in argv[1:]:
                rest = shlex.split(rest[0]) + rest[1:] if rest else rest
            wrapped.append(name)
            if name in ("env", "sudo") and (folder := _chdir(options)) is not None:
                moved = [Command(("cd", folder), wrapped_by=tuple(wrapped))]
            argv = rest
            continue
        break
    if not argv:
        return [cmd._replace(wrapped_by=tuple(wrapped))]
    if (container := container_run(argv)) is not None:  # docker run -v "$PWD":/app … rm -rf /app: the project
        ran = unwrap(Command(container.argv, wrapped_by=(*wrapped, program(argv[0]))), depth, parse)
        return [cmd._replace(argv=tuple(argv), wrapped_by=tuple(wrapped)), *mounted(container, ran)]
    inner_argv = _runner_command(argv)
    if inner_argv:  # uv run rm -rf /, pnpm exec …, docker exec db rm -rf /: what it runs, read too
        runner = cmd._replace(argv=tuple(argv), wrapped_by=tuple(wrapped))
        return [runner, *unwrap(cmd._replace(argv=inner_argv, wrapped_by=(*wrapped, program(argv[0]))), depth, parse)]
    here = cmd._replace(argv=tuple(argv), wrapped_by=tuple(wrapped))
    out = [*moved, here]
    name = here.name
    if name in ("xargs", "parallel"):
        for argv_run in input_runs(here):
            inner = Command(argv_run, stdin=cmd.stdin, feeder=cmd.feeder, wrapped_by=(*wrapped, name))
            out += unwrap(inner, depth, parse)
    elif name == "find":
        out += [run for c in find_runs(here) for run in unwrap(c, depth, parse)]
    elif name in ("fd", "fdfind") and (as_find := fd_as_find(here)) is not None:  # fd . ~ -x rm -rf
        out += [run for c in find_runs(as_find) for run in unwrap(c, depth, parse)]
    elif name == "ssh" and (remote := _ssh_command(list(here.args))):  # it runs on the other machine
        out += [c._replace(wrapped_by=(*wrapped, *c.wrapped_by, name)) for c in parse(remote, depth + 1)]
    elif (line := _command_line(here)) is not None:  # watch 'rm …', tmux new 'rm …', at <<< 'rm …'
        if isinstance(line, tuple):  # screen rm -rf …: the program and its arguments, run as given
            out += unwrap(Command(line, wrapped_by=(*wrapped, name)), depth, parse)
        else:
            out += [c._replace(wrapped_by=(*wrapped, *c.wrapped_by, name)) for c in parse(line, depth + 1)]
    elif name in SHELLS or name in ("su", "runuser", "eval", "source", ".") or name in _RUNS_CODE:
        script = inner_script(here) if name not in _RUNS_CODE else _shelled_out(here)
        if script:
            out += [
                Command(c.argv, c.redirects, c.stdin, c.feeder, (*wrapped, *c.wrapped_by, name), c.source, c.background)
                for c in parse(script, depth + 1)
            ]
    return out


# tools that run a command given after a subcommand of theirs: the subcommands, and the options
# (with a value) that may stand between it and the command
_RUNNERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "uv": (
        frozenset({"run"}),
        frozenset(
            {
                "--with",
                "--python",
                "-p",
                "--from",
                "--project",
                "--directory",
                "--env-file",
                "--extra",
                "--group",
                "--package",
                "--index",
            }
        ),
    ),
    "poetry": (frozenset({"run"}), frozenset({"-C", "--directory", "-P", "--project"})),
    "pipenv": (frozenset({"run"}), frozenset()),
    "pdm": (frozenset({"run"}), frozenset({"-p", "--project"})),
    "hatch": (frozenset({"run"}), frozenset({"-e", "--env"})),
    "rye": (frozenset({"run"}), frozenset()),
    "pnpm": (frozenset({"exec", "dlx"}), frozenset({"--filter", "-F", "-C", "--dir"})),
    "yarn": (frozenset({"exec", "dlx"}), frozenset({"-p", "--package"})),
    "npm": (frozenset({"exec", "x"}), frozenset({"-p", "--package", "-w", "--workspace"})),
    "bun": (frozenset({"x", "run"}), frozenset()),
    "bundle": (frozenset({"exec"}), frozenset({"--gemfile"})),  # bundle exec rake db:drop
    "mise": (frozenset({"exec", "x"}), frozenset()),
    "asdf": (frozenset({"exec"}), frozenset()),
    "docker": (
        frozenset({"exec"}),
        frozenset({"-e", "--env", "-u", "--user", "-w", "--workdir", "--env-file", "--detach-keys"}),
    ),
    "podman": (frozenset({"exec"}), frozenset({"-e", "--env", "-u", "--user", "-w", "--workdir", "--env-file"})),
    "nerdctl": (frozenset({"exec"}), frozenset({"-e", "--env", "-u", "--user", "-w", "--workdir", "--env-file"})),
    "docker-compose": (frozenset({"exec"}), frozenset({"-e", "--env", "-u", "--user", "-w", "--workdir", "--index"})),
    "podman-compose": (frozenset({"exec"}), frozenset({"-e", "--env", "-u", "--user", "-w", "--workdir", "--index"})),
    "kubectl": (frozenset({"exec"}), frozenset({"-n", "--namespace", "-c", "--container", "--context", "-f"})),
}
# `docker exec CONTAINER cmd…`: a name (a container's, a compose service's) before the command
_TAKES_TARGET = frozenset({"docker", "podman", "nerdctl", "docker-compose", "podman-compose"})
# `docker compose exec`, `docker container exec`: the runtime's command group before `exec`
_GROUPS = {"compose": "docker-compose", "container": ""}


def _runner_command(argv: list[str]) -> tuple[str, ...]:
    """The command a runner runs (``uv run pytest``, ``pnpm exec eslint``, ``docker exec db psql``,
    ``kubectl exec pod -- sh``, ``arch -arm64 make``, ``sg docker -c '…'``); () for any other program.
    ``bun run`` and ``npm exec`` name a script or package at times: a package name is read as a
    command, which is harmless."""
    name = program(argv[0])
    if name == "arch" and len(argv) > 1 and argv[1].startswith("-"):
        return tuple(skip_options(argv[1:], frozenset({"-e"})))
    if name == "sg" and len(argv) > 2:
        rest = argv[2:]
        return ("sh", *rest) if rest[0] == "-c" else tuple(rest)
    runner = _RUNNERS.get(name)
    if runner is None:
        return ()
    at = next((i for i, a in enumerate(argv[1:], 1) if not a.startswith("-")), None)
    if at is not None and name in _TAKES_TARGET and argv[at] in _GROUPS:  # docker compose exec app env
        runner = _RUNNERS.get(_GROUPS[argv[at]], runner)
        at = next((i for i, a in enumerate(argv[at + 1 :], at + 1) if not a.startswith("-")), None)
    if at is not None and name in ("pnpm", "yarn", "bun") and program(argv[at]) in _WRAPPERS:
        return tuple(argv[at:])  # pnpm c8 …, yarn cross-env …: a package's runner, named directly
    if at is None or argv[at] not in runner[0]:
        return ()
    rest = argv[at + 1 :]
    if name == "kubectl":
        return tuple(rest[rest.index("--") + 1 :]) if "--" in rest else ()
    rest = skip_options(rest, runner[1])
    if name in _TAKES_TARGET:
        rest = rest[1:]
    return tuple(rest)


# programs that hand their operands to a shell as one command line, and their options that take a value
_RUNS_LINE: dict[str, frozenset[str]] = {
    "watch": frozenset({"-n", "--interval", "-q", "--equexit", "--color"}),
    "screen": frozenset({"-S", "-c", "-e", "-h", "-L", "-Logfile", "-p", "-s", "-t", "-T", "-X"}),
    "tmux": frozenset({"-s", "-n", "-c", "-t", "-x", "-y", "-e", "-F", "-l", "-L", "-S", "-f"}),
    "dtach": frozenset({"-e", "-r", "-z"}),
}
_TMUX_RUNS = frozenset(
    {"new", "new-session", "new-window", "neww", "split-window", "splitw", "respawn-pane", "run-shell", "run"}
)
_HEROKU_RUN = frozenset({"-a", "--app", "-r", "--remote", "-s", "--size", "-e", "--env", "--type"})
_AWK = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
_EDITORS = frozenset({"vim", "vi", "nvim", "ex", "view", "vimdiff", "gvim"})
_DO_SHELL = re.compile(r'do shell script\s+"((?:[^"\\]|\\.){0,4000})"', re.I)
_BANG = re.compile(r"^[\s:]*(?:(?:silent|sil|exe(?:cute)?)!?\s+)*!(.+)$", re.S)  # `:silent !cmd`: the shell runs cmd


def _command_line(cmd: Command) -> str | tuple[str, ...] | None:
    """What ``cmd`` runs for its operands, for programs that run one: a shell command line
    (``watch``, ``tmux new 'CMD'``, ``script -c``, ``at``/``batch``'s input, ``awk``'s ``system()``)
    or a program with its arguments (``screen``, ``dtach``, ``tmux new`` given several words)."""
    name, args = cmd.name, list(cmd.args)
    if name == "tmux":
        at = next((i for i, a in enumerate(args) if a in _TMUX_RUNS), None)
        if at is None:
            return None
        rest = skip_options(args[at + 1 :], _RUNS_LINE["tmux"])
        return (rest[0] if len(rest) == 1 else tuple(rest)) or None
    if name in _RUNS_LINE:
        rest = skip_options(args, _RUNS_LINE[name])
        if name == "watch":  # watch joins its operands into one line for `sh -c`
            return " ".join(rest) or None
        return tuple(rest) or None
    if name == "heroku" and args[:1] in (["run"], ["run:detached"]):  # heroku run -a APP CMD: on the app's dyno
        rest = skip_options(args[1:], _HEROKU_RUN)
        return (rest[0] if len(rest) == 1 else tuple(rest)) or None
    if name in ("fly", "flyctl") and args[:2] == ["ssh", "console"]:  # fly ssh console -C CMD: on the app's machine
        return next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-C", "--command")), None)
    if name == "ansible" and _ANSIBLE_RUNS.intersection(_values(args, ("-m", "--module-name"))):
        return next(iter(_values(args, ("-a", "--args"))), None)  # ansible all -m shell -a CMD: on every host
    if name in ("salt", "salt-ssh") and "cmd.run" in args[:-1]:  # salt '*' cmd.run CMD
        return args[args.index("cmd.run") + 1]
    if name == "script":
        return next(
            (args[i + 1] for i, a in enumerate(args[:-1]) if a == "--command" or re.fullmatch(r"-\w*c", a)), None
        )
    if name == "trap" and len(args) >= 2 and not args[0].startswith("-"):  # trap 'rm -rf ~' EXIT: run on a signal
        return args[0]
    if name in ("at", "batch"):
        return cmd.stdin if cmd.stdin is not None else _piped_text(cmd.feeder)
    if name in _AWK:
        program_text = next((a for a in skip_options(args, frozenset({"-F", "-v", "-f"}))), "")
        calls = re.findall(r"system\s*\(\s*\"((?:[^\"\\]|\\.)*)\"", program_text)
        return "\n".join(calls) or None
    if name in ("npm", "pnpm") and args[:2] == ["pkg", "set"]:  # a script the next npm run (or install) runs
        return "\n".join(a.split("=", 1)[1] for a in args[2:] if a.startswith("scripts.") and "=" in a) or None
    if name == "npm" and args[:1] == ["set-script"] and len(args) > 2:  # npm set-script NAME 'CMD'
        return args[2]
    if name == "osascript":  # osascript -e 'do shell script "curl … | sh"': AppleScript hands it to sh
        scripts = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-e"] + ([cmd.stdin] if cmd.stdin else [])
        calls = [m.group(1) for text in scripts for m in _DO_SHELL.finditer(text)]
        return "\n".join(c.replace('\\"', '"') for c in calls) or None
    if name in _EDITORS:  # vim -c '!rm -rf ~', vim +'silent !cmd': an editor command that runs a shell line
        given = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-c", "--cmd")] + [
            a[1:] for a in args if a.startswith("+")
        ]
        lines = [m.group(1) for c in given if (m := _BANG.match(c))]
        return "\n".join(lines) or None
    return None


# interpreters whose inline code can hand a string to the shell (os.system, subprocess, execSync, ``...``)
_RUNS_CODE = {"python": "-c", "python3": "-c", "perl": "-e", "ruby": "-e", "node": "-e", "php": "-r", "bun": "-e"}
_SHELLS_OUT = re.compile(
    r"system\s*[(\"']|subprocess|popen|exec(?:Sync|File(?:Sync)?|[lv]p?e?)?\s*[(\"']|spawn|`|%x|\bqx|Runtime|shell_exec|passthru|check_output"
    r"|run\s*\(|Open3\."
)


def _shelled_out(cmd: Command) -> str:
    """The shell commands an interpreter's inline code runs: the strings it hands to a shell."""
    flag = _RUNS_CODE[cmd.name]
    args = list(cmd.args)
    code = next((args[i + 1] for i, a in enumerate(args[:-1]) if a == flag), "")
    if not code and not [a for a in args if not a.startswith("-")]:
        code = cmd.stdin or ""  # python3 <<EOF … EOF: the here-document is the program
    if not code:
        return ""
    readable = readable_code(code)  # from os import system as s: s('…') reads as os.system('…')
    if not _SHELLS_OUT.search(code) and not _SHELLS_OUT.search(readable):
        return ""
    return "\n".join(shell_strings(readable, backticks=cmd.name in ("ruby", "perl", "php")))


_ANSIBLE_RUNS = frozenset({"shell", "command", "raw", "ansible.builtin.shell", "ansible.builtin.command"})


def _values(args: list[str], options: tuple[str, ...]) -> list[str]:
    """The values ``args`` gives ``options`` (``-m shell``, ``--module-name=shell``)."""
    given = [b for a, b in pairwise(args) if a in options]
    return given + [a.split("=", 1)[1] for a in args if a.startswith("--") and a.split("=", 1)[0] in options]


_SSH_VALUE = frozenset("bcDEeFIiJLlmOopQRSWw")


def _ssh_command(args: list[str]) -> str:
    """The command ``ssh [options] host COMMAND…`` runs on the remote machine ("" for a login)."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if len(args[i]) == 2 and args[i][1] in _SSH_VALUE else 1
    return " ".join(args[i + 1 :])


def inner_script(cmd: Command) -> str | None:
    """The script a shell (or ``eval``, ``su -c``) runs: ``-c``'s argument, or its standard input."""
    args = list(cmd.args)
    if cmd.name == "eval":
        return _printed_by(_here_text(" ".join(args)))
    for i, a in enumerate(args):
        script = None
        if _C_BUNDLE.fullmatch(a) and i + 1 < len(args):  # -c, -lc, -xec; not -ExecutionPolicy
            at = i + 2 if args[i + 1] == "--" and i + 2 < len(args) else i + 1
            script = _with_parameters(args[at], args[at + 1 :]) if cmd.name not in ("cmd", "su") else args[at]
        elif a.lower() in ("--command", "-command", "/c", "/k") and i + 1 < len(args):
            script = " ".join(args[i + 1 :]) if cmd.name == "cmd" else args[i + 1]
        if script is not None:
            # cmd and PowerShell have no backslash escapes: C:\Users\dev is a path, as written
            return script.replace("\\", "/") if cmd.name in ("cmd", "powershell", "pwsh") else _here_text(script)
    positional = [a for a in args if not a.startswith("-")]
    if positional and positional[0].startswith("<(") and positional[0].endswith(")"):
        return _substituted_text(positional[0][2:-1])  # bash <(echo 'rm -rf ~'): the script is what it prints
    if positional and positional[0] not in STDIN_PATHS:
        return None  # a script file: its text is not on the line
    if cmd.name in ("source", ".") and not positional:
        return None
    if cmd.stdin is not None:
        return cmd.stdin
    return _piped_text(cmd.feeder)


def _with_parameters(script: str, given: list[str]) -> str:
    """``sh -c 'rm -rf "$@"' _ ~``: the script with the words after it in place of ``$0``, ``$1``…,
    ``$@`` and ``$*`` (the first word is ``$0``)."""
    if not given or "$" not in script:
        return script

    def quoted(w: str) -> str:  # a word as given (~ and globs already the outer shell's), quoted if it must be
        return shlex.quote(w) if re.search(r"[\s'\"\\;&|<>()$`]", w) or not w else w

    def word(m: re.Match[str]) -> str:
        name = next(g for g in m.groups() if g)
        if name in ("@", "*"):
            return " ".join(quoted(w) for w in given[1:])
        n = int(name)
        return quoted(given[n]) if n < len(given) else ""

    every = re.sub(r'"\$([@*])"', word, script)  # "$@": the words, each one
    return re.sub(r"\$\{(\d+|[@*])\}|\$(\d|[@*])", word, every)


_C_BUNDLE = re.compile(r"-[abefhiklmnprstuvxBCEHOPT]*c[abefhiklmnprstuvxBCEHOPT]*")
_CAT_HEREDOC = re.compile(r"^\s*\$\(\s*cat\s+<<-?\s*['\"]?(\w+)['\"]?[^\n]*\n(.*?)\n\s*\1\s*\)\s*$", re.S)


_SUBSTITUTED_PRINT = re.compile(r"^\s*(?:\$\(\s*((?:echo|printf)\s.*)\)|`((?:echo|printf)\s[^`]*)`)\s*$", re.S)


def _printed_by(script: str) -> str:
    """``eval "$(printf '%s' 'rm -rf ~')"``: what the substituted ``echo``/``printf`` prints is the script."""
    m = _SUBSTITUTED_PRINT.match(script)
    if not m:
        return script
    try:
        words = shlex.split(m.group(1) or m.group(2))
    except ValueError:
        return script
    return printed_text(Command(tuple(words)))


def _here_text(script: str) -> str:
    """``bash -c "$(cat <<EOF … EOF)"``: the here-document is the script."""
    m = _CAT_HEREDOC.match(script)
    return m.group(2) if m else script


def _substituted_text(line: str) -> str | None:
    """What the pipeline inside ``<(…)`` prints, when the line spells it (``echo``, ``printf``, their
    base64 decoded): a shell given that file as its script runs it."""
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return None
    feeder: Command | None = None
    stage: list[str] = []
    for word in [*words, "|"]:
        if word != "|":
            stage.append(word)
            continue
        if not stage or any(set(w) <= set(";&<>()") for w in stage):
            return None  # a list, a redirection, a subshell: not one plain pipeline
        feeder, stage = Command(tuple(stage), feeder=feeder), []
    return _piped_text(feeder)


def _piped_text(feeder: Command | None) -> str | None:
    """What a command pipes out when the line spells it: ``echo``/``printf`` words, or their base64 decoded."""
    if feeder is None:
        return None
    if feeder.name in ("echo", "printf"):
        text = " ".join(printed(feeder))
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
