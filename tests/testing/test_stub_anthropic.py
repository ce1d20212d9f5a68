"""The Anthropic stub, driven through the real ``anthropic`` SDK (and raw HTTP for the wire shape)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import anthropic
import httpx2
import pytest

from watcher.testing import RecordedRequest, Reply, StubAnthropicServer

MESSAGES = [{"role": "user", "content": "hi"}]


CLIENTS: list[object] = []  # SDK clients made by a test, closed after it (unclosed sockets warn)


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while CLIENTS:
        CLIENTS.pop().close()  # type: ignore[attr-defined]


def client(stub: StubAnthropicServer, **options: object) -> anthropic.Anthropic:
    sdk = anthropic.Anthropic(base_url=stub.base_url, api_key="sk-test", **options)  # type: ignore[arg-type]
    CLIENTS.append(sdk)
    return sdk


def raw_post(stub: StubAnthropicServer, body: dict[str, object], headers: dict[str, str]) -> tuple[int, bytes]:
    request = urllib.request.Request(
        f"{stub.base_url}/v1/messages", data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_non_streaming_text_is_a_full_message_and_the_request_is_recorded(anthropic_stub: StubAnthropicServer) -> None:
    anthropic_stub.push(Reply.text("hello there", usage={"input_tokens": 11, "output_tokens": 3}))
    message = client(anthropic_stub).messages.create(model="claude-haiku-4-5", max_tokens=50, messages=MESSAGES)
    assert message.content[0].type == "text" and message.content[0].text == "hello there"
    assert message.model == "claude-haiku-4-5"
    assert message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (11, 3)
    (request,) = anthropic_stub.requests
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["anthropic-version"]
    assert request.body == {"model": "claude-haiku-4-5", "max_tokens": 50, "messages": MESSAGES}
    assert json.loads(request.raw) == request.body


def test_x_api_key_is_accepted_and_missing_credentials_get_401(anthropic_stub: StubAnthropicServer) -> None:
    anthropic_stub.push(Reply.text("ok"))
    body = {"model": "m", "max_tokens": 5, "messages": MESSAGES}
    old_style = {"x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json"}
    status, data = raw_post(anthropic_stub, body, old_style)
    assert status == 200 and json.loads(data)["content"][0]["text"] == "ok"
    status, data = raw_post(anthropic_stub, body, {"content-type": "application/json"})
    assert status == 401 and json.loads(data)["error"]["type"] == "authentication_error"
    assert anthropic_stub.remaining == 0  # the rejected request consumed no reply


def test_stream_has_event_lines_in_wire_order(anthropic_stub: StubAnthropicServer) -> None:
    anthropic_stub.push(Reply.tool_use("Write", {"file_path": "a.py", "content": "x = 1"}, text="writing it"))
    status, data = raw_post(
        anthropic_stub,
        {"model": "m", "max_tokens": 50, "messages": MESSAGES, "stream": True},
        {"authorization": "Bearer k", "content-type": "application/json"},
    )
    assert status == 200
    frames = [f for f in data.decode().split("\n\n") if f.strip()]
    names = [f.split("\n")[0].removeprefix("event: ") for f in frames]
    for frame, name in zip(frames, names, strict=True):
        event_line, data_line = frame.split("\n")
        assert event_line == f"event: {name}"
        assert json.loads(data_line.removeprefix("data: "))["type"] == name
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 2
    deltas = [
        json.loads(f.split("data: ", 1)[1])["delta"] for f in frames if f.startswith("event: content_block_delta")
    ]
    assert sum(d["type"] == "input_json_delta" for d in deltas) >= 3  # the tool input arrives in fragments


def test_stream_through_the_sdk_assembles_text_and_tool_use(anthropic_stub: StubAnthropicServer) -> None:
    anthropic_stub.push(
        Reply.tool_use(
            "Write", {"file_path": "a.py", "content": "print('hi')"}, id="toolu_1", text="I will write a.py now"
        )
    )
    with client(anthropic_stub).messages.stream(model="m", max_tokens=50, messages=MESSAGES) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "I will write a.py now"
    assert final.stop_reason == "tool_use"
    tool = final.content[1]
    assert tool.type == "tool_use" and (tool.id, tool.name) == ("toolu_1", "Write")
    assert tool.input == {"file_path": "a.py", "content": "print('hi')"}
    assert final.usage.output_tokens > 1  # message_delta's usage reached the snapshot
    assert anthropic_stub.requests[0].stream


def test_several_tool_uses_in_one_reply(anthropic_stub: StubAnthropicServer) -> None:
    anthropic_stub.push(Reply.tool_uses([("Read", {"path": "a"}), ("Read", {"path": "b"})]))
    with client(anthropic_stub).messages.stream(model="m", max_tokens=50, messages=MESSAGES) as stream:
        final = stream.get_final_message()
    assert [(b.type, getattr(b, "input", None)) for b in final.content] == [
        ("tool_use", {"path": "a"}),
        ("tool_use", {"path": "b"}),
    ]


@pytest.mark.parametrize(("status", "kind"), [(529, "overloaded_error"), (429, "rate_limit_error"), (500, "api_error")])
def test_errors_are_retried_fast_with_retry_after_ms(
    anthropic_stub: StubAnthropicServer, status: int, kind: str
) -> None:
    anthropic_stub.push(Reply.error(status, kind), Reply.error(status, kind), Reply.text("finally"))
    started = time.perf_counter()
    message = client(anthropic_stub, max_retries=2).messages.create(model="m", max_tokens=5, messages=MESSAGES)
    assert message.content[0].text == "finally"  # type: ignore[union-attr]
    assert time.perf_counter() - started < 1.0
    assert [r.headers["x-stainless-retry-count"] for r in anthropic_stub.requests] == ["0", "1", "2"]


def test_error_body_reaches_the_sdk_exception(anthropic_stub: StubAnthropicServer) -> None:
    anthropic_stub.push(Reply.error(400, "invalid_request_error", "tool_use ids must have tool_result blocks"))
    with pytest.raises(anthropic.BadRequestError, match="tool_result blocks") as caught:
        client(anthropic_stub).messages.create(model="m", max_tokens=5, messages=MESSAGES)
    assert caught.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]


def test_should_retry_false_stops_the_sdk_retrying(anthropic_stub: StubAnthropicServer) -> None:
    anthropic_stub.push(Reply.error(529, should_retry=False))
    with pytest.raises(anthropic.APIStatusError) as caught:
        client(anthropic_stub, max_retries=2).messages.create(model="m", max_tokens=5, messages=MESSAGES)
    assert caught.value.status_code == 529
    assert len(anthropic_stub.requests) == 1


def test_mid_stream_error_event_raises_after_partial_text(anthropic_stub: StubAnthropicServer) -> None:
    anthropic_stub.push(Reply.stream_error(after_events=4, text="half an answer"))
    seen: list[str] = []
    sdk = client(anthropic_stub)
    with (
        pytest.raises(anthropic.APIStatusError, match="overloaded_error"),
        sdk.messages.stream(model="m", max_tokens=50, messages=MESSAGES) as stream,
    ):
        seen.extend(stream.text_stream)
    assert "".join(seen) == "half an answer"
    assert len(anthropic_stub.requests) == 1  # a started stream is never retried


def test_truncated_stream_raises_a_transport_error(anthropic_stub: StubAnthropicServer) -> None:
    anthropic_stub.push(Reply.truncated(after_events=3))
    with (
        pytest.raises(httpx2.TransportError),
        client(anthropic_stub).messages.stream(model="m", max_tokens=50, messages=MESSAGES) as stream,
    ):
        stream.get_final_message()


def test_stall_times_out_the_client(anthropic_stub: StubAnthropicServer) -> None:
    anthropic_stub.push(Reply.stall(10))
    started = time.perf_counter()
    with pytest.raises(anthropic.APITimeoutError):
        client(anthropic_stub, max_retries=0, timeout=0.2).messages.create(model="m", max_tokens=5, messages=MESSAGES)
    assert time.perf_counter() - started < 2


def test_stalled_stream_sends_message_start_then_nothing(anthropic_stub: StubAnthropicServer) -> None:
    anthropic_stub.push(Reply.stall(10))
    events: list[str] = []
    with (
        pytest.raises(httpx2.ReadTimeout),
        client(anthropic_stub, max_retries=0, timeout=0.3).messages.create(
            model="m", max_tokens=5, messages=MESSAGES, stream=True
        ) as stream,
    ):
        events.extend(event.type for event in stream)
    assert events == ["message_start"]


async def test_endless_stream_runs_until_an_async_cancel_and_the_disconnect_is_recorded(
    anthropic_stub: StubAnthropicServer,
) -> None:
    anthropic_stub.push(Reply.endless(interval_s=0.002))
    aclient = anthropic.AsyncAnthropic(base_url=anthropic_stub.base_url, api_key="k")
    deltas = 0
    got_ten = asyncio.Event()

    async def read() -> None:
        nonlocal deltas
        async with aclient.messages.stream(model="m", max_tokens=50, messages=MESSAGES) as stream:
            async for _ in stream.text_stream:
                deltas += 1
                if deltas == 10:
                    got_ten.set()

    task = asyncio.create_task(read())
    await asyncio.wait_for(got_ten.wait(), 5)
    cancelled_at = time.perf_counter()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    seen_at = await asyncio.to_thread(anthropic_stub.wait_for_disconnects, 1, 5.0)
    assert seen_at - cancelled_at < 1.0
    await aclient.close()


def test_empty_script_answers_500_saying_it_ran_out(anthropic_stub: StubAnthropicServer) -> None:
    with pytest.raises(anthropic.InternalServerError, match="script ran out"):
        client(anthropic_stub, max_retries=2).messages.create(model="m", max_tokens=5, messages=MESSAGES)
    assert len(anthropic_stub.requests) == 1  # x-should-retry: false


def test_dynamic_reply_is_computed_from_the_request(anthropic_stub: StubAnthropicServer) -> None:
    def echo(request: RecordedRequest) -> Reply:
        assert request.body is not None
        return Reply.text(f"you said {request.body['messages'][-1]['content']}")

    anthropic_stub.push(Reply.dynamic(echo))
    message = client(anthropic_stub).messages.create(
        model="m", max_tokens=5, messages=[{"role": "user", "content": "ping"}]
    )
    assert message.content[0].text == "you said ping"  # type: ignore[union-attr]


def test_cache_usage_is_computed_from_the_cache_control_prefix(anthropic_stub: StubAnthropicServer) -> None:
    system = [{"type": "text", "text": "You are a watcher. " * 50, "cache_control": {"type": "ephemeral"}}]
    anthropic_stub.push(Reply.text("a"), Reply.text("b"), Reply.text("c"), Reply.text("d"))
    sdk = client(anthropic_stub)
    first = sdk.messages.create(model="m", max_tokens=5, system=system, messages=[{"role": "user", "content": "one"}])  # type: ignore[arg-type]
    second = sdk.messages.create(model="m", max_tokens=5, system=system, messages=[{"role": "user", "content": "two"}])  # type: ignore[arg-type]
    changed = [{**system[0], "text": "Another brief. " * 50}]
    third = sdk.messages.create(model="m", max_tokens=5, system=changed, messages=[{"role": "user", "content": "two"}])  # type: ignore[arg-type]
    plain = sdk.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "two"}])
    assert first.usage.cache_creation_input_tokens and not first.usage.cache_read_input_tokens
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert not second.usage.cache_creation_input_tokens
    assert third.usage.cache_creation_input_tokens and not third.usage.cache_read_input_tokens
    assert not plain.usage.cache_creation_input_tokens and not plain.usage.cache_read_input_tokens


def test_wait_for_requests_times_out_naming_what_arrived(anthropic_stub: StubAnthropicServer) -> None:
    with pytest.raises(TimeoutError, match=r"expected 1 requests within 0\.05s, got 0"):
        anthropic_stub.wait_for_requests(1, timeout=0.05)


def test_close_ends_a_stalled_answer_promptly() -> None:
    stub = StubAnthropicServer(Reply.stall(30)).start()
    sdk = anthropic.Anthropic(base_url=stub.base_url, api_key="k", max_retries=0, timeout=5)

    def close_once_asked() -> None:
        stub.wait_for_requests(1)
        stub.close()

    closer = threading.Thread(target=close_once_asked)
    closer.start()
    started = time.perf_counter()
    with pytest.raises(anthropic.APIConnectionError):
        sdk.messages.create(model="m", max_tokens=5, messages=MESSAGES)
    closer.join()
    assert time.perf_counter() - started < 3


def test_a_request_without_tools_gets_the_default_reply_and_leaves_the_script_alone() -> None:
    tools = [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}]
    with StubAnthropicServer(Reply.text("scripted"), default_reply=Reply.text("side answer")) as stub:
        sdk = client(stub)
        side = sdk.messages.create(model="m", max_tokens=10, messages=MESSAGES)
        main = sdk.messages.create(model="m", max_tokens=10, messages=MESSAGES, tools=tools)  # type: ignore[arg-type]
        assert [side.content[0].text, main.content[0].text] == ["side answer", "scripted"]  # type: ignore[union-attr]
        assert stub.remaining == 0


def test_ids_differ_between_processes() -> None:
    # a CLI resumed in a second test process must not see a tool-use id of the first again
    code = "from watcher.testing.scripts import next_id; print(next_id('toolu'))"
    ids = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout for _ in "ab"
    }
    assert len(ids) == 2


def test_a_call_cancelled_before_its_body_was_sent_is_no_request_and_takes_no_reply(
    anthropic_stub: StubAnthropicServer,
) -> None:
    import socket
    from urllib.parse import urlsplit

    anthropic_stub.push(Reply.text("for the real call"))
    url = urlsplit(anthropic_stub.base_url)
    with socket.create_connection((url.hostname, url.port), timeout=5) as sock:  # headers, then the client gives up
        sock.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: stub\r\nContent-Length: 9218\r\n\r\n")
    time.sleep(0.2)
    message = client(anthropic_stub).messages.create(model="claude-haiku-4-5", max_tokens=50, messages=MESSAGES)
    assert message.content[0].type == "text" and message.content[0].text == "for the real call"
    (request,) = anthropic_stub.requests
    assert request.body is not None and request.body["messages"] == MESSAGES
