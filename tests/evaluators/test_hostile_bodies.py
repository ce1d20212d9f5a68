"""A server's answer is read up to a bound, and a redirect is not followed, by both real SDKs.

The server here is a raw socket on 127.0.0.1 that answers every request with what the test
writes: an endless chunked body, a declared length of gigabytes, a gzip bomb, a redirect to a
second server that records what reaches it. The evaluation must fail closed, saying why, after
reading no more than the bound, and never send the key on.
"""

from __future__ import annotations

import gzip
import json
import socket
import time
from collections.abc import Callable
from dataclasses import replace

import pytest
from raw_http import Handler, RawServer

from watcher.core.errors import ConfigurationError, EvaluationError
from watcher.core.evaluation import EvaluationRequest
from watcher.core.observations import ToolCall, ToolResult
from watcher.core.spec import Caps, WatcherSpec
from watcher.evaluators._llm import MAX_RESPONSE_BYTES
from watcher.evaluators._llm_base import LLMEvaluator
from watcher.evaluators.anthropic import AnthropicEvaluator
from watcher.evaluators.openai_compat import OpenAICompatEvaluator
from watcher.evaluators.preflight import check_reachable
from watcher.settings import Settings

KEY = "sk-ant-api03-hostile-body-test-key-0000000000"
REQUEST = EvaluationRequest(
    WatcherSpec(name="sec", role="security", brief="Flag SQL injection."),
    "agent",
    (
        ToolCall(id="t1", name="Write", input={"file_path": "a.py", "content": "x = 1\n"}),
        ToolResult(tool_call_id="t1", output="wrote a.py"),
    ),
    new=2,
    index=1,
    breakpoint="turn_done",
)
Writer = Callable[[socket.socket], None]


@pytest.fixture
def serve(raw_server: Callable[[Handler], RawServer]) -> Callable[[Writer], RawServer]:
    """A server whose every answer is ``write(conn)``."""
    return lambda write: raw_server(lambda conn, _head: write(conn))


def evaluator(provider: str, url: str) -> LLMEvaluator:
    """An evaluator that would retry once: a body too large must not be read twice."""
    if provider == "anthropic":
        return AnthropicEvaluator(
            base_url=url, api_key=KEY, max_retries=1, timeout=20, counter="estimate", settings=Settings()
        )
    return OpenAICompatEvaluator(
        model="m", base_url=f"{url}/v1", api_key=KEY, max_retries=1, timeout=20, settings=Settings()
    )


async def failure(provider: str, url: str) -> str:
    llm = evaluator(provider, url)
    try:
        with pytest.raises(EvaluationError) as failed:
            await llm.evaluate(REQUEST)
    finally:
        await llm.aclose()
    return str(failed.value)


PROVIDERS = ["anthropic", "openai"]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_an_endless_body_is_read_up_to_the_bound_and_fails_closed(
    provider: str, serve: Callable[[Writer], RawServer]
) -> None:
    def endless(conn: socket.socket) -> None:
        server.send(conn, b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
        chunk = b"x" * 65536
        while True:  # until the client hangs up (the test's timeout bounds a client that never does)
            server.send(conn, b"%x\r\n%s\r\n" % (len(chunk), chunk))

    server = serve(endless)
    message = await failure(provider, server.url)
    assert f"longer than {MAX_RESPONSE_BYTES // 2**20} MiB" in message and server.url in message
    assert server.hung_up.wait(5), "the client closed the connection"
    assert len(server.heads) == 1, "a body too large is not asked for again"
    assert server.sent < MAX_RESPONSE_BYTES + 16 * 2**20  # the bound, and what the sockets' buffers took


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_declared_length_over_the_bound_is_not_read_at_all(
    provider: str, serve: Callable[[Writer], RawServer]
) -> None:
    def huge(conn: socket.socket) -> None:
        head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 10000000000\r\n\r\n"
        server.send(conn, head + b"{")
        conn.recv(1)  # returns when the client closes

    server = serve(huge)
    assert "longer than" in await failure(provider, server.url)
    assert len(server.heads) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_gzip_bomb_is_stopped_at_the_bound_of_what_it_expands_to(
    provider: str, serve: Callable[[Writer], RawServer]
) -> None:
    bomb = gzip.compress(b"\0" * (4 * MAX_RESPONSE_BYTES), compresslevel=9)  # about 130 kB on the wire
    assert len(bomb) < MAX_RESPONSE_BYTES // 10

    def gzipped(conn: socket.socket) -> None:
        head = (
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
            f"content-length: {len(bomb)}\r\nconnection: close\r\n\r\n"
        )
        server.send(conn, head.encode() + bomb)

    server = serve(gzipped)
    assert "longer than" in await failure(provider, server.url)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_redirect_is_not_followed_with_the_key(provider: str, serve: Callable[[Writer], RawServer]) -> None:
    elsewhere = serve(lambda conn: elsewhere.send(conn, b"HTTP/1.1 500 x\r\ncontent-length: 0\r\n\r\n"))

    def redirect(conn: socket.socket) -> None:
        target = f"{elsewhere.url}/steal/v1/messages"
        head = (
            f"HTTP/1.1 307 Temporary Redirect\r\nlocation: {target}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        )
        server.send(conn, head.encode())

    server = serve(redirect)
    message = await failure(provider, server.url)
    assert "redirected to" in message and elsewhere.url in message and "HTTP 307" in message
    assert elsewhere.heads == [], "nothing (no key, no prompt) reached the address the redirect named"
    assert KEY not in message


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_an_answer_within_the_bound_is_read_as_before(
    provider: str, serve: Callable[[Writer], RawServer]
) -> None:
    if provider == "anthropic":
        answer = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": "[CONTINUE]\nfine\n[/CONTINUE]"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 3},
        }
    else:
        answer = {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "[CONTINUE]\nfine\n[/CONTINUE]"},
                    "finish_reason": "stop",
                }
            ],
        }
    body = gzip.compress(json.dumps(answer).encode())

    def ok(conn: socket.socket) -> None:
        head = (
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
        )
        server.send(conn, head.encode() + body)

    server = serve(ok)
    llm = evaluator(provider, server.url)
    try:
        result = await llm.evaluate(REQUEST)
    finally:
        await llm.aclose()
    assert result.decision.note == "fine"


