"""The guard's rules for one shell command line: every category, and the writes, databases,
pushes and the pack's table of destructive commands.

Each rule reads the simple commands ``_shell`` found (wrappers peeled, inner scripts read) with
their arguments resolved against the session's ``cwd``. The vocabulary (system trees, secret file
names, protected branches, destructive programs) is the pack's data; this module is the logic.
"""

from __future__ import annotations

import functools
import os
import re
import time
from collections.abc import Callable, Iterator
from fnmatch import fnmatchcase
from typing import Any

from watcher.guard import _git
from watcher.guard._arrays import arrays_in_place
from watcher.guard._bindings import bindings, named_programs
from watcher.guard._bombs import bombs, spawns_itself
from watcher.guard._cases import cases_chosen
from watcher.guard._code_calls import code_writes, file_calls
from watcher.guard._context import INTERPRETERS, NETWORK, At, inline_code, readable_code
from watcher.guard._control import host_control, remote_shell
from watcher.guard._damage import deletes, devices, emptied_buckets, permissions
from watcher.guard._database import database, test_database
from watcher.guard._defined import defined_calls
from watcher.guard._exfiltration import exfiltration, hosts_of, logs_in, not_its_service, remote
from watcher.guard._files import Finding, config_inside, secret_file, write_finding
from watcher.guard._inspect import container_env, environment_shown
from watcher.guard._lazy import lazy
from watcher.guard._loops import loops_unrolled
from watcher.guard._own_path import with_own_path
from watcher.guard._package import make_recipes, package_scripts
from watcher.guard._paths import UNSET, Place, matches_any, under_any
from watcher.guard._policy import Policy, compiled
from watcher.guard._ran import Ran, notebook_parts, readable, runner_of, script_ran, without_notes
from watcher.guard._registry import insecure_install, registry_setting
from watcher.guard._remote import download_exec, downloaded_then_run
from watcher.guard._secrets import redirected_reads, secret_reads
from watcher.guard._set_by import builtins_assigned
from watcher.guard._shell import Command, TooLong, commands
from watcher.guard._simple import option_outputs, printed_text
from watcher.guard._urls import fetched_urls
from watcher.guard._wrappers import unwrap

__all__ = ["READ_BUDGET_S", "shell_findings"]

# the longest the guard reads one command line: a hook answers within its budget (2 s by default)
READ_BUDGET_S = 1.0

_IFS = lazy(r"\$\{IFS\}|\$IFS(?!\w)")
_FISHING = re.compile(r"(?i)key|token|secret|passw|cred|auth|aws|(?<![a-z])api|private")


def _fishes(pattern: str, policy: Policy) -> bool:
    """A filter's pattern that picks out secrets (``grep -i token``), not a list of named settings
    (``grep -E '^(AWS_PROFILE|AWS_REGION)='``: whole names, none of them a secret's)."""
    if not _FISHING.search(pattern):
        return False
    names = [n for n in re.split(r"[\s^$()|=]+|\\b", pattern) if n]
    settings = all(re.fullmatch(r"[A-Z][A-Z0-9_]*", n) for n in names) and "_" in pattern
    return not settings or any(compiled(policy, "secrets.env_names").match(n) for n in names)


# wrappers that run a builtin in the shell itself: `builtin cd ..` moves the script as `cd ..` does
_SAME_SHELL = frozenset({"builtin", "command"})


def _with_readings(script: str, *readings: Callable[[str], str]) -> str:
    """``script`` with what each reading knows written in (its own path, arrays, loops, the branch a
    ``case`` takes). A reading that fails leaves the script as it was: the rules still read it as
    written, and a fault of a helper never denies a call by itself."""
    for reading in readings:
        try:
            script = reading(script)
        except Exception:  # noqa: BLE001 - the text as written is still judged
            continue
    return script


def shell_findings(script: str, place: Place, policy: Policy) -> Iterator[Finding]:
    """(category, reason) for each dangerous thing ``script`` would do, in the order found."""
    deadline = time.monotonic() + READ_BUDGET_S
    if "IFS" in script:  # rm${IFS}-rf${IFS}~: the shell splits the words where $IFS stands
        script = _IFS.sub(" ", script)
    script = _with_readings(script, builtins_assigned, arrays_in_place, loops_unrolled)
    try:
        cmds = commands(script, deadline=deadline)
    except TooLong as exc:
        yield "unreadable", f"is too long for the guard to read in the time a hook has ({exc})"
        return
    yield from _findings(script, cmds, place, policy, deadline, 0)


