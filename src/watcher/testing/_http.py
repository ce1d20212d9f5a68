"""The shared HTTP machinery of the stub LLM servers: a threaded stdlib server on 127.0.0.1.

The server runs ``serve_forever`` in a daemon thread, so it serves sync clients, async clients on
any event loop and notebooks alike. Each request is recorded before it is answered; the answer
comes from the script of ``Reply`` values. Writes to a client that hung up are recorded as a
disconnect (``disconnects``), so an interrupt test can see that the cancel reached the wire.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self

from watcher.core.logs import logger
from watcher.testing.scripts import RecordedRequest, Reply

__all__ = ["ClientGone", "Exchange", "StubServer", "estimate_tokens", "text_pieces"]

log = logger("watcher.testing")


def estimate_tokens(text: str) -> int:
    """A rough token count (4 characters a token), enough for usage and cost arithmetic."""
    return max(1, len(text) // 4)


def text_pieces(text: str, words: int = 3) -> list[str]:
    """``text`` cut into streamed deltas of a few words each (concatenating them gives ``text``)."""
    pieces = re.findall(r"\s*\S+\s*", text) or ([text] if text else [])
    return ["".join(pieces[i : i + words]) for i in range(0, len(pieces), words)]


MAX_BODY_BYTES = 64 * 1024 * 1024  # what one request may send: more is refused, not read into memory


def _content_length(value: str | None) -> int | None:
    """The request body's length in bytes (0 when none is given), or None when it is not one the stub reads."""
    if not value:
        return 0
    try:
        length = int(value)
    except ValueError:
        return None
    return length if 0 <= length <= MAX_BODY_BYTES else None


class ClientGone(Exception):
    """The client closed the connection while the stub was still answering."""


