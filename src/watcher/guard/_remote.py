"""The guard's rules for code that comes from, or hands control to, another machine: a script
downloaded and run unread, and a reverse shell."""

from __future__ import annotations

import re

from watcher.guard._context import INTERPRETERS, PASS_THROUGH, At, inline_code
from watcher.guard._files import Finding
from watcher.guard._shell import SHELLS

__all__ = ["download_exec", "remote_shell"]

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


def remote_shell(x: At) -> Finding | None:
    """A reverse shell: this machine's shell handed to another one (``nc -e``, ``/dev/tcp``, a socket in code)."""
    if not x.on("secret-exfiltration"):
        return None
    tcp = any(t.startswith(("/dev/tcp/", "/dev/udp/")) for _, t in x.cmd.redirects)
    netcat = x.name in ("nc", "ncat", "netcat") and any(re.fullmatch(r"-\w*[ec]\w*", a) for a in x.args)
    socat = x.name == "socat" and any(re.match(r"(?i)(exec|system):", a) for a in x.args)
    code = inline_code(x.cmd)
    spawned = (
        bool(code) and "socket" in code and bool(re.search(r"subprocess|pty\.spawn|dup2|/bin/(ba)?sh|exec\(", code))
    )
    if tcp or netcat or socat or spawned:
        return (
            "secret-exfiltration",
            "opens a shell for another machine (a reverse shell): whoever is there controls this one",
        )
    return None


def download_exec(x: At) -> Finding | None:
    if not x.on("download-exec"):
        return None
    name = x.name
    runs_stdin = (
        (name in SHELLS or name in INTERPRETERS)
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
            feeder = feeder.feeder if feeder.name in PASS_THROUGH else None
    texts = list(x.args)
    for t in texts:
        if re.search(r"(?:<\(|\$\(|`)\s*(?:sudo\s+)?(?:curl|wget|fetch|iwr|irm|http)\b", t) and (
            name in SHELLS or name in INTERPRETERS or name in ("eval", "source", ".", "iex", "invoke-expression")
        ):
            return (
                "download-exec",
                "runs a script downloaded from the network, unread: download it to a file, check and read it, then run it",
            )
    return None


# --- writes, tampering, databases, git, the pack's command table ----------------------------------