def _findings(
    script: str, cmds: list[Command], place: Place, policy: Policy, deadline: float, depth: int
) -> Iterator[Finding]:
    """The findings of ``cmds``, the commands ``script`` runs (``depth``: scripts run by scripts)."""
    assigned, values = bindings(script)
    if values:  # TMPDIR=/Users rm -rf $TMPDIR/x: the path is the one written
        place = place._replace(values=values)
    if "ln" in script and (links := _links(cmds, place)):  # ln -s ~ h && rm -rf h/: h/ is the home
        place = place._replace(links=links)
    cmds += named_programs(script, cmds, deadline) + _git.aliased(script, cmds)
    for line in _git.shell_aliased(script, cmds):  # git -c alias.x='!rm -rf ~' x: the shell runs the alias
        try:
            cmds += commands(line, depth + 1, deadline)
        except TooLong:
            continue
    called, given = defined_calls(script, cmds, deadline)
    cmds += called
    cmds += [  # os.chmod('/etc/sudoers', 0o666) in inline code: the chmod it amounts to
        Command(argv, wrapped_by=(*c.wrapped_by, c.name), source=c.source)
        for c in list(cmds)
        if c.name in INTERPRETERS and (code := inline_code(c))
        for argv in file_calls(readable_code(code))
    ]
    assigned |= given  # a function's "$1" is its caller's argument, judged in the calls written out
    nounset = bool(re.search(r"(^|[\s;])set\s+(-\w*u|-o\s+nounset)", script))
    fed: dict[str, set[str]] = {}  # a command's text -> the programs its output is piped into
    for c in cmds:
        if c.feeder is not None:
            fishing = c.name in ("grep", "egrep", "rg", "awk", "sed") and any(_fishes(a, policy) for a in c.args)
            prints = any(a == "-o" or a.startswith(("--output", "-o")) for a in c.args)  # apply -f - -o yaml: shown
            taker = (
                "{secret filter}" if fishing else _login(c) if _STDIN_LOGIN.search(c.source) and not prints else c.name
            )
            fed.setdefault(c.feeder.source, set()).add(taker)
        elif c.captured_by == "=" and "$(" in script:  # T=$(gh auth token): where $T goes is where its output goes
            for taker in _variable_takers(script, c, cmds, place, policy):
                fed.setdefault(c.source, set()).add(taker)
    yield from bombs(script, cmds)
    if policy.enabled("download-exec") and (found := downloaded_then_run(script, cmds, place)):
        yield found
    if policy.enabled("infrastructure") and (found := emptied_buckets(cmds, place)):
        yield found
    inner: tuple[tuple[str, ...], Place] | None = None  # where a wrapped script (bash -c '…') has moved to
    written: dict[str, str] = {}  # files the line writes before it may run them: path -> text ("": unknown)
    for n, c in enumerate(cmds):
        if n % 64 == 63 and time.monotonic() > deadline:
            yield "unreadable", f"is too long for the guard to read in the time a hook has ({len(cmds)} commands)"
            return
        if not c.argv:
            continue
        scope = tuple(w for w in c.wrapped_by if w not in _SAME_SHELL)
        if not scope:
            inner = None  # back in the script itself: a wrapped script's cd is over
        here = inner[1] if inner is not None and inner[0] == scope else place
        if c.name in ("cd", "pushd"):  # later commands run there (the project stays)
            moved = here.moved(next((a for a in c.args if not a.startswith("-")), ""))
            if scope:
                inner = (scope, moved)  # only the rest of that script runs there
            else:
                place = moved
            continue
        ctx = At(c, here, policy, assigned, nounset, frozenset(fed.get(c.source, ())))
        for rule in _RULES:
            found = rule(ctx)
            if found is not None:
                yield found
        if depth < _MAX_SCRIPT_DEPTH and not INTERPRETERS.keys() & set(c.wrapped_by) and (ran := script_ran(c, here)):
            yield from _script_findings(ran, c, written, here, policy, deadline, depth)  # not a string in code
        if depth < _MAX_SCRIPT_DEPTH and c.name in _PACKAGE_MANAGERS:  # npm run clean: package.json's line
            read = functools.partial(readable, place=here)
            for script, line in [*package_scripts(c, here.cwd, read), *make_recipes(c, here.cwd, read)]:
                for category, reason in _findings(
                    line, commands(line, depth + 1, deadline), here, policy, deadline, depth + 1
                ):
                    if category != "unreadable":
                        kind = "make target" if c.name in ("make", "gmake") else "package script"
                        yield category, f"runs the {kind} {script} ({_shown(line)}), which {reason}"
        for word, text in _written(ctx):
            path = ctx.path(word)
            written[path] = written.get(path, "") + text if text and ">>" in _operator(c, word) else text


