"""The fault tests' loopback proxy leaves nothing open: a socket left to the garbage collector
warns in whichever later test collects it, and fails that test instead of the one that leaked it."""

from __future__ import annotations

import gc
import socket
import threading
import time
import warnings

from pg_proxy import PgProxy


def test_closing_the_proxy_closes_every_link_and_stops_its_threads() -> None:
    upstream = socket.create_server(("127.0.0.1", 0))
    before = set(threading.enumerate())
    proxy = PgProxy(upstream.getsockname()[1])
    with socket.create_connection(("127.0.0.1", proxy.port)) as client:
        accepted, _ = upstream.accept()  # the proxy's own link to the server
        client.sendall(b"\x00\x00\x00\x08\x04\xd2\x16\x2f")  # a whole startup-sized message
        assert accepted.recv(8) == b"\x00\x00\x00\x08\x04\xd2\x16\x2f"
        proxy.close()
        assert client.recv(1) == b"", "the client's link was closed"
        assert accepted.recv(1) == b"", "the server's link was closed"
    accepted.close()
    upstream.close()
    deadline = time.monotonic() + 10
    while (left := _proxy_threads(before)) and time.monotonic() < deadline:
        time.sleep(0.01)  # polling: a thread just started may not have begun to run
    assert not left, f"{[t.name for t in left]} still run after close()"
    del proxy
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]


def _proxy_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    return [t for t in set(threading.enumerate()) - before if t.name.endswith(("(_accept)", "(_up)", "(_down)"))]