ESCAPES = "\x1b[2J\x1b]8;;http://evil.example\x07click here\x1b]8;;\x07\r\x08"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_terminal_escapes_in_a_servers_words_never_reach_a_message(
    provider: str, serve: Callable[[Writer], RawServer]
) -> None:
    data = json.dumps({"error": {"message": ESCAPES}}).encode()

    def answer(status: str) -> Writer:
        head = f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(data)}\r\n\r\n"
        return lambda conn: conn.sendall(head.encode() + data)

    with pytest.raises(ConfigurationError) as refused:
        check_reachable(evaluator(provider, serve(answer("401 Unauthorized")).url))  # the pre-start check's message
    failed = await failure(provider, serve(answer("400 Bad Request")).url)  # a failed evaluation's
    for message in (str(refused.value), failed):
        assert "click here" in message
        assert not any(c in message for c in "\x1b\x07\r\x08"), repr(message)


async def test_a_server_that_answers_a_byte_at_a_time_is_cut_at_the_watchers_budget(
    serve: Callable[[Writer], RawServer],
) -> None:
    def trickle(conn: socket.socket) -> None:
        server.send(conn, b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n")
        while not server.hung_up.is_set():
            server.send(conn, b" ")
            server.hung_up.wait(0.1)  # the pace of the trickle, not a synchronisation

    server = serve(trickle)
    llm = evaluator("anthropic", server.url)  # each read gets a byte well within its 20 s read timeout
    request = replace(REQUEST, spec=replace(REQUEST.spec, caps=Caps(timeout_s=3.0)))
    started = time.monotonic()
    try:
        with pytest.raises(EvaluationError, match=r"no answer from .* within 2s"):
            await llm.evaluate(request)
    finally:
        await llm.aclose()
    assert time.monotonic() - started < 3.0


async def test_the_unbounded_client_of_an_agent_run_does_not_follow_a_redirect_either(
    serve: Callable[[Writer], RawServer],
) -> None:
    import anthropic

    from watcher.evaluators._llm import http_client

    elsewhere = serve(lambda conn: conn.sendall(b"HTTP/1.1 500 x\r\ncontent-length: 0\r\n\r\n"))
    head = f"HTTP/1.1 308 Permanent Redirect\r\nlocation: {elsewhere.url}/v1/messages\r\ncontent-length: 0\r\n\r\n"
    server = serve(lambda conn: conn.sendall(head.encode()))
    client = anthropic.AsyncAnthropic(
        api_key=KEY, base_url=server.url, max_retries=0, http_client=http_client(anthropic, longest_wait=60)
    )
    try:
        with pytest.raises(anthropic.APIStatusError) as answered:
            await client.messages.create(
                model="claude-haiku-4-5", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
            )
    finally:
        await client.close()
    assert answered.value.status_code == 308 and elsewhere.heads == []


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_token_counts_that_are_not_counts_neither_drop_the_interjection_nor_reach_the_totals(
    provider: str, serve: Callable[[Writer], RawServer]
) -> None:
    from watcher.agents.replay import replay

    text = "[INTERJECT]\nurgent: true\ncontent: a.py builds SQL from input.\n[/INTERJECT]"
    if provider == "anthropic":
        answer: dict[str, object] = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": 42,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": "many", "output_tokens": -5, "cache_read_input_tokens": 1.5},
        }
    else:
        message = {"role": "assistant", "content": text}
        answer = {
            "id": "c1",
            "object": "chat.completion",
            "model": None,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": "many", "completion_tokens": -5, "prompt_tokens_details": {"cached_tokens": []}},
        }
    data = json.dumps(answer).encode()
    head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(data)}\r\n\r\n".encode()
    server = serve(lambda conn: conn.sendall(head + data))
    llm = evaluator(provider, server.url)
    try:
        result = await replay(REQUEST.observations, [(REQUEST.spec, llm)])
    finally:
        await llm.aclose()
    (event,) = result.evaluations
    assert event.decision == "interject" and event.error is None
    assert (event.input_tokens, event.output_tokens, event.cache_read_tokens) == (0, 0, 0)
    assert event.model == llm.model
