"""The guard's rules for one shell command line, by category.

Each rule reads the simple commands ``_shell`` found (wrappers peeled, inner scripts read) with
their arguments resolved against the session's ``cwd``. The vocabulary (system trees, secret file
names, protected branches, destructive programs) is the pack's data; this module is the logic.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from fnmatch import fnmatchcase
from typing import Any

from watcher.guard import _git
from watcher.guard._files import Finding, delete_loss, device, read_finding, secret_file, write_finding
from watcher.guard._paths import UNSET, Place, glob_parent
from watcher.guard._policy import Policy, compiled
from watcher.guard._shell import SHELLS, Command, commands, functions, program

__all__ = ["shell_findings"]

_DELETERS = frozenset({"rm", "shred", "srm", "unlink", "trash", "trash-put", "gio"})
_PERMS = frozenset({"chmod", "chown", "chgrp", "setfacl", "chattr", "chflags"})
# commands that use a secret file without showing its content
_OPAQUE = frozenset(
    {
        "ls",
        "stat",
        "file",
        "test",
        "[",
        "[[",
        "touch",
        "chmod",
        "chown",
        "chgrp",
        "mkdir",
        "rmdir",
        "ssh",
        "ssh-add",
        "ssh-copy-id",
        "ssh-keygen",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "md5sum",
        "shasum",
        "b2sum",
        "cksum",
        "wc",
        "du",
        "realpath",
        "readlink",
        "basename",
        "dirname",
        "source",
        ".",
        "export",
        "dotenv",
        "direnv",
        "docker",
        "docker-compose",
        "podman",
        "git",
        "ln",
        "echo",
        "printf",
        "find",
        "fd",
        "tree",
        "exa",
        "eza",
        "lsof",
        "code",
        "mv",
        "rm",
        "shred",
        "unlink",
        "trash",
        "which",
        "type",
        "sops",
        "age",
        "gpg-connect-agent",
        "openssl",
        "kubectl",
        "helm",
        "terraform",
        "tofu",
        "ansible-vault",
        "envsubst",
    }
)
_INTERPRETERS = {
    "python": "-c",
    "python3": "-c",
    "python2": "-c",
    "perl": "-e",
    "ruby": "-e",
    "node": "-e",
    "php": "-r",
    "deno": "eval",
    "bun": "-e",
    "pwsh": "-c",
    "powershell": "-c",
    "lua": "-e",
    "Rscript": "-e",
}
_DOWNLOADERS = frozenset(
    {
        "curl",
        "wget",
        "fetch",
        "iwr",
        "invoke-webrequest",
        "irm",
        "invoke-restmethod",
        "http",
        "https",
        "xh",
        "aria2c",
        "lwp-request",
        "GET",
    }
)
_PASS_THROUGH = frozenset({"tee", "cat", "gunzip", "zcat", "base64", "tr", "sed", "head", "tail", "dos2unix", "sudo"})
_NETWORK = frozenset(
    {
        "curl",
        "wget",
        "nc",
        "ncat",
        "netcat",
        "socat",
        "telnet",
        "scp",
        "sftp",
        "rsync",
        "ftp",
        "ssh",
        "http",
        "https",
        "xh",
        "aws",
        "gsutil",
        "rclone",
        "s3cmd",
        "mail",
        "mailx",
        "sendmail",
        "mutt",
        "openssl",
        "smbclient",
        "tftp",
        "lftp",
        "az",
        "gcloud",
    }
)
_ENV_DUMPS = frozenset({"printenv", "env", "set", "export", "declare", "typeset", "compgen"})
_SQL_FLAGS = frozenset({"-c", "--command", "-e", "--execute", "--eval", "-q", "--query", "-Q", "--sql"})
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([KMGTPE]?)(i?B)?$", re.I)
_BIG = 10 * 1024**3


def shell_findings(script: str, place: Place, policy: Policy) -> Iterator[Finding]:
    """(category, reason) for each dangerous thing ``script`` would do, in the order found."""
    cmds = commands(script)
    assigned = frozenset(
        re.findall(r"(?:^|[\s;&|(])(?:export\s+|local\s+|readonly\s+|declare\s+\S+\s+)?([A-Za-z_]\w*)=", script)
    )
    assigned |= (
        frozenset(re.findall(r"\bfor\s+([A-Za-z_]\w*)\b|\bread\s+(?:-\w+\s+)*([A-Za-z_]\w*)", script)[0])
        if re.search(r"\b(for|read)\s", script)
        else frozenset()
    )
    nounset = bool(re.search(r"(^|[\s;])set\s+(-\w*u|-o\s+nounset)", script))
    fed = {c.feeder.source for c in cmds if c.feeder is not None}
    yield from _bombs(script, cmds)
    for c in cmds:
        if not c.argv:
            continue
        ctx = _Context(c, place, policy, assigned, nounset, c.source in fed)
        for rule in _RULES:
            found = rule(ctx)
            if found is not None:
                yield found


class _Context:
    """One command and what the rules need to judge it."""

    def __init__(
        self, cmd: Command, place: Place, policy: Policy, assigned: frozenset[str], nounset: bool, fed: bool
    ) -> None:
        self.cmd, self.place, self.policy, self.assigned, self.nounset, self.fed = (
            cmd,
            place,
            policy,
            assigned,
            nounset,
            fed,
        )
        self.name = cmd.name
        self.args = [a for a in cmd.args]
        self.positional = _positional(self.args)
        self.short = "".join(a[1:] for a in self.args if a.startswith("-") and not a.startswith("--"))

    def path(self, word: str) -> str:
        if self.nounset and word.startswith("$"):
            return self.place.resolve("${SET:?}/" + word.split("/", 1)[-1] if "/" in word else word, self.assigned)
        return self.place.resolve(word, self.assigned)

    def on(self, category: str) -> bool:
        return self.policy.enabled(category)


def _positional(args: list[str]) -> list[str]:
    out, rest = [], False
    for a in args:
        if a == "--" and not rest:
            rest = True
        elif rest or not a.startswith("-") or a == "-":
            out.append(a)
    return out


# --- destructive deletes, devices, permissions ----------------------------------------------------


def _deletes(x: _Context) -> Finding | None:
    if not x.on("destructive-delete"):
        return None
    name, recursive = x.name, "r" in x.short.lower() or "--recursive" in x.args
    targets: list[str] = []
    if name in _DELETERS:
        targets = [t for t in x.positional if not (name == "gio" and t == "trash")]
        if "--no-preserve-root" in x.args:
            return "destructive-delete", "deletes with --no-preserve-root: the filesystem root itself"
    elif name == "mv" and len(x.positional) >= 2:
        targets, recursive = x.positional[:-1], True  # the sources leave where they were
    elif name == "rsync" and any(a.startswith("--delete") for a in x.args) and x.positional:
        targets, recursive = x.positional[-1:], True
    elif name in ("python", "python3") and (code := _inline(x)):
        targets = re.findall(r"rmtree\(\s*['\"]([^'\"]+)['\"]", code)
        recursive = True
    for word in targets:
        if word == "{xargs input}":
            word = _xargs_source(x.cmd)
            if not word:
                continue
        parent, whole = glob_parent(word)
        path = x.path(parent)
        loss = delete_loss(x.place, path, x.policy, recursive=recursive, whole=whole)
        if loss is not None and (
            recursive or whole or "credentials" in loss or "system file" in loss or "device" in loss
        ):
            verb = "moves away" if name in ("mv", "rsync") else "deletes"
            return (
                "destructive-delete",
                f"{verb} {loss}: this cannot be undone; delete only what the task needs inside the project",
            )
    return None


def _xargs_source(cmd: Command) -> str:
    feeder = cmd.feeder
    if feeder is None or feeder.name not in ("find", "ls", "echo", "printf"):
        return ""
    args = list(feeder.args)
    if feeder.name == "find":
        if any(a in ("-name", "-iname", "-path", "-regex", "-ipath") for a in args):
            return ""
        starts = [a for a in args if not a.startswith(("-", "(", "!"))][:1]
        return (starts[0] if starts else ".").rstrip("/") + "/*"
    return next((a for a in args if not a.startswith("-")), "")


def _devices(x: _Context) -> Finding | None:
    if not x.on("device-write"):
        return None
    outs = [t for op, t in x.cmd.redirects if ">" in op]
    if x.name == "dd":
        outs += [a[3:] for a in x.args if a.startswith("of=")]
    if x.name in ("tee", "cp", "cat", "pv", "install"):
        outs += x.positional[-1:] if x.name != "tee" else x.positional
    for word in outs:
        path = x.path(word)
        if device(path):
            return "device-write", f"writes to the device {path}: the filesystem on it is destroyed"
    mkfs = x.name in ("mkfs", "mke2fs", "mkswap") or x.name.startswith("mkfs.")
    if mkfs and any(x.path(p).startswith("/dev/") for p in x.positional):
        return "device-write", "formats a disk: every file on it is lost"
    return None


def _permissions(x: _Context) -> Finding | None:
    if x.name not in _PERMS or not x.on("permissions"):
        return None
    recursive = "R" in x.short or "--recursive" in x.args or (x.name == "chattr" and "R" in x.short)
    mode = x.positional[0] if x.positional else ""
    setuid = x.name == "chmod" and (
        re.fullmatch(r"[ugoa]*[+=][rwxXt]*s[rwxXst]*", mode) or re.fullmatch(r"[2467][0-7]{3}", mode)
    )
    for word in x.positional[1:]:
        parent, whole = glob_parent(word)
        path = x.path(parent)
        if setuid:
            return "permissions", f"sets the setuid/setgid bit on {path}: it would run with its owner's rights"
        loss = delete_loss(x.place, path, x.policy, recursive=True, whole=whole)
        top = path == "/" or path == x.place.home or (path.count("/") == 1 and not x.place.holds_project(path))
        if (
            (recursive or whole or top)
            and loss is not None
            and "outside the project" not in loss
            and "project" not in loss
        ):
            return (
                "permissions",
                f"changes ownership or permissions of {loss}, recursively: the system or your account can stop working",
            )
        if recursive and path != x.place.cwd and x.place.holds_project(path):
            return "permissions", f"changes ownership or permissions of {loss}, recursively"
    return None


# --- secrets ---------------------------------------------------------------------------------------


def _inline(x: _Context) -> str:
    flag = _INTERPRETERS.get(x.name)
    if flag is None:
        return ""
    for i, a in enumerate(x.args):
        if (
            a == flag or (a.startswith("-") and a.endswith(flag[-1]) and len(a) <= 4 and flag.startswith("-"))
        ) and i + 1 < len(x.args):
            return x.args[i + 1]
    return x.cmd.stdin or ""


def leaked(x: _Context) -> str | None:
    """What secret this command's output carries: a credential file, the environment, a secret variable."""
    cmd = x.cmd
    if x.name in _ENV_DUMPS and (
        (x.name in ("printenv", "env") and not [a for a in x.positional if "=" not in a])
        or (x.name in ("set", "export", "declare", "typeset") and (not x.args or x.args[0] in ("-p", "-x", "-px")))
    ):
        return "the whole environment (every token and key in it)"
    if x.name == "printenv" and any(compiled(x.policy, "secrets.env_names").match(a) for a in x.positional):
        return "a secret environment variable"
    if x.name in ("echo", "printf", "print") and any(_secret_vars(x, a) for a in cmd.args):
        return "a secret environment variable"
    for op, target in cmd.redirects:
        if op == "<" and secret_file(x.place, x.path(target), x.policy):
            return secret_file(x.place, x.path(target), x.policy)
    code = _inline(x)
    if code:
        for word in re.findall(r"['\"]([^'\"]+)['\"]", code):
            if "/" in word or word.startswith("."):
                why = secret_file(x.place, x.path(word), x.policy)
                if why:
                    return why
        if re.search(r"os\.environ(?!\s*\[|\.get)|process\.env(?!\.)|ENV\.to_h|%ENV", code):
            return "the whole environment (every token and key in it)"
        return None
    if x.name in _OPAQUE or x.name in SHELLS:
        return None
    for word in x.positional + [a.split("=", 1)[1] for a in x.args if a.startswith("--") and "=" in a]:
        word = word.lstrip("@")
        if (
            not word
            or word.startswith(("http://", "https://"))
            or ("/" not in word and "." not in word and "~" not in word)
        ):
            continue
        why = secret_file(x.place, x.path(word), x.policy)
        if why:
            return why
    return None