def _links(cmds: list[Command], place: Place) -> tuple[tuple[str, str], ...]:
    """The symbolic links ``cmds`` make (``ln -s TARGET [NAME]``, ``ln -sfn …``): (the link, its target)."""
    out = []
    for c in cmds:
        if c.name != "ln" or not any(re.fullmatch(r"-[a-zA-Z]*s[a-zA-Z]*|--symbolic", a) for a in c.args):
            continue
        words = [a for a in c.args if not a.startswith("-")]
        if not words or len(words) > 2:
            continue
        link = place.resolve(words[1] if len(words) == 2 else os.path.basename(words[0].rstrip("/")) or ".")
        if link == UNSET:
            continue
        relative = not words[0].startswith(("/", "~", "$"))  # a relative target is from the link's folder
        target = (
            os.path.normpath(os.path.join(os.path.dirname(link), words[0])) if relative else place.resolve(words[0])
        )
        if target != UNSET and link != target:
            out.append((link, target))
    return tuple(out)


_MAX_SCRIPT_DEPTH = 2  # a script run by a script run by the line is read; one further is not
_PACKAGE_MANAGERS = frozenset({"npm", "pnpm", "yarn", "bun", "make", "gmake"})  # they run a file's scripts


def _operator(c: Command, word: str) -> str:
    return next((op for op, t in c.redirects if t == word), "")


def _script_findings(
    ran: Ran, c: Command, written: dict[str, str], place: Place, policy: Policy, deadline: float, depth: int
) -> Iterator[Finding]:
    """What the script ``c`` runs would do: its text from the line that wrote it, else from the disk."""
    text = written[ran.path] if ran.path in written else readable(ran.path, place)
    if not text:
        return
    runner = runner_of(ran, text)
    if runner == "sql":  # the client with the file's statements as its input
        fed = c._replace(stdin=text, redirects=tuple(r for r in c.redirects if r[0] != "<"))
        for category, reason in _findings("", [fed], place, policy, deadline, depth + 1):
            yield category, f"runs {ran.word}, a file of SQL that {reason}"
        return
    shell, code = notebook_parts(text) if runner == "notebook" else ("", text) if runner != "sh" else (text, "")
    # $0 and its folder, arrays and loops written out, the branch a case on a known value takes
    if shell:
        given = tuple(c.argv[c.argv.index(ran.word) + 1 :]) if ran.word in c.argv else ()  # the script's own
        shell = _with_readings(
            shell,
            lambda text: with_own_path(text, ran.path),
            arrays_in_place,
            loops_unrolled,
            lambda text: cases_chosen(text, given),
        )
    runner = "python3" if runner == "notebook" else runner
    try:
        cmds = commands(shell, deadline=deadline) if shell.strip() else []
        if code.strip() and runner in INTERPRETERS:
            if policy.enabled("resource-bomb") and (why := spawns_itself(code)):
                yield "resource-bomb", f"runs {ran.word}, a script that {why}"
                return
            # the script's own path and folder, as it runs (Python's __file__, Node's __filename, __dirname)
            code = code.replace("__file__", repr(ran.path)).replace("__filename", repr(ran.path))
            code = code.replace("__dirname", repr(os.path.dirname(ran.path)))
            from watcher.guard._python import python_readable  # its parser imported when a script runs

            # Python as its syntax tree reads it (values in place, no notes); else without its notes
            code = (runner.startswith("python") and python_readable(code)) or without_notes(code)
            run = Command((runner, INTERPRETERS[runner], code), wrapped_by=(*c.wrapped_by, c.name))
            cmds += unwrap(run, 0, lambda text, d: commands(text, d, deadline))
    except TooLong:
        return  # a script too long to read in time: its command line alone was judged
    for category, reason in _findings(shell, cmds, place, policy, deadline, depth + 1):
        if category != "unreadable":
            yield category, f"runs {ran.word}, a script that {reason}"


