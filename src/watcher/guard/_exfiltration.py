"""The guard's rule for secrets sent to another machine: files, environment variables, a database's
dump, credentials read by a command substitution or written into the command, and a service's own
credential in a header to a host that is not that service's."""

from __future__ import annotations

import re
from collections.abc import Sequence
from fnmatch import fnmatchcase
from urllib.parse import unquote

from watcher.guard._context import NETWORK, PASS_THROUGH, At
from watcher.guard._files import Finding, credential, secret_file
from watcher.guard._secrets import leaked, secret_vars
from watcher.guard._shell import commands

__all__ = ["exfiltration", "hosts_of", "logs_in", "not_its_service", "remote"]

# programs whose output is a database's contents, and what may stand between them and the upload
_DUMPERS = frozenset({"pg_dump", "pg_dumpall", "mysqldump", "mariadb-dump", "mongodump", "mongoexport", "redis-cli"})
_PACKERS = frozenset({"gzip", "bzip2", "xz", "zstd", "base64", "openssl", "gpg", "tar"})


def hosts_of(x: At) -> list[str]:
    """The hosts a network command talks to (a URL's, scp's and ssh's host, netcat's)."""
    hosts = []
    for a in x.args:
        m = re.match(r"^(?:[a-z][\w+.-]*://)?(?:[^@/\s]+@)?(\[[^\]]+\]|[^:/\s?#$]+)", a)  # …com$1: the host ends
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
        if a.startswith("@") or "=@" in a or a.startswith("<") or ":=@" in a or "=<" in a:  # -F "f=<.env": its text
            sent.append(re.split(r"@|<", a, maxsplit=1)[-1].split(";")[0])
        elif i and x.args[i - 1] == "--data-urlencode" and "@" in a and "=" not in a.split("@", 1)[0]:
            sent.append(a.split("@", 1)[1])  # --data-urlencode "name@.env": the file's text, encoded
        elif x.name in _HTTPIE and (m := re.fullmatch(r"[\w.-]+@([^=]+)", a)):
            sent.append(m[1])  # http -f POST url file@.env: the file uploaded as a form field
        elif x.name == "socat" and (m := re.match(r"(?i)(?:g?open|file|read):([^,]+)", a)):
            sent.append(m[1])  # socat TCP:host:443 FILE:.env
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
        if found := _foreign_token(x, a):  # -H "Authorization: token ghp_…" to a host not GitHub's
            return found
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
        valued = _VALUED.get(x.name, frozenset())  # scp -i KEY: the login's key, not a file sent
        operands = [a for i, a in enumerate(x.args) if not a.startswith("-") and not (i and x.args[i - 1] in valued)]
        sent += (
            (operands if valued else x.positional)[:-1]
            if x.name not in ("mail", "mailx", "mutt")
            else [a for i, a in enumerate(x.args) if i and x.args[i - 1] in ("-a", "-A")]
        )
    if x.name == "gh" and x.positional[:1] in (["gist"], ["release"], ["issue"], ["pr"]):
        sent += x.positional[2:]  # gh gist create .env: the file goes up
    sent += [t for op, t in x.cmd.redirects if op == "<"]
    if x.name in ("sftp", "ftp", "lftp", "tftp") and x.cmd.stdin:  # sftp host <<< 'put .env': its commands
        sent += re.findall(r"(?m)^\s*(?:m?put|send|append)\s+(\S+)", x.cmd.stdin)
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


# options of the copiers whose value is no file sent: a login key, a config, a port, a remote shell
_VALUED = {
    "scp": frozenset({"-i", "-F", "-P", "-o", "-c", "-l", "-S", "-J", "-D", "-X"}),
    "sftp": frozenset({"-i", "-F", "-P", "-o", "-c", "-l", "-S", "-J", "-D", "-b", "-B", "-R", "-s", "-X"}),
    "rsync": frozenset({"-e", "--rsh", "--exclude", "--include", "--filter", "-f", "--files-from", "--password-file"}),
}
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
    for name in re.findall(r"\$\{?([A-Za-z_]\w*)", word):
        if foreign := not_its_service(x, name.upper().split("_", 1)[0]):
            return "secret-exfiltration", f"sends ${name} to {foreign[0]}, a host that is not its service's"
    return None


# the services whose tokens have a format of their own (the pack's content patterns), by prefix
_TOKEN_SERVICES = (
    ("github_pat_", "GITHUB", "a GitHub token"), ("ghp_", "GITHUB", "a GitHub token"),
    ("gho_", "GITHUB", "a GitHub token"), ("ghu_", "GITHUB", "a GitHub token"), ("ghs_", "GITHUB", "a GitHub token"),
    ("ghr_", "GITHUB", "a GitHub token"), ("sk-ant-", "ANTHROPIC", "an Anthropic API key"),
    ("sk-", "OPENAI", "an OpenAI API key"), ("xox", "SLACK", "a Slack token"), ("AIza", "GOOGLE", "a Google API key"),
    ("sk_live_", "STRIPE", "a Stripe key"), ("rk_live_", "STRIPE", "a Stripe key"), ("whsec_", "STRIPE", "a Stripe key"),
    ("glpat-", "GITLAB", "a GitLab token"), ("npm_", "NPM", "an npm token"), ("AKIA", "AWS", "an AWS access key"),
)  # fmt: skip


def _foreign_token(x: At, word: str) -> Finding | None:
    """A service's token written out (``ghp_…``, ``sk-ant-…``) in what a request sends (a header, its
    data, its address) to a host that is not that service's: whoever runs that host can use it."""
    found = credential(x.policy, unquote(word)) if any(p in word for p, _, _ in _TOKEN_SERVICES) else None
    token = found.group(0) if found else ""
    service = next(((s, what) for p, s, what in _TOKEN_SERVICES if token.startswith(p)), None)
    if service and (foreign := not_its_service(x, service[0])):
        return "secret-exfiltration", f"sends {service[1]} written into the command to {foreign[0]}, not its service"
    return None


def not_its_service(x: At, service: str) -> list[str]:
    """The hosts ``x`` talks to that are not ``service``'s (the pack's ``[network.credential_hosts]``,
    by the first word of a credential's name: ``OPENAI``, ``GITHUB``); none for a service not listed."""
    globs = x.policy.data["network"].get("credential_hosts", {}).get(service)
    if not globs:
        return []
    return [h for h in (h.lower() for h in hosts_of(x)) if not any(fnmatchcase(h, g) for g in globs)]