def _secret_vars(x: _Context, word: str) -> bool:
    names = re.findall(r"\$\{?([A-Za-z_]\w*)", word)
    return any(compiled(x.policy, "secrets.env_names").match(n) for n in names)


def _secret_reads(x: _Context) -> Finding | None:
    if not x.on("secret-read"):
        return None
    if x.name in ("cp", "rsync", "scp", "install") and len(x.positional) >= 2:
        *sources, dest = x.positional
        if not secret_file(x.place, x.path(dest), x.policy) and ":" not in dest:
            for s in sources:
                why = secret_file(x.place, x.path(s), x.policy)
                if why:
                    return "secret-read", f"copies out {why}; credentials stay where they are"
        return None
    what = leaked(x)
    if what is None:
        return None
    if what.startswith("the whole environment") and not (x.fed or any(">" in op for op, _ in x.cmd.redirects)):
        return None  # shown in the terminal only when nothing else reads it
    return "secret-read", f"reads {what}: its secrets would reach the model and the transcript"


def _hosts(x: _Context) -> list[str]:
    hosts = []
    for a in x.args:
        m = re.match(r"^(?:[a-z][\w+.-]*://)?(?:[^@/\s]+@)?(\[[^\]]+\]|[^:/\s?#]+)", a)
        if "://" in a and m:
            hosts.append(m.group(1))
        elif (x.name in ("scp", "rsync", "sftp", "ssh") and re.match(r"^[^/\s]+:", a)) or (
            x.name == "ssh" and not a.startswith("-") and a == x.positional[:1][0]
        ):
            hosts.append(a.split("@")[-1].split(":")[0])
        elif x.name in ("nc", "ncat", "netcat", "telnet", "socat") and not a.startswith("-") and not a.isdigit():
            hosts.append(a.split(":")[-2] if a.count(":") >= 2 else a)
    return hosts


