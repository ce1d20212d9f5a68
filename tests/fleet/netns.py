"""Other "machines" on this one: network namespaces, each joined to the root namespace by a veth pair.

A process started with ``Machine.command(argv)`` has its own network stack; it reaches the
PostgreSQL server only at the veth address of the root side (``server_ip``), and ``down()`` cuts
the link (a partition) until ``up()``. Needs root and ``ip`` (iproute2), as CI has.
"""

from __future__ import annotations

import os
import shutil
import subprocess

__all__ = ["Machine", "can_make_machines"]


def _ip(*args: str, netns: str | None = None) -> None:
    prefix = ["ip", "netns", "exec", netns] if netns else []
    subprocess.run([*prefix, "ip", *args], check=True, capture_output=True, timeout=30)


def can_make_machines() -> bool:
    """Root and iproute2: what the namespaces need."""
    return os.geteuid() == 0 and shutil.which("ip") is not None


class Machine:
    """One network namespace with a veth link to the root namespace (subnet 10.231.<index>.0/24)."""

    def __init__(self, index: int) -> None:
        self.name = f"watcher-{os.getpid()}-{index}"
        tag = f"{os.getpid() % 10000}{index}"
        self.link, peer = f"wh{tag}", f"wn{tag}"  # names of at most 15 characters
        subnet = f"10.231.{(os.getpid() + index) % 250}"
        self.server_ip, self.ip = f"{subnet}.1", f"{subnet}.2"
        _ip("netns", "add", self.name)
        _ip("link", "add", self.link, "type", "veth", "peer", "name", peer)
        _ip("link", "set", peer, "netns", self.name)
        _ip("addr", "add", f"{self.server_ip}/24", "dev", self.link)
        _ip("link", "set", self.link, "up")
        _ip("addr", "add", f"{self.ip}/24", "dev", peer, netns=self.name)
        _ip("link", "set", peer, "up", netns=self.name)
        _ip("link", "set", "lo", "up", netns=self.name)

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` run inside this machine's namespace."""
        return ["ip", "netns", "exec", self.name, *argv]

    def down(self) -> None:
        """Cut the machine off the network (its processes keep running)."""
        _ip("link", "set", self.link, "down")

    def up(self) -> None:
        """Join it again."""
        _ip("link", "set", self.link, "up")

    def close(self) -> None:
        """Remove the namespace (and with it the veth pair)."""
        subprocess.run(["ip", "netns", "del", self.name], check=False, capture_output=True, timeout=30)
