"""The stub servers answer a request whose length is not one they read with a 400, at once.

A non-numeric length crashed the handler (no answer), a negative one made it read until the
client hung up, and a huge one tried to allocate it.
"""

from __future__ import annotations

import socket

import pytest

from watcher.testing import Reply, StubAnthropicServer, StubOpenAIServer
from watcher.testing._http import StubServer


@pytest.mark.parametrize("length", ["abc", "-1", "99999999999"])
@pytest.mark.parametrize("stub_class", [StubAnthropicServer, StubOpenAIServer])
def test_a_bad_content_length_is_answered_400(stub_class: type[StubServer], length: str) -> None:
    with stub_class(Reply.text("unused")) as stub:
        host, port = stub.root_url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as client:
            client.sendall(f"POST /v1/messages HTTP/1.1\r\nHost: x\r\ncontent-length: {length}\r\n\r\n{{}}".encode())
            answer = client.recv(200)
        assert answer.startswith(b"HTTP/1.1 400 content-length must be a number of bytes")
        assert stub.requests == [] and stub.remaining == 1  # nothing recorded, the script untouched