# git commands that run the repository's hooks, and the settings that make the hook managers skip them
_HOOKED = frozenset({"commit", "push", "merge", "rebase", "am", "cherry-pick"})
_SKIPS_HOOKS = re.compile(
    r"(?:^|\s)(?:HUSKY=0|HUSKY_SKIP_HOOKS=1|SKIP=\S+|LEFTHOOK=0|LEFTHOOK_EXCLUDE=\S+|OVERCOMMIT_DISABLE=1|PRE_COMMIT_ALLOW_NO_CONFIG=1)(?=\s)"
)
# ssh-keygen's modes that only read a key (fingerprint, public half, lookups, conversions out)
_KEYGEN_READS = frozenset({"-l", "-y", "-F", "-L", "-Y", "-e", "-B", "-D", "-H", "-R"})


# commands that print certificates (public), never a private key
_CERTIFICATE_PRINTERS = re.compile(
    r"security find-certificate\b|openssl (?:x509|s_client|crl2pkcs7)\b|keytool -exportcert\b|step certificate inspect\b"
)


def _written(x: At) -> list[tuple[str, str]]:
    """(path word, content when known) of every file this command writes."""
    printing = x.name in ("echo", "printf") and x.cmd.args
    content = printed_text(x.cmd) if printing else (x.cmd.stdin or "")  # escapes decoded, printf's %s filled
    if _CERTIFICATE_PRINTERS.match(" ".join(x.cmd.argv)) and "-key" not in " ".join(x.cmd.args):
        content = "-----BEGIN CERTIFICATE-----"  # what it prints, as a file's content to judge
    if x.name == "tee" and x.cmd.feeder is not None and x.cmd.feeder.name in ("echo", "printf", "cat"):
        content += " ".join(x.cmd.feeder.args)
    out = [(t, content) for op, t in x.cmd.redirects if ">" in op and not t.isdigit() and t != "&1"]
    name = x.name
    out += [(w, "") for w in option_outputs(name, x.args)]  # curl -o ~/.bashrc URL, sort -o F
    if name == "tee":
        out += [(p, content) for p in x.positional]
    elif name == "sponge":  # jq … f | sponge f: what it soaks up is written over f
        out += [(p, "") for p in x.positional[:1]]
    elif name in ("cp", "mv", "install", "ln", "rsync", "scp") and len(x.positional) >= 2:
        out.append((x.positional[-1], ""))
        if name == "mv":  # the sources are gone from where they were
            out += [(p, "") for p in x.positional[:-1]]
    elif name in ("sed", "perl", "ruby") and any(_in_place(name, a) for a in x.args):
        edit = " ".join(x.cmd.args)  # what the expression writes in: a key put into the file by s|…|…|
        out += [(p, edit) for p in x.positional[1:]]
    elif name == "git" and x.positional[:1] == ["rm"] and "--cached" not in x.args:
        out += [(p, "") for p in x.positional[1:]]
    elif name == "git" and x.positional[:1] in (["checkout"], ["restore"]):  # another version written over
        out += [(p, "") for p in _checked_out(x)]
    elif name == "yq" and any(a in ("-i", "--inplace", "--in-place") for a in x.args):  # yq -i EXPR FILE…
        out += [(p, " ".join(x.cmd.args)) for p in x.positional[1:]]
    elif name == "sd":  # sd FIND REPLACE FILE…: in place, always
        out += [(p, " ".join(x.cmd.args)) for p in x.positional[2:]]
    elif name == "patch" and x.positional:  # patch FILE < change.diff
        out.append((x.positional[0], ""))
    elif name == "ssh-keygen" and not _KEYGEN_READS & set(x.args):  # a key there already, remade or re-keyed
        out += [(f, "") for i, a in enumerate(x.args[:-1]) if a == "-f" and os.path.lexists(x.path(f := x.args[i + 1]))]
    elif name in ("rm", "unlink", "shred", "truncate", "touch", "dd"):
        out += [(p, "") for p in x.positional if name != "dd"] + [(a[3:], "") for a in x.args if a.startswith("of=")]
    elif (code := inline_code(x.cmd)) and re.search(
        r"write|open|dump|append|copy|move|rename|replace|FileUtils|put_contents|(?i:content|out-file)|>", code
    ):
        out += [(path, code) for path in code_writes(readable_code(code))]  # what it writes is in the code
    return out


# editors and pagers people point git at: setting one runs nothing of the agent's choosing
_EDITORS = frozenset(
    {"vim", "vi", "nvim", "nano", "pico", "emacs", "emacsclient", "code", "code-insiders", "codium", "cursor", "subl",
     "mate", "micro", "hx", "helix", "kak", "zed", "gedit", "kate", "notepad", "notepad++", "less", "more", "most",
     "delta", "diff-so-fancy", "bat", "cat", "riff", "diff-highlight", "ed", "joe", "ne", "true"}
)  # fmt: skip