def _remote(x: _Context) -> bool:
    hosts = _hosts(x)
    local = x.policy.data["network"]["local_hosts"]
    return not hosts or any(not any(fnmatchcase(h.lower(), p) for p in local) for h in hosts)


def _exfiltration(x: _Context) -> Finding | None:
    if x.name not in _NETWORK or not x.on("secret-exfiltration") or not _remote(x):
        return None
    sent: list[str] = []
    feeder = x.cmd.feeder
    while feeder is not None:
        what = leaked(_Context(feeder, x.place, x.policy, x.assigned, x.nounset, True))
        if what:
            return "secret-exfiltration", f"sends {what} to another machine"
        feeder = feeder.feeder if feeder.name in _PASS_THROUGH else None
    for i, a in enumerate(x.args):
        if a.startswith("@") or "=@" in a or a.startswith("<") or ":=@" in a:
            sent.append(re.split(r"@|<", a, maxsplit=1)[-1].split(";")[0])
        elif i and x.args[i - 1] in (
            "-T",
            "--upload-file",
            "--post-file",
            "--body-file",
            "-i",
            "--data-binary",
            "-d",
            "--data",
        ):
            sent.append(a)
        elif a.startswith(("--post-file=", "--body-file=", "--upload-file=")):
            sent.append(a.split("=", 1)[1])
        if _secret_vars(x, a) and not (i and x.args[i - 1] in ("-H", "--header", "-u", "--user")):
            return "secret-exfiltration", "sends a secret environment variable to another machine"
        for inner in re.findall(r"\$\(([^()]*(?:\([^()]*\)[^()]*)*)\)|`([^`]*)`", a):
            for c in commands(inner[0] or inner[1]):
                if leaked(_Context(c, x.place, x.policy, x.assigned, x.nounset, True)):
                    return "secret-exfiltration", "sends credentials read by a command substitution to another machine"
    if x.name in (
        "scp",
        "rsync",
        "sftp",
        "aws",
        "gsutil",
        "rclone",
        "s3cmd",
        "mail",
        "mailx",
        "mutt",
        "smbclient",
        "az",
        "gcloud",
    ):
        sent += (
            x.positional[:-1]
            if x.name not in ("mail", "mailx", "mutt")
            else [a for i, a in enumerate(x.args) if i and x.args[i - 1] in ("-a", "-A")]
        )
    sent += [t for op, t in x.cmd.redirects if op == "<"]
    for word in sent:
        path = x.path(word)
        why = secret_file(x.place, path, x.policy) or (
            "a credential store"
            if any(path.startswith(x.place.expand(d)) for d in x.policy.data["paths"]["secret_dirs"])
            else None
        )
        if why:
            return "secret-exfiltration", f"sends {why} to another machine"
    return None


