"""A bare HTTP server on a socket, for answers no stub server sends (bodies that never end, gzip
bombs, redirects, a key quoted back): each request is read whole and its connection handed over.

``handle(conn, head)`` writes whatever bytes the test wants; ``send`` counts what it wrote, a
client that hangs up mid-answer sets ``hung_up``, and ``done`` is set when the server closes (a
handler that stalls waits on it).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable

Handler = Callable[[socket.socket, bytes], None]  # the connection, the request's head


class RawServer:
    """Answers each request, on a thread of its own, by handing its connection to ``handle``."""

    def __init__(self, handle: Handler) -> None:
        self.handle = handle
        self.heads: list[bytes] = []  # each request's head, as it arrived
        self.sent = 0
        self.hung_up = threading.Event()
        self.done = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            self.heads.append(head)
            length = next(
                (int(v.split(b":")[1]) for v in head.lower().split(b"\r\n") if v.startswith(b"content-length:")), 0
            )
            while len(body) < length and (chunk := conn.recv(65536)):
                body += chunk
            try:
                self.handle(conn, head)
            except OSError:  # the client closed the connection: it stopped reading
                self.hung_up.set()

    def send(self, conn: socket.socket, data: bytes) -> None:
        conn.sendall(data)
        self.sent += len(data)

    def close(self) -> None:
        self.done.set()
        self.sock.close()