# credential helpers that keep a login in the system's keychain or in memory (not `store`: a plain file)
_KEYCHAINS = frozenset({"osxkeychain", "manager", "manager-core", "libsecret", "wincred", "gnome-keyring", "cache"})


def _plain_tool(value: str) -> bool:
    """``value`` runs a known editor or pager with options only (``code --wait``, ``less -FRX``)."""
    words = value.split()
    return bool(words) and not re.search(r"[;&|`$()<>\\]", value) and os.path.basename(words[0]) in _EDITORS


def _checked_out(x: At) -> list[str]:
    """The paths ``git checkout REF -- PATH…`` or ``git restore [--source REF] PATH…`` writes (not
    ``--staged`` alone, which changes the index only); a branch switched to writes none named here."""
    args = list(x.args)
    if "--" in args:
        return args[args.index("--") + 1 :]
    index_only = ("--staged" in args or "-S" in args) and not {"--worktree", "-W"} & set(args)
    if x.positional[:1] != ["restore"] or index_only:
        return []
    valued = {"--source", "-s"}
    return [a for i, a in enumerate(args[1:], 1) if not a.startswith("-") and args[i - 1] not in valued]


def _staged_secrets(x: At) -> Finding | None:
    """``git add id_rsa``: a credential put into the repository's history, from where a push publishes it."""
    if x.name != "git" or x.positional[:1] not in (["add"], ["stage"]) or not x.on("secret-exfiltration"):
        return None
    for word in x.positional[1:]:
        why = secret_file(x.place, x.path(word), x.policy)
        if why:
            return "secret-exfiltration", f"stages {why} into git: once committed and pushed, it is public for good"
    return None


def _in_place(name: str, arg: str) -> bool:
    """``arg`` makes ``name`` edit its files in place (BSD sed's ``-I`` too; perl's ``-I`` is a path)."""
    bundle = r"-[nErsuz]*[iI].*" if name == "sed" else r"-[aclnpsStTuUwWX0-9]*i.*"  # switches before i
    return arg.startswith("--in-place") or bool(re.fullmatch(bundle, arg))


def _writes(x: At) -> Finding | None:
    folders = x.name in ("mv", "rsync") or "r" in x.short.lower() or "--recursive" in x.args  # rm takes folders with -r
    for word, content in _written(x):
        if word in ("-", "/dev/null"):
            continue
        found = write_finding(x.place, x.path(word), x.policy, content)
        if (
            found is None
            and folders
            and (x.name in ("rm", "mv", "rsync") or x.positional[:1] == ["rm"])
            and (setting := config_inside(x.place, x.path(word), x.policy))
        ):
            found = "config-tampering", f"removes {setting} with the folder that holds it"
        if found is not None and x.on(found[0]):
            if found[0] == "secret-write" and (x.name in ("rm", "unlink", "shred", "touch") or x.name == "git"):
                continue  # deleting or touching a credential file is not writing one
            if found[0] == "secret-write" and x.name in ("cp", "install") and _from_templates(x):
                continue  # cp .env.example .env: the template's placeholders, for the person to fill in
            if found[0] == "secret-write" and _fills_template(x):
                continue  # sed 's|^X=.*|X=local|' .env.example > .env: the template, filled with local values
            if found[0] == "secret-write" and _new_random_key(x, x.path(word)):
                continue  # dd if=/dev/urandom of=secret.key: a new key made here, no credential overwritten
            return found
    if x.name == "git" and x.on("config-tampering"):
        keys = x.policy.data["config"]["git_keys"]
        for i, a in enumerate(x.args):
            if (a == "-c" and i + 1 < len(x.args)) or a.startswith("--config-env"):
                key = x.args[i + 1].split("=", 1)[0].lower() if a == "-c" else ""
                # for one call, a program git runs is one the agent could run itself: only
                # skipping the repository's hooks is tampering (git -c core.editor=true rebase is not)
                if key == "core.hookspath":
                    return (
                        "config-tampering",
                        f"runs git with {key} overridden: it bypasses or replaces the repository's git hooks",
                    )
        unset = bool({"--unset", "--unset-all"} & set(x.args))
        if ("config" in x.positional[:1] and len(x.positional) >= 3) or unset:
            key = next((p.lower() for p in x.positional[1:] if "." in p), "")
            value = x.positional[-1] if len(x.positional) >= 3 else ""
            if unset and key != "core.hookspath":
                return None  # unsetting a program git would run takes nothing away but hooks.path
            if key in ("core.editor", "core.pager", "sequence.editor") and _plain_tool(value):
                return None  # git config --global core.editor vim: the person's usual editor or pager
            if key == "credential.helper" and value.split()[:1] and value.split()[0] in _KEYCHAINS:
                return None  # the system's keychain (osxkeychain, manager, libsecret), or git's memory cache
            if any(fnmatchcase(key, k) for k in keys) or (key.startswith("alias.") and value.startswith("!")):
                return "config-tampering", f"sets git's {key}: git would run a program of the agent's choosing"
    return None


