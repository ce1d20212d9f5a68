"""A simple command where it runs: its words, the place its paths resolve against, the policy,
and what the rules of every category share about programs (interpreters, network tools)."""

from __future__ import annotations

from watcher.guard._paths import Place
from watcher.guard._policy import Policy
from watcher.guard._readable import readable_code
from watcher.guard._shell import Command

__all__ = ["INTERPRETERS", "NETWORK", "PASS_THROUGH", "At", "code_at", "inline_code", "readable_code"]

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
        # under `set -u` a variable not known here is set (an unset one stops the script), not empty
        if self.nounset and word.startswith("$") and not self.place.known(word):
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
    at = code_at(cmd)
    if at is None:
        return cmd.stdin or ""
    if cmd.name in ("node", "bun", "deno") and any(_prints(a) for a in args[:at]):
        return f"console.log({args[at]})"  # node -p EXPR prints the expression's value
    return args[at]


def _prints(flag: str) -> bool:
    """``-p``, ``--print`` or a bundle with ``p`` (``-pe``): JavaScript runtimes print the expression."""
    return flag == "--print" or (flag.startswith("-") and not flag.startswith("--") and "p" in flag and len(flag) <= 4)


def code_at(cmd: Command) -> int | None:
    """Where in ``cmd.args`` the code an interpreter runs from its command line is (None: none is)."""
    flag = INTERPRETERS.get(cmd.name)
    if flag is None:
        return None
    args = cmd.args
    for i, a in enumerate(args):
        short = a.startswith("-") and a.endswith(flag[-1]) and len(a) <= 4 and flag.startswith("-")
        if cmd.name in ("node", "bun") and a in ("-p", "--print"):
            short = True  # node -p EXPR: an expression, run and printed
        if cmd.name in ("pwsh", "powershell") and len(a) > 1 and "-command".startswith(a.lower()):
            short = True  # -Command, or any prefix of it PowerShell takes (-c, -Co, -comm)
        if (a == flag or short) and i + 1 < len(args):
            after = i + 1
            while flag == "eval" and after < len(args) - 1 and args[after].startswith("-"):
                after += 1  # deno eval -p EXPR: its options, then the code
            return after
    return None
