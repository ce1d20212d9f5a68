"""The OpenAI-compatible stub, driven through the real ``openai`` SDK (and raw HTTP for the wire shape)."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator

import openai
import pytest

from watcher.testing import Reply, StubOpenAIServer

MESSAGES = [{"role": "user", "content": "hi"}]


CLIENTS: list[object] = []  # SDK clients made by a test, closed after it (unclosed sockets warn)


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while CLIENTS:
        CLIENTS.pop().close()  # type: ignore[attr-defined]


def client(stub: StubOpenAIServer, **options: object) -> openai.OpenAI:
    sdk = openai.OpenAI(base_url=stub.base_url, api_key="not-needed", **options)  # type: ignore[arg-type]
    CLIENTS.append(sdk)
    return sdk


def test_base_url_ends_with_v1_and_models_are_listed(openai_stub: StubOpenAIServer) -> None:
    assert openai_stub.base_url.endswith("/v1")
    assert [m.id for m in client(openai_stub).models.list()] == ["stub-model"]


def test_non_streaming_completion_with_usage(openai_stub: StubOpenAIServer) -> None:
    openai_stub.push(Reply.text("hello", usage={"input_tokens": 7, "output_tokens": 2, "cache_read_input_tokens": 3}))
    completion = client(openai_stub).chat.completions.create(model="local-model", messages=MESSAGES)  # type: ignore[arg-type]
    assert completion.choices[0].message.content == "hello"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "local-model"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (10, 2)
    assert (
        completion.usage.prompt_tokens_details is not None and completion.usage.prompt_tokens_details.cached_tokens == 3
    )
    (request,) = openai_stub.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer not-needed"


def test_stream_is_data_lines_ending_with_done(openai_stub: StubOpenAIServer) -> None:
    openai_stub.push(Reply.text("one two three four five six seven"))
    body = {"model": "m", "messages": MESSAGES, "stream": True, "stream_options": {"include_usage": True}}
    request = urllib.request.Request(
        f"{openai_stub.base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.headers["content-type"] == "text/event-stream"
        frames = [f for f in response.read().decode().split("\n\n") if f.strip()]
    assert all(f.startswith("data: ") and "\nevent:" not in f and not f.startswith("event:") for f in frames)
    assert frames[-1] == "data: [DONE]"
    chunks = [json.loads(f.removeprefix("data: ")) for f in frames[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert (
        "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
        == "one two three four five six seven"
    )
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0


def test_streamed_tool_calls_assemble_in_the_sdk(openai_stub: StubOpenAIServer) -> None:
    openai_stub.push(Reply.tool_use("Write", {"file_path": "a.py", "content": "x = 1"}, id="call_1"))
    with client(openai_stub).chat.completions.stream(model="m", messages=MESSAGES) as stream:  # type: ignore[arg-type]
        final = stream.get_final_completion()
    choice = final.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls is not None
    (call,) = choice.message.tool_calls
    assert call.id == "call_1" and call.function.name == "Write"  # type: ignore[union-attr]
    assert json.loads(call.function.arguments) == {"file_path": "a.py", "content": "x = 1"}  # type: ignore[union-attr]


def test_rate_limit_is_retried_fast_then_succeeds(openai_stub: StubOpenAIServer) -> None:
    openai_stub.push(Reply.error(429, "rate_limit_exceeded"), Reply.text("ok"))
    started = time.perf_counter()
    completion = client(openai_stub, max_retries=1).chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
    assert completion.choices[0].message.content == "ok"
    assert time.perf_counter() - started < 1.0
    assert len(openai_stub.requests) == 2


def test_error_body_reaches_the_sdk(openai_stub: StubOpenAIServer) -> None:
    openai_stub.push(Reply.error(400, "invalid_request_error", "model not loaded"))
    with pytest.raises(openai.BadRequestError, match="model not loaded"):
        client(openai_stub).chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]


def test_in_stream_error_chunk_raises(openai_stub: StubOpenAIServer) -> None:
    openai_stub.push(Reply.stream_error(after_events=2))
    with pytest.raises(openai.APIError, match="Overloaded"):
        for _ in client(openai_stub).chat.completions.create(model="m", messages=MESSAGES, stream=True):  # type: ignore[call-overload]
            pass


def test_stall_times_out(openai_stub: StubOpenAIServer) -> None:
    openai_stub.push(Reply.stall(10))
    with pytest.raises(openai.APITimeoutError):
        client(openai_stub, max_retries=0, timeout=0.2).chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]


async def test_async_client_works_against_the_stub(openai_stub: StubOpenAIServer) -> None:
    openai_stub.push(Reply.text("async ok"))
    aclient = openai.AsyncOpenAI(base_url=openai_stub.base_url, api_key="x")
    completion = await aclient.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
    assert completion.choices[0].message.content == "async ok"
    assert len(await openai_stub.wait_for_requests_async(1)) == 1
    await aclient.close()
