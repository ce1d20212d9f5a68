"""A loopback TCP proxy to a PostgreSQL server, for the journal's fault tests.

It reads the client's side one protocol message at a time, so that a test can lose a link at an
exact message (``forward``), and it can go down (every link closed, new ones refused) and come back.
Every socket it opens is closed by ``close()``: a socket left to the garbage collector would warn
in whichever later test happens to collect it.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from dataclasses import dataclass, field
from types import TracebackType


@dataclass
class Link:
    """One client's connection through the proxy: its two sockets, and whether the test cut it."""

    client: socket.socket
    server: socket.socket
    lost: threading.Event = field(default_factory=threading.Event)

    def end(self) -> None:
        """Close both sides, as a server that went away ends a link."""
        for end in (self.client, self.server):
            hang_up(end)


def hang_up(sock: socket.socket) -> None:
    """Close a socket so that its peer sees it closed at once: ``close()`` alone sends nothing while
    another thread is still blocked reading it, and the peer would wait for ever."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


class PgProxy:
    """Forwards every link to the server unchanged; subclasses override ``forward`` to cut one."""

    def __init__(self, server_port: int) -> None:
        self.target = ("127.0.0.1", server_port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.down = threading.Event()  # while set, new links are refused
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, database: str = "postgres") -> str:
        """A URL through this proxy (plain text: the proxy reads the protocol's messages)."""
        return f"postgresql://watcher@127.0.0.1:{self.port}/{database}?sslmode=disable&gssencmode=disable"

    def forward(self, link: Link, message: bytes, *, startup: bool) -> bool:
        """Pass one whole client message to the server; False when the link was cut instead."""
        link.server.sendall(message)
        return True

    def cut_all(self) -> None:
        """Go down: every link closed at once, new ones refused until ``up()``."""
        self.down.set()
        with self._lock:
            for sock in self._sockets:
                hang_up(sock)

    def up(self) -> None:
        self.down.clear()

    def close(self) -> None:
        """Stop listening and close every socket the proxy ever opened."""
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread: close() alone leaves it blocked
        self.listener.close()
        self.cut_all()

    def __enter__(self) -> PgProxy:
        return self

    def __exit__(self, *exc: tuple[type[BaseException], BaseException, TracebackType] | None) -> None:
        self.close()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):  # the listener was closed
            while True:
                client, _ = self.listener.accept()
                if self.down.is_set():
                    client.close()  # as a server that went away
                    continue
                with self._lock:
                    self._sockets.append(client)
                    server = socket.create_connection(self.target)
                    self._sockets.append(server)
                link = Link(client, server)
                threading.Thread(target=self._up, args=(link,), daemon=True).start()
                threading.Thread(target=self._down, args=(link,), daemon=True).start()

    def _up(self, link: Link) -> None:
        buffer, started = b"", False
        with contextlib.suppress(OSError):
            while data := link.client.recv(65536):
                buffer += data
                while True:  # one whole message at a time: the startup packet has no type byte
                    head = 1 if started else 0
                    if len(buffer) < head + 4:
                        break
                    size = head + struct.unpack("!I", buffer[head : head + 4])[0]
                    if len(buffer) < size:
                        break
                    message, buffer = buffer[:size], buffer[size:]
                    if not self.forward(link, message, startup=not started):
                        return
                    started = True
        link.end()

    @staticmethod
    def _down(link: Link) -> None:
        with contextlib.suppress(OSError):
            while (data := link.server.recv(65536)) and not link.lost.is_set():
                link.client.sendall(data)
        if not link.lost.is_set():
            link.end()
