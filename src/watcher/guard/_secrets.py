"""The guard's rules for secrets in shell commands: reading a credential, the environment or a
secret variable; sending one to another machine; running a script fetched from the network."""

from __future__ import annotations

import re
from collections.abc import Sequence
from fnmatch import fnmatchcase
from urllib.parse import unquote

from watcher.guard._context import NETWORK, PASS_THROUGH, At, inline_code, readable_code
from watcher.guard._files import Finding, credential, read_finding, secret_file, secret_glob
from watcher.guard._paths import Place
from watcher.guard._policy import compiled
from watcher.guard._shell import SHELLS, commands

__all__ = [
    "credential_search",
    "exfiltration",
    "hosts_of",
    "key_lines",
    "leaked",
    "logs_in",
    "redirected_reads",
    "remote",
    "secret_reads",
    "secret_vars",
]

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
        "icacls",
        "cacls",
        "setfacl",
        "getfacl",
        "takeown",
        "attrib",
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
        "security",
        "age",
        "gpg-connect-agent",
        "openssl",
        "kubectl",
        "helm",
        "terraform",
        "tofu",
        "ansible-vault",
        "envsubst",
        "tee",
        "truncate",
        "sponge",
    }
)

_ENV_DUMPS = frozenset({"printenv", "env", "set", "export", "declare", "typeset", "compgen"})

# programs whose first operand is a pattern or a program, not a file (unless given by an option)
_SEARCHERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "git-grep"})
_PATTERN_FIRST = _SEARCHERS | {"jq", "yq", "gojq", "jaq", "awk", "gawk", "mawk", "sed"}
_PATTERN_GIVEN = frozenset({"-e", "-f", "--regexp", "--file", "--expression", "--from-file"})

# programs whose every operand is a file they print: a bare name (`cat id_rsa`) is a file too
_READERS = frozenset(
    {
        "cat",
        "tac",
        "head",
        "tail",
        "less",
        "more",
        "most",
        "bat",
        "batcat",
        "nl",
        "od",
        "xxd",
        "hexdump",
        "hd",
        "strings",
        "base64",
        "base32",
        "sort",
        "uniq",
        "cut",
        "fold",
        "fmt",
        "pr",
        "rev",
        "column",
        "paste",
        "view",
        "vim",
        "vi",
        "nvim",
        "nano",
        "emacs",
        "ed",
        "pico",
        "zcat",
        "bzcat",
        "xzcat",
        "iconv",
        "expand",
        "unexpand",
        "dos2unix",
        "unix2dos",
    }
)


# programs whose output is a database's contents, and what may stand between them and the upload
_DUMPERS = frozenset({"pg_dump", "pg_dumpall", "mysqldump", "mariadb-dump", "mongodump", "mongoexport", "redis-cli"})
_PACKERS = frozenset({"gzip", "bzip2", "xz", "zstd", "base64", "openssl", "gpg", "tar"})
_LEAVES_OUT = re.compile(r"exclude|ignore|skip|omit")
_EDITOR_READERS = frozenset({"vim", "vi", "nvim", "view", "ex"})


def leaked(x: At) -> str | None:
    """What secret this command's output carries: a credential file, the environment, a secret variable."""
    cmd = x.cmd
    if x.name in _ENV_DUMPS and (
        (x.name in ("printenv", "env") and not [a for a in x.positional if "=" not in a] and "-S" not in x.args)
        or (x.name == "set" and not x.args)  # `set -x` traces; bare `set` prints every variable
        or (x.name in ("export", "declare", "typeset") and (not x.args or x.args[0] in ("-p", "-x", "-px")))
    ):
        return "the whole environment (every token and key in it)"
    if x.name == "printenv" and any(compiled(x.policy, "secrets.env_names").match(a) for a in x.positional):
        return "a secret environment variable"
    if x.name in ("echo", "printf", "print") and any(secret_vars(x, a) for a in cmd.args):
        return "a secret environment variable"
    for op, target in cmd.redirects:
        if op == "<" and secret_file(x.place, x.path(target), x.policy):
            return secret_file(x.place, x.path(target), x.policy)
    code = readable_code(inline_code(x.cmd))
    if code:
        for word in re.findall(r"['\"]([^'\"]+)['\"]", code):
            if "/" in word or word.startswith((".", "~")):
                why = secret_file(x.place, x.path(word), x.policy)
                if why:
                    return why
        if re.search(
            r"(?<!\bin )(?<!\*\*)(?<!env=)os\.environ(?!\s*\[|\.(?:get|keys|setdefault|update|pop|copy)\b)"
            r"|process\.env(?!\.)|ENV\.(?:to_h|to_a|inspect|each|map|sort)|%ENV|\bp(?:p)?\s+ENV\b",
            code,
        ):
            return "the whole environment (every token and key in it)"
        return None
    if x.name in _OPAQUE or x.name in SHELLS:
        return None
    words = x.positional + [
        a.split("=", 1)[1]
        for a in x.args
        if a.startswith("--") and "=" in a and not _LEAVES_OUT.search(a.split("=", 1)[0])
    ]  # --file=.env is read; --exclude=.env* is what is left out
    if x.name in _EDITOR_READERS:  # vim -c 'set ft=sh' f, vim +10 f: editor commands, not files
        given = {a for i, a in enumerate(x.args[1:], 1) if x.args[i - 1] in ("-c", "--cmd")}
        words = [w for w in words if w not in given and not w.startswith("+")]
    if x.name in _PATTERN_FIRST and words and not _PATTERN_GIVEN & set(x.args):
        if x.name == "yq" and words[0] in ("eval", "e", "eval-all", "ea"):
            words = words[1:]  # yq eval '.key' file.yaml: the subcommand, then the expression
        words = words[1:]  # grep '.key' notes.txt, jq .key data.json: the first operand is a pattern
    if x.name == "dd":  # dd reads if=, writes of=
        words = [a[3:] for a in x.args if a.startswith("if=")]
    reader = x.name in _READERS
    for word in words:
        word = word.lstrip("@")
        if (
            not word
            or word.startswith(("http://", "https://"))
            or ("/" not in word and "." not in word and "~" not in word and "$" not in word and not reader)
        ):
            continue
        why = secret_file(x.place, x.path(word), x.policy)
        if not why and any(c in word for c in "*?["):
            why = secret_glob(x.place, word, x.policy)
        if why:
            return why
    return None


