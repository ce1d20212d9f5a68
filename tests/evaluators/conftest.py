"""Fixtures of the evaluator tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from raw_http import Handler, RawServer


@pytest.fixture
def raw_server() -> Iterator[Callable[[Handler], RawServer]]:
    """Start ``RawServer``s with a handler each; all are closed when the test ends."""
    servers: list[RawServer] = []

    def start(handle: Handler) -> RawServer:
        servers.append(RawServer(handle))
        return servers[-1]

    yield start
    for server in servers:
        server.close()