def _download_exec(x: _Context) -> Finding | None:
    if not x.on("download-exec"):
        return None
    name = x.name
    runs_stdin = (
        (name in SHELLS or name in _INTERPRETERS)
        and (not x.positional or x.positional[0] in ("-", "/dev/stdin") or "-s" in x.args)
        and not any(a in ("-m", "-c", "-e", "-r") for a in x.args[:2])
    )
    if (runs_stdin and name not in ("python", "python3")) or (runs_stdin and not x.args):
        feeder = x.cmd.feeder
        while feeder is not None:
            if feeder.name in _DOWNLOADERS:
                return (
                    "download-exec",
                    "runs a script downloaded from the network, unread: whoever controls the URL runs code here; download it to a file, check and read it, then run it",
                )
            feeder = feeder.feeder if feeder.name in _PASS_THROUGH else None
    texts = list(x.args)
    for t in texts:
        if re.search(r"(?:<\(|\$\(|`)\s*(?:sudo\s+)?(?:curl|wget|fetch|iwr|irm|http)\b", t) and (
            name in SHELLS or name in _INTERPRETERS or name in ("eval", "source", ".", "iex", "invoke-expression")
        ):
            return (
                "download-exec",
                "runs a script downloaded from the network, unread: download it to a file, check and read it, then run it",
            )
    return None