def secret_vars(x: At, word: str) -> bool:
    names = re.findall(r"\$\{?([A-Za-z_]\w*)", word)
    return any(compiled(x.policy, "secrets.env_names").match(n) for n in names)


# what an environment dump may be piped into and show only names, counts or chosen lines
_NARROWERS = frozenset({"grep", "egrep", "fgrep", "rg", "wc", "cut", "awk", "jq", "sed", "head", "tail"})
# what a secret may be piped into and show only a count or a digest
_COUNTERS = frozenset({"wc", "sha1sum", "sha256sum", "sha512sum", "md5sum", "shasum", "b2sum", "cksum"})
_FISHING = re.compile(
    r"(?i)passw|secret|token|api[_-]?key|private[_ ]key|credential|BEGIN .*PRIVATE|aws_"
    r"|(?-i:AKIA|ASIA|ghp_|gho_|github_pat_|glpat-|xox[bpa]|AIza|sk-ant-|sk_live_)"  # the formats of keys
)


_CONTEXT = re.compile(r"-[ABC]\d*|-\w*[ABC]|--(?:after-|before-)?context(?:=\d+)?|-[ABC]=?\d+")


def key_lines(pattern: str, context: bool) -> bool:
    """A search for a private key's BEGIN marker that prints the lines around it: the key itself."""
    upper = pattern.upper()
    return context and "BEGIN" in upper and "PRIVATE" in upper and "KEY" in upper


def credential_search(place: Place, pattern: str, path: str) -> bool:
    """A search for credential-looking text across the whole machine, ``/etc`` or the home (a
    folder of it that holds no project): what it prints is whatever secrets lie there."""
    if not _FISHING.search(pattern):
        return False
    rel = place.in_home(path)
    if path in ("/", "/etc", "/home", "/Users", "/root") or rel == "" or re.fullmatch(r"/(?:home|Users)/[^/]+", path):
        return True  # the whole machine, a home or every home (their ~/.aws, ~/.ssh …)
    return rel is not None and "/" not in rel and not place.holds_project(path)


def _fishing(x: At) -> str | None:
    """A search for credentials across the home, a credential store or the whole machine."""
    if x.name not in _SEARCHERS or not x.positional:
        return None
    around = any(_CONTEXT.fullmatch(a) for a in x.args)
    if any(key_lines(p, around) for p in x.positional):  # grep -A 30 'BEGIN …' (30: -A's value)
        return "the private keys it finds (the lines after their BEGIN marker)"
    for word in x.positional[1:]:
        if credential_search(x.place, x.positional[0], x.path(word)):
            return f"whatever credentials lie under {word} (a search for them)"
    return None


def secret_reads(x: At) -> Finding | None:
    if not x.on("secret-read") or (x.name in NETWORK and x.name not in ("scp", "rsync")):
        return None  # what a network tool sends is the exfiltration rule's to judge
    if x.name in ("cp", "rsync", "scp", "install") and len(x.positional) >= 2:
        *sources, dest = x.positional
        if not secret_file(x.place, x.path(dest), x.policy) and ":" not in dest:
            for s in sources:
                why = secret_file(x.place, x.path(s), x.policy)
                if why:
                    return "secret-read", f"copies out {why}; credentials stay where they are"
        return None
    what = leaked(x) or _fishing(x)
    if what is None:
        return None
    kept = x.fed & {"tee", "sponge", "{secret filter}", *NETWORK} or any(">" in op for op, _ in x.cmd.redirects)
    if what.startswith("the whole environment") and not kept and x.fed & _NARROWERS:
        return None  # filtered or counted: only what the filter picks reaches the model
    if x.fed and x.fed <= _COUNTERS and not kept:
        return None  # cat .env | wc -l, cat key | sha256sum: only a count or a digest is shown
    return "secret-read", f"reads {what}: its secrets would reach the model and the transcript"