_RANDOM = frozenset({"/dev/urandom", "/dev/random", "if=/dev/urandom", "if=/dev/random"})


def _new_random_key(x: At, path: str) -> bool:
    """``x`` makes a new key file in the project (or a temporary folder) out of random bytes (``head -c 32 /dev/urandom > k.key``,
    ``openssl rand … | …``): nothing the person set is overwritten and no secret is on the line."""
    temporary = under_any(x.place, path, x.policy.data["paths"]["temporary"]) and x.place.in_home(path) is None
    if not (x.place.inside_project(path) or temporary) or os.path.lexists(path):
        return False
    cmd: Command | None = x.cmd
    while cmd is not None:
        if not _RANDOM.isdisjoint(cmd.args) or (cmd.name == "openssl" and cmd.args[:1] == ("rand",)):
            return True
        cmd = cmd.feeder
    return False


def _fills_template(x: At) -> bool:
    """``x`` prints a template (``.env.example``) into the file it writes, edited on the way
    (``sed``, ``envsubst``, ``awk``): the template's placeholders, or values the line spells out."""
    templates = x.policy.data["secrets"]["not"]
    return x.name in ("sed", "envsubst", "cat", "awk", "gawk") and any(
        matches_any(x.place, x.path(p), templates) for p in x.positional if _TEMPLATE_NAME.search(p)
    )


_TEMPLATE_NAME = lazy(r"(?:^|[./_-])(?:example|sample|template|dist|defaults)(?:$|[._-])")


def _from_templates(x: At) -> bool:
    sources = x.positional[:-1]
    return bool(sources) and all(matches_any(x.place, x.path(s), x.policy.data["secrets"]["not"]) for s in sources)


def _pushes(x: At) -> Finding | None:
    if x.name != "git":
        return None
    if (
        x.on("config-tampering")
        and x.positional[:1]
        and x.positional[0] in _HOOKED
        and _SKIPS_HOOKS.search(x.cmd.source)
    ):
        return "config-tampering", "skips the repository's git hooks through the environment (HUSKY=0, SKIP=…)"
    if x.on("destructive-delete") and (found := _git.clean_finding(list(x.args), x.place)):
        return found
    return _git.push_finding(list(x.args), x.place, x.policy) if x.on("force-push") else None


# programs that show what a ``$(…)`` hands them: a secret captured for them still reaches the screen
_SHOWS = frozenset(
    {"echo", "printf", "print", "cat", "tee", "?", "=", "logger", "jq", "yq", "env", "printenv", "export", "set"}
)  # =: a variable, shown later


def _table_rules(x: At) -> list[dict[str, Any]]:
    """The pack's command rules that can match ``x``, in the pack's order: those naming its program,
    and program-only rules naming a wrapper it runs under (one lookup, not a pass over every rule)."""
    cache = x.policy.data.setdefault("_compiled", {})
    index = cache.get("_table")
    if index is None:
        by_program: dict[str, list[int]] = {}
        for i, rule in enumerate(x.policy.data.get("command", [])):
            for name in rule["program"]:
                by_program.setdefault(name, []).append(i)
        wrapping = [i for i, r in enumerate(x.policy.data.get("command", [])) if not r["words"] and not r.get("flags")]
        index = cache["_table"] = (by_program, wrapping)
    by_program, wrapping = index
    rules = x.policy.data.get("command", [])
    found = set(by_program.get(x.name, ()))
    if x.cmd.wrapped_by:
        found.update(i for i in wrapping if any(w in rules[i]["program"] for w in x.cmd.wrapped_by))
    return [rules[i] for i in sorted(found)]


