"""The guard's rules for handing this machine to someone else: a reverse shell, a file server that
shows the home or the whole machine to the network, a container run with power over the machine."""

from __future__ import annotations

import re

from watcher.guard._context import At, inline_code
from watcher.guard._files import Finding

__all__ = ["host_control", "remote_shell"]


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
    return _served(x)


# file servers: the options naming the folder served and the address bound (`python3 -m http.server`,
# `php -S`, `http-server`, `serve`, `busybox httpd`)
_SERVERS = {
    "http.server": (("--directory", "-d"), ("--bind", "-b")),
    "SimpleHTTPServer": ((), ()),
    "php": (("-t",), ("-S",)),
    "http-server": ((), ("-a",)),
    "serve": ((), ("-l", "--listen")),
    "httpd": (("-h",), ("-p",)),
}


def _served(x: At) -> Finding | None:
    """A file server that shows the home or the whole machine (its ``~/.ssh``, ``~/.aws``) to the network."""
    spec = _SERVERS.get(x.name)
    if spec is None or (x.name == "php" and "-S" not in x.args):
        return None
    args = list(x.args)
    given = {a: args[i + 1] for i, a in enumerate(args[:-1]) if a in spec[0] + spec[1]}
    given |= {
        a.split("=", 1)[0]: a.split("=", 1)[1] for a in args if "=" in a and a.split("=", 1)[0] in spec[0] + spec[1]
    }
    folder = next((given[o] for o in spec[0] if o in given), None)
    if folder is None and x.name in ("http-server", "serve"):
        folder = next((a for a in x.positional if not a.isdigit()), None)
    root = x.path(folder) if folder else x.place.cwd
    bound = next((given[o] for o in spec[1] if o in given), "")
    if re.match(r"(?:localhost|127\.|\[?::1\]?)", bound.rsplit("//", 1)[-1]):
        return None  # this machine only
    if root == "/" or root == x.place.home or x.place.home.startswith(root.rstrip("/") + "/"):
        return (
            "secret-exfiltration",
            f"serves {'the whole machine' if root == '/' else 'your home'} to the network: its ~/.ssh and ~/.aws with it",
        )
    return None


def host_control(x: At) -> Finding | None:
    """A container run with power over this machine: privileged, with the host's ``/``, the home or
    Docker's socket mounted (``docker run --privileged -v $HOME:/host -v /var/run/docker.sock:…``)."""
    if x.name not in ("docker", "podman", "nerdctl") or "run" not in x.args or not x.on("system-change"):
        return None
    args = list(x.args)
    mounts = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-v", "--volume", "--mount")]
    mounts += [a.split("=", 1)[1] for a in args if a.startswith(("--volume=", "--mount=", "-v="))]
    sources = [
        re.split(r"[:,]", m.removeprefix("type=bind,").removeprefix("source=").removeprefix("src="))[0] for m in mounts
    ]
    paths = [x.path(s) for s in sources if s.startswith(("/", "~", "$"))]
    socket = any(p.endswith("/docker.sock") for p in paths)
    host = any(p == "/" or p == x.place.home for p in paths)
    privileged = "--privileged" in args or (
        any(a in ("--pid=host", "--net=host", "--network=host") for a in args) and host
    )
    if (privileged and (socket or host)) or (socket and host):
        return (
            "system-change",
            "runs a container with power over this machine (privileged, with its /, your home or Docker's socket)",
        )
    return None