def hosts_of(x: At) -> list[str]:
    """The hosts a network command talks to (a URL's, scp's and ssh's host, netcat's)."""
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


def remote(x: At) -> bool:
    hosts = hosts_of(x)
    local = x.policy.data["network"]["local_hosts"]
    return not hosts or any(not any(fnmatchcase(h.lower(), p) for p in local) for h in hosts)


def exfiltration(x: At) -> Finding | None:
    if x.name not in NETWORK or not x.on("secret-exfiltration") or not remote(x):
        return None
    sent: list[str] = []
    feeder = x.cmd.feeder
    while feeder is not None:
        what = leaked(At(feeder, x.place, x.policy, x.assigned, x.nounset, frozenset())) or (
            "a dump of a database" if feeder.name in _DUMPERS else None
        )
        if what:
            return "secret-exfiltration", f"sends {what} to another machine"
        feeder = feeder.feeder if feeder.name in PASS_THROUGH | _PACKERS else None
    for i, a in enumerate(x.args):
        if a.startswith("@") or "=@" in a or a.startswith("<") or ":=@" in a:
            sent.append(re.split(r"@|<", a, maxsplit=1)[-1].split(";")[0])
        elif i and x.args[i - 1] in (
            "-T",
            "--upload-file",
            "--post-file",
            "--body-file",
            "--data-binary",
            "-d",
            "--data",
        ):
            sent.append(a)
        elif a.startswith(("--post-file=", "--body-file=", "--upload-file=")):
            sent.append(a.split("=", 1)[1])
        elif re.match(r"^-[dFT].", a):  # curl -d@.env, -Ffile=@key.pem: the value attached
            sent.append(re.split(r"@", a[2:], maxsplit=1)[-1] if "@" in a else a[2:])
        login = logs_in(x.args, i)
        target = re.fullmatch(r"\$\{?\w+\}?", a) and not (i and x.args[i - 1].startswith("-"))
        if secret_vars(x, a) and not target:  # curl -d … "$SLACK_WEBHOOK_URL": where it goes, not what
            if not login and not (x.name in _HTTPIE and _HTTPIE_HEADER.match(a)):
                return "secret-exfiltration", "sends a secret environment variable to another machine"
            if found := _foreign_credential(x, a):  # an Authorization header is how a service is used
                return found
        written = None if login or "://" not in a else credential(x.policy, unquote(a))
        if written and written.start() > 0:  # a password in the URL's own address is its login
            return "secret-exfiltration", "sends a credential written into the command to another machine"
        for inner in re.findall(r"\$\(([^()]*(?:\([^()]*\)[^()]*)*)\)|`([^`]*)`", a):
            for c in commands(inner[0] or inner[1]):
                if leaked(At(c, x.place, x.policy, x.assigned, x.nounset, frozenset())):
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
    if x.name == "gh" and x.positional[:1] in (["gist"], ["release"], ["issue"], ["pr"]):
        sent += x.positional[2:]  # gh gist create .env: the file goes up
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


_AUTH_OPTION = re.compile(r"--header|--user|-[A-Za-z]*[Hu]")  # curl -sH "Authorization: …"
_AUTH_ATTACHED = ("--header=", "--user=", "-H")
_HTTPIE = frozenset({"http", "https", "xh", "xhs"})
_HTTPIE_HEADER = re.compile(r"[A-Za-z][\w-]*:(?![/=])")  # httpie's `Authorization:"Bearer …"` (not `x:=`, a URL)


def logs_in(args: Sequence[str], i: int) -> bool:
    """``args[i]`` is a request's own login: a header (``-H``, ``-sH``, ``--header=``) or ``-u``'s value."""
    return bool(i and _AUTH_OPTION.fullmatch(args[i - 1])) or args[i].startswith(_AUTH_ATTACHED)


def _foreign_credential(x: At, word: str) -> Finding | None:
    """A service's own credential (``$OPENAI_API_KEY``) in a header to a host written out that is
    not one of that service's: the header hands the key to whoever runs that host."""
    hosts = [h.lower() for h in hosts_of(x)]
    meant = x.policy.data["network"].get("credential_hosts", {})
    for name in re.findall(r"\$\{?([A-Za-z_]\w*)", word):
        service = name.upper().split("_", 1)[0]
        globs = meant.get(service)
        foreign = [h for h in hosts if not any(fnmatchcase(h, g) for g in globs or ())]
        if globs and foreign:
            return "secret-exfiltration", f"sends ${name} to {foreign[0]}, a host that is not its service's"
    return None


def redirected_reads(x: At) -> Finding | None:
    for op, target in x.cmd.redirects:
        if op == "<":
            found = read_finding(x.place, x.path(target), x.policy)
            if found and x.on("secret-read") and x.name not in NETWORK:
                return found
    return None