# --- writes, tampering, databases, git, the pack's command table ----------------------------------


def _written(x: _Context) -> list[tuple[str, str]]:
    """(path word, content when known) of every file this command writes."""
    content = " ".join(x.cmd.args) if x.name in ("echo", "printf") else (x.cmd.stdin or "")
    out = [(t, content) for op, t in x.cmd.redirects if ">" in op and not t.isdigit() and t != "&1"]
    name = x.name
    if name == "tee":
        out += [(p, "") for p in x.positional]
    elif name in ("cp", "mv", "install", "ln", "rsync", "scp") and len(x.positional) >= 2:
        out.append((x.positional[-1], ""))
    elif name in ("sed", "perl", "ruby") and any(
        a.startswith("-i") or a == "--in-place" or re.fullmatch(r"-\w*i\w*", a) for a in x.args
    ):
        out += [(p, "") for p in x.positional[1:]]
    elif name in ("rm", "unlink", "shred", "truncate", "touch", "dd"):
        out += [(p, "") for p in x.positional if name != "dd"] + [(a[3:], "") for a in x.args if a.startswith("of=")]
    elif (code := _inline(x)) and re.search(r"write|open\([^)]*['\"][wa]|dump|>>?", code):
        out += [(w, "") for w in re.findall(r"['\"]([^'\"]*/[^'\"]*|\.[^'\"/]+)['\"]", code)]
    return out


def _writes(x: _Context) -> Finding | None:
    for word, content in _written(x):
        if word in ("-", "/dev/null"):
            continue
        found = write_finding(x.place, x.path(word), x.policy, content)
        if found is not None and x.on(found[0]):
            if found[0] == "secret-write" and x.name in ("rm", "unlink", "shred", "touch"):
                continue  # deleting or touching a credential file is not writing one
            return found
    if x.name == "git" and x.on("config-tampering"):
        keys = x.policy.data["config"]["git_keys"]
        for i, a in enumerate(x.args):
            if (a == "-c" and i + 1 < len(x.args)) or a.startswith("--config-env"):
                key = x.args[i + 1].split("=", 1)[0].lower() if a == "-c" else ""
                if any(fnmatchcase(key, k) for k in keys):
                    return (
                        "config-tampering",
                        f"runs git with {key} overridden: it bypasses or replaces the repository's git hooks",
                    )
        if ("config" in x.positional[:1] and len(x.positional) >= 3) or "--unset" in x.args:
            key = next((p.lower() for p in x.positional[1:] if "." in p), "")
            if any(fnmatchcase(key, k) for k in keys):
                return "config-tampering", f"sets git's {key}: git would run a program of the agent's choosing"
    return None


def _database(x: _Context) -> Finding | None:
    if not x.on("database"):
        return None
    clients = x.policy.data["database"]["clients"]
    argv = list(x.cmd.argv)
    at = next((i for i, a in enumerate(argv) if program(a) in clients), None)
    if at is None:
        return None
    words = argv[at + 1 :]
    text = " ".join(w for w in words if not w.startswith("-") or w in _SQL_FLAGS)
    text += "\n" + (x.cmd.stdin or "")
    feeder = x.cmd.feeder
    if feeder is not None and feeder.name in ("echo", "printf", "cat"):
        text += "\n" + " ".join(feeder.args)
    if compiled(x.policy, "database.destructive").search(text):
        return (
            "database",
            "runs a destructive database statement (DROP, TRUNCATE, DELETE without WHERE, FLUSHALL): the data is gone for good",
        )
    return None


def _pushes(x: _Context) -> Finding | None:
    if x.name != "git" or not x.on("force-push"):
        return None
    return _git.push_finding(list(x.args), x.place, x.policy)


def _table(x: _Context) -> Finding | None:
    for rule in x.policy.data.get("command", []):
        if x.on(rule["category"]) and _matches(rule, x):
            return rule["category"], f"{x.name} {rule['reason']}" if rule[
                "words"
            ] else f"{rule['program'][0]}: {rule['reason']}"
    return None