# a login that reads its password or token from stdin (`docker login --password-stdin`, `gh auth
# login --with-token`, `vault login -`): what is piped into it is handed over, never shown
# (and `kubectl apply -f -`: manifests handed to the cluster, never printed)
_STDIN_LOGIN = lazy(
    r"\blogin\b.*(?:--password-stdin|--with-token|\s-\s*$|\s-\s)"
    r"|^\s*(?:kubectl|oc)\b.*\b(?:apply|create|replace)\b.*(?:-f\s*-|--filename[=\s]-)(?:\s|$)"
)


def _variable_takers(script: str, c: Command, cmds: list[Command], place: Place, policy: Policy) -> list[str]:
    """The commands that use the variable ``c``'s output is assigned to (``T=$(gh auth token)``), as
    ``fed`` names them: ``{login}HOST`` where ``$T`` is a request's own login header to HOST, else
    the program (``echo "$T"`` shows it). Nothing known (no such variable found): ``?``."""
    m = re.search(rf"(?:^|[\s;&|(])([A-Za-z_]\w*)=[\"']?\$\(\s*{re.escape(c.source)}\s*\)", script)
    if m is None:
        return ["?"]
    use = re.compile(rf"\$(?:{m[1]}\b|\{{{m[1]}\}})")
    takers = []
    for d in cmds:
        for i, a in enumerate(d.args):
            if not use.search(a):
                continue
            if d.name in NETWORK and logs_in(d.args, i):
                hosts = hosts_of(At(d, place, policy, frozenset(), False, frozenset()))
                takers += ["{login}" + h.lower() for h in hosts] or ["{login}?"]
            else:
                takers.append(d.name)
    return takers or ["?"]


def _login(c: Command) -> str:
    """``{login}`` and the host a stdin login hands its secret to (the last word after ``login``:
    ``docker login --password-stdin 123.dkr.ecr.…amazonaws.com``); none named: its default."""
    args = list(c.args)
    valued = ("-u", "--username", "-p", "--password")  # docker login -u NAME SERVER
    words = [a for i, a in enumerate(args) if not a.startswith("-") and not (i and args[i - 1] in valued)]
    after = words[words.index("login") + 1 :] if "login" in words else []
    server = after[-1] if after and after[-1] != "-" else ""
    return "{login}" + server.split("://", 1)[-1].split("/", 1)[0].lower()


def _handed_to_its_login(x: At) -> bool:
    """Every program ``x``'s output is piped into is a stdin login, to the CLI's own service's hosts
    (a GitHub token to ghcr.io, not to a stranger's registry); a CLI of no known service, to any."""
    if not x.fed or not all(t.startswith("{login}") for t in x.fed) or x.cmd.redirects:
        return False
    globs = x.policy.data["network"].get("credential_hosts", {}).get(_CLI_SERVICE.get(x.name, ""))
    hosts = [t[7:] for t in x.fed]
    return not globs or all(h and any(fnmatchcase(h, g) for g in globs) for h in hosts)


def _table(x: At, *, captured: bool = True) -> Finding | None:
    for rule in _table_rules(x):
        if rule["category"] == "secret-read" and captured and x.cmd.captured_by and x.cmd.captured_by not in _SHOWS:
            continue  # --set password=$(kubectl get secret …): handed to the program, never shown
        if rule["category"] == "secret-read" and _handed_to_its_login(x):
            continue  # aws ecr get-login-password | docker login --password-stdin …
        if rule["category"] == "device-write" and _image_only(x):
            continue  # parted/wipefs/sgdisk on ./disk.img: a file, not a disk of this machine
        if x.on(rule["category"]) and _matches(rule, x) and not (rule["category"] == "database" and test_database(x)):
            named = x.name if x.name in rule["program"] else rule["program"][0]  # or the wrapper it runs under
            ran = _shown(x.cmd.source) if rule["words"] else named
            return rule["category"], f"runs `{ran}`, which {rule['reason']}"
    return None


def _shown(source: str) -> str:
    """A command's text as a reason quotes it: one line, at most 60 characters."""
    line = " ".join(source.split())
    return line if len(line) <= 60 else line[:57] + "…"


_IMAGE = re.compile(r"(?i).+\.(?:img|iso|raw|qcow2?|vhdx?|vmdk|vdi|dmg|sparseimage)")


def _image_only(x: At) -> bool:
    """The disk tool's operands name a disk image file and no device or mounted volume."""
    paths = [x.path(p) for p in x.positional]
    return any(_IMAGE.fullmatch(p) for p in paths) and not any(p.startswith(("/dev/", "/Volumes/")) for p in paths)