class Exchange:
    """One request being answered: writes JSON, SSE events (chunked) or nothing at all."""

    def __init__(self, handler: BaseHTTPRequestHandler, server: StubServer, request: RecordedRequest) -> None:
        self.handler = handler
        self.server = server
        self.request = request
        self._chunked = False

    def send_json(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        """A complete JSON response with a content length (keep-alive stays usable)."""
        data = json.dumps(body).encode()
        h = self.handler
        h.send_response(status)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(data)))
        h.send_header("request-id", f"req_stub{len(self.server.requests):04d}")
        h.send_header("x-request-id", f"req_stub{len(self.server.requests):04d}")
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.end_headers()
        self._write(data)

    def start_stream(self) -> None:
        """Send ``text/event-stream`` headers; the body follows in chunks."""
        h = self.handler
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("cache-control", "no-cache")
        h.send_header("transfer-encoding", "chunked")
        h.send_header("request-id", f"req_stub{len(self.server.requests):04d}")
        h.end_headers()
        self._chunked = True
        self._write(b"")

    def send_event(self, data: dict[str, Any] | str, event: str | None = None) -> None:
        """One SSE event: an optional ``event:`` line, then ``data:``, then a blank line."""
        payload = data if isinstance(data, str) else json.dumps(data)
        text = (f"event: {event}\n" if event else "") + f"data: {payload}\n\n"
        self._write(text.encode())

    def end_stream(self) -> None:
        """The final zero-length chunk."""
        self._write(b"", last=True)

    def hang_up(self) -> None:
        """Close the connection without finishing (a truncated response)."""
        self.handler.close_connection = True
        self._chunked = False

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; False when the server is shutting down meanwhile."""
        return not self.server.closing.wait(seconds) if seconds > 0 else not self.server.closing.is_set()

    def _write(self, data: bytes, *, last: bool = False) -> None:
        if self._chunked:
            data = (f"{len(data):x}\r\n".encode() + data + b"\r\n") if data else b""
            if last:
                data += b"0\r\n\r\n"
        try:
            if data:
                self.handler.wfile.write(data)
            self.handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError) as exc:
            self.server.record_disconnect()
            raise ClientGone(str(exc)) from exc


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body are written apart: with Nagle on and loopback's delayed ACKs each answer
    # would wait about 40 ms for its body
    disable_nagle_algorithm = True
    server: _Server

    def do_POST(self) -> None:
        self.server.stub.handle(self)

    def do_GET(self) -> None:
        self.server.stub.handle(self)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("stub %s: " + format, self.server.stub.name, *args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    stub: StubServer

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hangs up between requests is normal; anything else is logged, not printed."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        log.exception("%s: error while answering %s", self.stub.name, client_address)


class StubServer(ABC):
    """Base of the stub servers: script, recording, lifecycle. Subclasses implement ``answer``."""

    name: ClassVar[str] = "stub"

    def __init__(
        self, *replies: Reply, host: str = "127.0.0.1", port: int = 0, default_reply: Reply | None = None
    ) -> None:
        self.requests: list[RecordedRequest] = []
        self.default_reply = default_reply
        self.disconnects: list[float] = []
        self.closing = threading.Event()
        self._script: deque[Reply] = deque(replies)
        self._lock = threading.Condition()
        self._server = _Server((host, port), _Handler)
        self._server.stub = self
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------------------

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:PORT`` (no path)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        """The URL to hand to the SDK client as ``base_url``."""
        return self.root_url

    def start(self) -> Self:
        """Serve in a background thread (idempotent)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"{self.name}-server",
                daemon=True,
            )
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; stalled and endless replies end at once."""
        self.closing.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- script and records ------------------------------------------------------------------

    def push(self, *replies: Reply) -> None:
        """Append replies to the script; each request consumes the next one."""
        with self._lock:
            self._script.extend(replies)

    @property
    def remaining(self) -> int:
        """Replies not consumed yet."""
        with self._lock:
            return len(self._script)

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until ``n`` requests were recorded; raises ``TimeoutError`` naming what arrived."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self.requests) >= n, timeout):
                raise TimeoutError(f"{self.name}: expected {n} requests within {timeout:g}s, got {len(self.requests)}")
            return list(self.requests)

    async def wait_for_requests_async(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:  # noqa: ASYNC109 - same signature as the sync wait
        """``wait_for_requests`` for async code: does not block the event loop."""
        return await asyncio.to_thread(self.wait_for_requests, n, timeout)

    def wait_for_disconnects(self, n: int = 1, timeout: float = 5.0) -> float:
        """Block until ``n`` client disconnects were seen mid-answer; returns the last one's ``perf_counter``."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self.disconnects) >= n, timeout):
                raise TimeoutError(
                    f"{self.name}: expected {n} disconnects within {timeout:g}s, saw {len(self.disconnects)}"
                )
            return self.disconnects[n - 1]

    def record_disconnect(self) -> None:
        with self._lock:
            self.disconnects.append(time.perf_counter())
            self._lock.notify_all()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)
            self._lock.notify_all()

    def offers_tools(self, body: dict[str, Any]) -> bool:
        """True when a request body offers the model tools (a wire format may say so its own way)."""
        return bool(body.get("tools"))

    def _next_reply(self, request: RecordedRequest | None = None) -> Reply | None:
        """The reply for ``request``: ``default_reply`` for a request offering no tools, else the script's next.

        A real CLI sends side requests without tools (a session title, a summary) whose number
        and timing a test does not script; with a ``default_reply`` they leave the script alone.
        This is the one place every stub server picks its reply.
        """
        body = request.body if request is not None else None
        if self.default_reply is not None and body is not None and not self.offers_tools(body):
            return self.default_reply
        with self._lock:
            return self._script.popleft() if self._script else None

    # --- serving -------------------------------------------------------------------------------

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = _content_length(handler.headers.get("content-length"))
        if length is None:  # not a length, or more than any request of a test: answered, never read
            handler.close_connection = True
            handler.send_error(400, "content-length must be a number of bytes up to 64 MB")
            return
        raw = handler.rfile.read(length) if length else b""
        if len(raw) < length:  # the client gave up before its body was sent (a cancelled call): no request
            handler.close_connection = True
            return
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = handler.path.split("?", 1)[0]
        headers = {k.lower(): v for k, v in handler.headers.items()}
        request = RecordedRequest(handler.command, path, headers, body if isinstance(body, dict) else None, raw)
        self._record(request)
        exchange = Exchange(handler, self, request)
        try:
            self.answer(exchange)
        except ClientGone:
            handler.close_connection = True

    @abstractmethod
    def answer(self, exchange: Exchange) -> None:
        """Answer one recorded request in this server's wire format."""

    def script_ran_out(self) -> str:
        """The message of the 500 sent when a request arrives with an empty script."""
        return (
            f"watcher {self.name}: the reply script ran out after {len(self.requests) - 1} requests; "
            "push() another Reply before the client calls again"
        )