def _matches(rule: dict[str, Any], x: _Context) -> bool:
    names = rule["program"]
    if x.name not in names:
        return not rule["words"] and not rule.get("flags") and any(w in names for w in x.cmd.wrapped_by)
    args = x.args
    if any(u in args for u in rule.get("unless", [])):
        return False
    at = 0
    for word in rule["words"]:
        options = word.split("|")
        while at < len(args) and not any(fnmatchcase(args[at], o) for o in options):
            at += 1
        if at >= len(args):
            return False
        at += 1
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


def _bombs(script: str, cmds: list[Command]) -> Iterator[Finding]:
    for name, body in functions(script).items():
        if re.search(rf"(^|[\s;|&({{]){re.escape(name)}(\s|[|&;)}}]|$)", body) and re.search(r"[|&]", body):
            yield (
                "resource-bomb",
                f"defines {name}() to start copies of itself without end (a fork bomb): the machine stops answering",
            )
            return
    if re.search(
        r"\bwhile\s+(true|:|\[\s*1\s*\]|\(\(\s*1\s*\)\))\s*;?\s*do\b[^\n]*?(?<![&|>])&(?![&>])", script
    ) or re.search(r"\$0\s*&|\$0\s*\|\s*\$0", script):
        yield "resource-bomb", "starts processes in an endless loop: the machine runs out of processes"
        return
    for c in cmds:
        code = _inline(_Context(c, Place("/", "/"), None, frozenset(), False, False)) if c.name in _INTERPRETERS else ""  # type: ignore[arg-type]
        if (
            code
            and re.search(r"fork", code)
            and re.search(r"\bwhile\b|\bloop\b|\bfor\s*\(|\brepeat\b|\buntil\b|\.times", code)
        ):
            yield "resource-bomb", "forks in an endless loop (a fork bomb): the machine stops answering"
            return
        if c.name in ("tail",) and "/dev/zero" in c.args:
            yield "resource-bomb", "reads /dev/zero into memory without end: the machine runs out of memory"
            return
        zeros = any(a in ("if=/dev/zero", "if=/dev/urandom", "if=/dev/random") for a in c.args)
        to_file = any(">" in op and t not in ("/dev/null",) for op, t in c.redirects)
        if (
            c.name == "dd"
            and zeros
            and not any(a.startswith("count=") for a in c.args)
            and any(a.startswith("of=") and not a.startswith("of=/dev/") for a in c.args)
        ):
            yield "resource-bomb", "writes zeros or random data without a count: it fills the disk"
            return
        if (
            c.name in ("cat", "yes", "pv")
            and to_file
            and (c.name == "yes" or any(a in ("/dev/zero", "/dev/urandom", "/dev/random") for a in c.args))
        ):
            yield "resource-bomb", "writes an endless stream into a file: it fills the disk"
            return
        size = _size_arg(c)
        if size >= _BIG:
            yield "resource-bomb", f"allocates {size / 1024**3:.0f} GiB in one go: it fills the disk or the memory"
            return


def _size_arg(c: Command) -> float:
    args = list(c.args)
    for i, a in enumerate(args):
        value = ""
        if (c.name == "fallocate" and a in ("-l", "--length") and i + 1 < len(args)) or (
            c.name == "head"
            and a == "-c"
            and i + 1 < len(args)
            and any(z in args for z in ("/dev/zero", "/dev/urandom"))
        ):
            value = args[i + 1]
        elif c.name == "dd" and a.startswith("bs=") and any(b.startswith("count=") for b in args):
            count = next(b[6:] for b in args if b.startswith("count="))
            bs = _bytes(a[3:])
            return bs * float(count) if count.isdigit() else 0.0
        if value:
            return _bytes(value)
    return 0.0


def _bytes(text: str) -> float:
    m = _SIZE.match(text)
    if not m:
        return 0.0
    return float(m.group(1)) * 1024 ** "BKMGTPE".index(m.group(2).upper() or "B") if m.group(2) else float(m.group(1))


def _reads(x: _Context) -> Finding | None:
    for op, target in x.cmd.redirects:
        if op == "<":
            found = read_finding(x.place, x.path(target), x.policy)
            if found and x.on("secret-read") and x.name not in _NETWORK:
                return found
    return None


_RULES = (
    _deletes,
    _devices,
    _permissions,
    _download_exec,
    _exfiltration,
    _secret_reads,
    _reads,
    _writes,
    _database,
    _pushes,
    _table,
)
_ = UNSET
