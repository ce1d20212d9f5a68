"""A simple command where it runs: its words, the place its paths resolve against, the policy,
and what the rules of every category share about programs (interpreters, network tools)."""

from __future__ import annotations

import re

from watcher.guard._lazy import lazy
from watcher.guard._paths import Place
from watcher.guard._policy import Policy
from watcher.guard._shell import Command

__all__ = ["INTERPRETERS", "NETWORK", "PASS_THROUGH", "At", "inline_code", "readable_code"]

INTERPRETERS = {
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

PASS_THROUGH = frozenset({"tee", "cat", "gunzip", "zcat", "base64", "tr", "sed", "head", "tail", "dos2unix", "sudo"})

NETWORK = frozenset(
    {
        "curl",
        "wget",
        "dig",
        "nslookup",
        "host",
        "drill",
        "ping",
        "gh",
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


class At:
    """One command and what the rules need to judge it."""

    def __init__(
        self, cmd: Command, place: Place, policy: Policy, assigned: frozenset[str], nounset: bool, fed: frozenset[str]
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
        options = self.args[: self.args.index("--")] if "--" in self.args else self.args  # rm -- -rf: a file
        self.short = "".join(a[1:] for a in options if a.startswith("-") and not a.startswith("--"))

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


def inline_code(cmd: Command) -> str:
    """The code an interpreter runs from its command line (``python -c``, ``perl -e``, ``rails runner``)
    or its here-text."""
    flag = INTERPRETERS.get(cmd.name)
    if cmd.name == "rails" and cmd.args[:1] in (("runner",), ("r",)) and len(cmd.args) > 1:
        return cmd.args[1]  # rails runner 'User.delete_all': Ruby run in the application
    if flag is None:
        return ""
    args = cmd.args
    for i, a in enumerate(args):
        short = a.startswith("-") and a.endswith(flag[-1]) and len(a) <= 4 and flag.startswith("-")
        if (a == flag or short) and i + 1 < len(args):
            return args[i + 1]
    return cmd.stdin or ""


def readable_code(code: str) -> str:
    """``code`` as the rules read it: Perl's and Ruby's quote operators as quotes (``q{/x}``,
    ``%q(~/x)``), the home folder's expressions as the path ``'~'``, and a string joined to it
    (``$ENV{HOME} . '/.ssh/id_rsa'``, ``'~' + '/x'``) as one path."""
    if "q" in code:
        code = _QUOTE_OPERATOR.sub(lambda m: "'" + (m.group(1) or m.group(2) or m.group(3) or "") + "'", code)
    code = _home_written(code)
    if "~" in code and "join" in code:  # os.path.join('~', '.ssh', 'id_rsa'), path.join, File.join
        code = _PATH_JOIN.sub(lambda m: "'~/" + "/".join(re.findall(r"""['"]([^'"]*)['"]""", m.group(1))) + "'", code)
    for _ in range(3) if "~" in code else ():  # '~' + '/.netrc', $ENV{HOME} . '/x': a part at a time
        code = _JOINED.sub(lambda m: "'~/" + "/".join(p for p in m.groups() if p) + "'", code)
    return code


# Perl's q{…} q(…) qq{…} and Ruby's %q(…) %Q{…}: a string like any other
_QUOTE_OPERATOR = lazy(
    r"(?<![\w$@%])(?:%[qQ]|qq?)(?:\{([^{}'\n]{0,500})\}|\(([^()'\n]{0,500})\)|\[([^\[\]'\n]{0,500})\])"
)
_JOINED = lazy(r"""['"]~/?([^'"]*?)/?['"]\s*(?:\.|\+|/)\s*['"]/?([^'"]*)['"]""")
_PATH_JOIN = lazy(r"""\b(?:os\.path|path|File)\.join\(\s*['"]~['"]\s*((?:,\s*['"][^'"]{0,200}['"]\s*){1,8})\)""")


# The home folder as inline code names it (Python, Node, Ruby, Perl): read as the path `~`.
_HOME_EXPR = lazy(
    r"""os\.path\.expanduser\(\s*['"]~['"]\s*\)|(?:pathlib\.)?Path\.home\(\)"""
    r"""|os\.(?:environ\[|environ\.get\(|getenv\()\s*['"]HOME['"]\s*[\])]"""
    r"""|process\.env(?:\.HOME\b|\[\s*['"]HOME['"]\s*\])|(?:require\(\s*['"](?:node:)?os['"]\s*\)|\bos)\.homedir\(\)"""
    r"""|\bDir\.home\b|\bENV\[\s*['"]HOME['"]\s*\]|File\.expand_path\(\s*['"]~['"]\s*\)|\$ENV\{\s*['"]?HOME['"]?\s*\}"""
)
_EXPANDED = lazy(  # expanduser('~/docs'), File.expand_path("~/x"), R's path.expand("~/x")
    r"""(?:os\.path\.expanduser|File\.expand_path|path\.expand|normalizePath)\(\s*(['"]~[^'"]*['"])\s*\)"""
)
_STR = lazy(r"""\b(?:str|String)\(\s*('~[^']*')\s*\)""")


# the home interpolated at the start of a string that goes on with a path
_INTERPOLATED = lazy(
    r"""(?<=["'`])(?:\$ENV\{\s*['"]?HOME['"]?\s*\}|\$\{(?:process\.env\.HOME|os\.homedir\(\)|require\(['"]os['"]\)\.homedir\(\))\}"""
    r"""|\{(?:os\.environ\[['"]HOME['"]\]|Path\.home\(\)|os\.path\.expanduser\(['"]~['"]\))\}|\#\{Dir\.home\}|\$HOME)(?=/)"""
)


def _home_written(code: str) -> str:
    """``code`` with the home folder's expressions written as the path ``'~'``, so a delete of it is read."""
    if "HOME" not in code and "home" not in code and "expand" not in code:
        return code
    code = _INTERPOLATED.sub("~", code)  # "$ENV{HOME}/work", f"{Path.home()}/x", `${os.homedir()}/x`
    code = _STR.sub(r"\1", _HOME_EXPR.sub("'~'", _EXPANDED.sub(r"\1", code)))
    return code