def _sent_secrets(x: At) -> Finding | None:
    """A network command sending what a secret-printing CLI prints (``curl -d "$(gh auth token)" …``);
    a token in an ``Authorization`` header or ``-u`` is the request's own login."""
    if x.name not in NETWORK or not x.on("secret-exfiltration") or not remote(x):
        return None
    for i, a in enumerate(x.args):
        if "$(" not in a and "`" not in a:
            continue
        login = logs_in(x.args, i)
        for inner in re.findall(r"\$\(([^()]*(?:\([^()]*\)[^()]*)*)\)|`([^`]*)`", a):
            for c in commands(inner[0] or inner[1]):
                found = _table(At(c, x.place, x.policy, x.assigned, x.nounset, frozenset()), captured=False)
                if not found or found[0] != "secret-read":
                    continue
                if not login:
                    return "secret-exfiltration", f"sends what {c.name} prints (a credential) to another machine"
                if foreign := not_its_service(x, _CLI_SERVICE.get(c.name, "")):
                    return (
                        "secret-exfiltration",
                        f"sends {c.name}'s token to {foreign[0]}, which is not {c.name}'s service: it would log in as you",
                    )
    return None


# the service whose hosts a CLI's own token logs in to (the pack's `[network.credential_hosts]`):
# anywhere else it is a credential handed over
_CLI_SERVICE = {"gh": "GITHUB", "gcloud": "GOOGLE", "az": "AZURE", "aws": "AWS", "npm": "NPM"}


# options of cloud CLIs that take a value: the value is no subcommand (`az --query delete vm show`)
_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "az": frozenset({"--query", "--output", "-o", "--subscription", "--resource-group", "-g", "--name", "-n"}),
    "gcloud": frozenset(
        {"--project", "--format", "--account", "--configuration", "--region", "--zone", "--filter", "--verbosity"}
    ),
    "aws": frozenset({"--query", "--output", "--profile", "--region", "--endpoint-url", "--color"}),
    "kubectl": frozenset({"-n", "--namespace", "--context", "--cluster", "--user", "-o", "--output", "--kubeconfig"}),
    "helm": frozenset({"-n", "--namespace", "--kube-context", "--kubeconfig", "-o", "--output"}),
}


def _matches(rule: dict[str, Any], x: At) -> bool:
    names = rule["program"]
    if x.name not in names:
        return not rule["words"] and not rule.get("flags") and any(w in names for w in x.cmd.wrapped_by)
    args = x.args
    if any((u in args) if "*" not in u else any(fnmatchcase(a, u) for a in args) for u in rule.get("unless", [])):
        return False
    valued = _VALUE_OPTIONS.get(x.name, frozenset())
    at = 0
    for word in rule["words"]:
        options = word.split("|")
        while at < len(args) and (
            not any(fnmatchcase(args[at], o) for o in options) or (at and args[at - 1] in valued)
        ):
            at += 1
        if at >= len(args):
            return False
        at += 1
    if rule.get("services") and not any(
        fnmatchcase(a.removesuffix(".service"), s) for a in args for s in x.policy.data["system"]["security_services"]
    ):
        return False
    if rule.get("packages") and not any(
        fnmatchcase(name, p) or fnmatchcase(p.rstrip("*"), name)  # `python3*` names python3 too
        for a in x.positional
        for name in [a.split("=", 1)[0].split(":", 1)[0]]
        for p in x.policy.data["system"]["critical_packages"]
    ):
        return False
    flags = rule.get("flags")
    if not flags:
        return True
    for f in flags:
        for a in args:
            if "=" in f and a.startswith("-") and "=" not in a:  # --namespace=prod* against --namespace prod
                i = args.index(a)
                if i + 1 < len(args) and fnmatchcase(f"{a}={args[i + 1]}", f):
                    return True
            if fnmatchcase(a, f) or (
                f.startswith("-")
                and not f.startswith("--")
                and len(f) == 2
                and re.fullmatch(rf"-[a-zA-Z]*{re.escape(f[1])}[a-zA-Z]*", a)
                and not a.startswith("--")
            ):
                return True
    return False


_RULES = (
    deletes,
    devices,
    permissions,
    download_exec,
    exfiltration,
    remote_shell,
    host_control,
    secret_reads,
    redirected_reads,
    _writes,
    database,
    _pushes,
    _staged_secrets,
    _table,
    registry_setting,
    insecure_install,
    container_env,
    environment_shown,
    fetched_urls,
    _sent_secrets,
)
