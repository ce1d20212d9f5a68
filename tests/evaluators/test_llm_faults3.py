"""The LLM evaluators against a hostile server: every failure is an ``EvaluationError`` that says what happened.

The real ``anthropic`` and ``openai`` SDKs talk to a raw HTTP server on 127.0.0.1 that answers
whatever a test scripts: bodies that are not the API's answer, HTML error pages, broken
connections, floods. No failure may escape as a Python error of ours (``AttributeError: 'str'
object has no attribute 'content'`` told a user nothing), and no answer may flood the parent.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Callable
from typing import Any

import pytest
from raw_http import Handler, RawServer

from watcher.cli._show_prompt import prompt_evaluator
from watcher.core.errors import ConfigurationError, EvaluationError
from watcher.core.evaluation import EvaluationRequest
from watcher.core.interjection import Interject
from watcher.core.observations import ToolCall, ToolResult
from watcher.core.spec import Caps, WatcherSpec
from watcher.evaluators._llm import MAX_ANSWER_CHARS, MAX_CONTENT_CHARS
from watcher.evaluators._llm_base import LLMEvaluator
from watcher.evaluators.anthropic import AnthropicEvaluator
from watcher.evaluators.openai_compat import OpenAICompatEvaluator
from watcher.settings import Settings
from watcher.testing import Reply, StubAnthropicServer, StubOpenAIServer
from watcher.testing._http import StubServer

SPEC = WatcherSpec(name="sec", role="security", brief="Flag SQL injection.")
REQUEST = EvaluationRequest(
    SPEC,
    "agent",
    (
        ToolCall(id="t1", name="Write", input={"file_path": "a.py", "content": "x = 1\n"}),
        ToolResult(tool_call_id="t1", output="wrote a.py"),
    ),
    new=2,
    index=1,
    breakpoint="turn_done",
)
Answer = Callable[[], bytes]


def http(status: str, body: bytes | str, content_type: str = "application/json") -> bytes:
    """A complete HTTP/1.1 response that closes the connection."""
    data = body.encode() if isinstance(body, str) else body
    head = (
        f"HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {len(data)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + data


@pytest.fixture
def serve(raw_server: Callable[[Handler], RawServer]) -> Callable[[Answer], RawServer]:
    """A server that reads each request whole, then sends the bytes ``answer()`` returns and closes."""
    return lambda answer: raw_server(lambda conn, _head: conn.sendall(answer()))


def evaluator(provider: str, url: str, max_retries: int = 0) -> LLMEvaluator:
    """An evaluator of ``provider`` for the server at ``url`` (its root: ``/v1`` is added for openai)."""
    if provider == "anthropic":
        return AnthropicEvaluator(
            base_url=url, api_key="k", max_retries=max_retries, timeout=5, counter="estimate", settings=Settings()
        )
    return OpenAICompatEvaluator(
        model="m", base_url=f"{url}/v1", max_retries=max_retries, timeout=5, settings=Settings()
    )


async def failure(provider: str, url: str) -> str:
    """The message of the ``EvaluationError`` one evaluation against ``url`` raises."""
    llm = evaluator(provider, url)
    try:
        with pytest.raises(EvaluationError) as failed:
            await llm.evaluate(REQUEST)
    finally:
        await llm.aclose()
    return str(failed.value)


PROVIDERS = ["anthropic", "openai"]
NOT_AN_ANSWER = {
    "malformed JSON": http("200 OK", "{not json"),
    "an empty body": http("200 OK", ""),
    "an HTML page": http("200 OK", "<html><body>Welcome to nginx!</body></html>", "text/html"),
    "a JSON list": http("200 OK", "[1, 2]"),
    "JSON null": http("200 OK", "null"),
    "content of the wrong type": http("200 OK", json.dumps({"content": "hi", "choices": "hi"})),
}


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("answer", NOT_AN_ANSWER.values(), ids=NOT_AN_ANSWER.keys())
async def test_a_body_that_is_not_the_apis_answer_is_said_so(
    serve: Callable[[Answer], RawServer], provider: str, answer: bytes
) -> None:
    server = serve(lambda: answer)
    message = await failure(provider, server.url)
    assert "answered with something that is not an answer of the" in message
    assert "check that the base URL serves the" in message
    assert server.url in message


async def test_a_chat_answer_without_token_counts_is_read(serve: Callable[[Answer], RawServer]) -> None:
    message = {"role": "assistant", "content": "[CONTINUE]\nfine\n[/CONTINUE]"}
    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": None, "completion_tokens": None, "total_tokens": None},
    }
    server = serve(lambda: http("200 OK", json.dumps(body)))
    llm = evaluator("openai", server.url)
    result = await llm.evaluate(REQUEST)
    await llm.aclose()
    assert (result.decision.note, result.usage.input_tokens, result.usage.output_tokens) == ("fine", 0, 0)


BROKEN = {
    "a truncated body": (
        b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"content": [',
        "broke before a complete answer",
    ),
    "a hang-up": (b"", "broke before a complete answer"),
    "no HTTP at all": (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "broke before a complete answer"),
    "an HTML 502 page": (
        http("502 Bad Gateway", "<html>\n<h1>502 Bad Gateway</h1>\n</html>", "text/html"),
        "(HTTP 502) after 1 attempt: <html> <h1>502 Bad Gateway</h1> </html>",
    ),
}


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("answer", "expected"), BROKEN.values(), ids=BROKEN.keys())
async def test_a_server_that_answers_badly_is_not_called_unreachable(
    serve: Callable[[Answer], RawServer], provider: str, answer: bytes, expected: str
) -> None:
    message = await failure(provider, serve(lambda: answer).url)
    assert expected in message
    assert "could not reach" not in message


@pytest.mark.parametrize(
    ("provider", "hint"),
    [("anthropic", "the base URL has no /v1"), ("openai", "usually ends in /v1")],
)
async def test_a_wrong_path_says_which_url_was_called_and_how_base_urls_look(
    serve: Callable[[Answer], RawServer], provider: str, hint: str
) -> None:
    server = serve(lambda: http("404 Not Found", json.dumps({"detail": "Not Found"})))
    message = await failure(provider, server.url)
    assert f"{server.url}/v1/" in message and "does not exist on the server (HTTP 404)" in message
    assert hint in message
    assert "attempt" not in message  # a 404 is not retried, so no attempts are counted


def flood(provider: str, content: str) -> bytes:
    """A 200 answer holding ``content`` as the model's text."""
    if provider == "anthropic":
        body: dict[str, Any] = {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": "x",
            "content": [{"type": "text", "text": content}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    else:
        message = {"role": "assistant", "content": content}
        body = {
            "id": "c",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        }
    return http("200 OK", json.dumps(body))


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_an_enormous_answer_is_not_read(serve: Callable[[Answer], RawServer], provider: str) -> None:
    content = "[INTERJECT]\nurgent: true\ncontent: stop " + "x" * 2_000_000 + "\n[/INTERJECT]"
    server = serve(lambda: flood(provider, content))
    llm = evaluator(provider, server.url)
    result = await llm.evaluate(REQUEST)
    await llm.aclose()
    assert len(result.raw) < MAX_ANSWER_CHARS + 100  # what is kept, journaled and shown
    assert not isinstance(result.decision, Interject)
    assert result.decision.error is not None and "did not keep to max_tokens" in result.decision.error


async def test_a_long_interjection_is_clipped_before_it_reaches_the_parent(
    serve: Callable[[Answer], RawServer],
) -> None:
    content = "[INTERJECT]\nurgent: true\ncontent: stop " + "x" * 30_000 + "\n[/INTERJECT]"
    server = serve(lambda: flood("anthropic", content))
    llm = evaluator("anthropic", server.url)
    result = await llm.evaluate(REQUEST)
    await llm.aclose()
    assert isinstance(result.decision, Interject)
    said = result.decision.interjection.content
    assert said.startswith("stop xxx") and len(said) < MAX_CONTENT_CHARS + 100
    assert said.endswith("more characters left out]")


# --- configuration: said before anything starts ------------------------------------------------


def build(provider: str, **options: Any) -> LLMEvaluator:
    """The evaluator of ``provider`` built with ``options`` (model ``m`` for openai)."""
    if provider == "anthropic":
        return AnthropicEvaluator(**options)
    return OpenAICompatEvaluator(model="m", **options)


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("   ", "holds only whitespace"),
        ("sk-ant-abc\nsk-ant-def", "has a space, a line break or a non-ASCII character inside it"),
        ("sk ant", "has a space, a line break or a non-ASCII character inside it"),
        ("clé-secrète", "has a space, a line break or a non-ASCII character inside it"),
    ],
)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_key_http_cannot_send_is_refused_when_the_evaluator_is_built(provider: str, key: str, expected: str) -> None:
    variable = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
    settings = Settings.from_env({variable: key})
    with pytest.raises(ConfigurationError, match=expected) as refused:
        build(provider, base_url="http://127.0.0.1:9/v1", settings=settings)
    assert str(refused.value).startswith(variable)
    assert "sk-ant-def" not in str(refused.value)  # the key itself is never shown


async def test_a_key_read_with_its_newline_is_used_without_it(serve: Callable[[Answer], RawServer]) -> None:
    server = serve(lambda: http("401 Unauthorized", json.dumps({"error": {"message": "who are you"}})))
    settings = Settings.from_env({"ANTHROPIC_API_KEY": "sk-ant-abc\n"})
    message = await failure_of(AnthropicEvaluator(base_url=server.url, max_retries=0, settings=settings))
    assert "rejected the API key (HTTP 401)" in message  # sent and answered, not "could not reach"
    (head,) = server.heads
    assert b"Bearer sk-ant-abc\r\n" in head  # the key alone, as the SDK sends it


async def failure_of(llm: LLMEvaluator) -> str:
    try:
        with pytest.raises(EvaluationError) as failed:
            await llm.evaluate(REQUEST)
    finally:
        await llm.aclose()
    return str(failed.value)


@pytest.mark.parametrize(
    "url",
    [
        "127.0.0.1:1234/v1",
        "ftp://127.0.0.1:1234/v1",
        "http://127.0.0.1:port/v1",
        "http:///v1",
        "http://127.0.0.1:1234/v1?api_key=sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX",
        "http://127.0.0.1:1234/v1#x",
    ],
)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_base_url_that_is_not_an_http_url_is_refused_when_the_evaluator_is_built(provider: str, url: str) -> None:
    with pytest.raises(
        ConfigurationError, match=r"is not an http\(s\) URL naming a server|has a query or fragment"
    ) as refused:
        build(provider, base_url=url, api_key="k", settings=Settings())
    assert "give the server's address" in str(refused.value) and "ABCDEFGHIJKLMNOP" not in str(refused.value)


# --- rate limits: a server asking for a long wait is not waited for ------------------------------


def stub_server(provider: str, *replies: Reply) -> StubServer:
    return StubAnthropicServer(*replies) if provider == "anthropic" else StubOpenAIServer(*replies)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_429_asking_for_an_hour_fails_at_once_and_says_so(provider: str) -> None:
    hour = Reply.error(429, "rate_limit_error", "slow down", retry_after_ms=3_600_000)
    with stub_server(provider, hour) as stub:
        started = time.monotonic()
        message = await failure_of(evaluator(provider, stub.root_url, max_retries=2))
        assert time.monotonic() - started < 4  # not an hour, nor the engine's timeout
        assert len(stub.requests) == 1
    assert "rate limited (HTTP 429): slow down; the server asks to wait 3600s, longer than the watcher waits" in message


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_429_asking_for_a_moment_is_retried(provider: str) -> None:
    moment = Reply.error(429, "rate_limit_error", "slow down", retry_after_ms=1)
    with stub_server(provider, moment, moment) as stub:
        message = await failure_of(evaluator(provider, stub.root_url, max_retries=1))
        assert len(stub.requests) == 2
    assert "rate limited (HTTP 429) after 2 attempts: slow down" in message


# --- secrets the patterns do not know: masked by value -------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_evaluators_own_key_and_the_environments_tokens_never_reach_the_prompt(provider: str) -> None:
    key, token = "mygw-7fa9c2e1b4d8a6f3", "corp-tok-9b8a7c6d5e"
    environ = {"GATEWAY_TOKEN": token, "HOME": "/home/me", "TOKENIZERS_PARALLELISM": "false"}
    observations = (
        ToolCall(id="t1", name="Bash", input={"command": "echo $KEY $GATEWAY_TOKEN"}),
        ToolResult(tool_call_id="t1", output=f"{key} {token} /home/me false"),
    )
    request = EvaluationRequest(SPEC, "agent", observations, new=2, index=1, breakpoint="turn_done")
    with stub_server(provider, Reply.text("[CONTINUE]\nfine\n[/CONTINUE]")) as stub:
        settings = Settings.from_env(environ)
        if provider == "anthropic":
            llm: LLMEvaluator = AnthropicEvaluator(
                base_url=stub.base_url, api_key=key, settings=settings, counter="estimate"
            )
        else:
            llm = OpenAICompatEvaluator(model="m", base_url=stub.base_url, api_key=key, settings=settings)
        await llm.evaluate(request)
        await llm.aclose()
        (sent,) = stub.requests
    assert key.encode() not in sent.raw and token.encode() not in sent.raw
    assert b"mygw\\u2026[REDACTED]" in sent.raw or "mygw…[REDACTED]".encode() in sent.raw
    assert b"/home/me false" in sent.raw  # what is not secret is shown as it is


# --- a reasoning model's thoughts do not decide --------------------------------------------------

THOUGHT = "<think>\nI could answer [CONTINUE] fine [/CONTINUE], but the query is built from input.\n</think>\n"


@pytest.mark.parametrize(
    ("answer", "decided"),
    [
        (THOUGHT + "[INTERJECT]\nurgent: true\ncontent: use a parameterised query\n[/INTERJECT]", "interject"),
        (THOUGHT + "[CONTINUE]\nnothing wrong\n[/CONTINUE]", "continue"),
        ("<think>\nmaybe [CONTINUE] ok [/CONTINUE] or maybe", "unparseable"),  # cut off while still thinking
    ],
)
async def test_only_the_answer_after_a_reasoning_models_thoughts_decides(answer: str, decided: str) -> None:
    with StubOpenAIServer(Reply.text(answer)) as stub:
        llm = evaluator("openai", stub.root_url)
        result = await llm.evaluate(REQUEST)
        await llm.aclose()
    decision = result.decision
    if decided == "interject":
        assert isinstance(decision, Interject) and decision.interjection.content == "use a parameterised query"
    elif decided == "continue":
        assert not isinstance(decision, Interject) and decision.note == "nothing wrong" and decision.error is None
    else:
        assert not isinstance(decision, Interject) and decision.error is not None
        assert "unparseable answer" in decision.error


# --- a huge observation: the prompt stays bounded, and the event loop keeps running --------------


async def test_a_huge_output_is_prepared_off_the_event_loop_into_a_bounded_prompt() -> None:
    output = "line of build log\n" * 1_500_000  # 27 MB
    request = EvaluationRequest(
        SPEC,
        "agent",
        (ToolCall(id="t", name="Bash", input={"command": "make"}), ToolResult(tool_call_id="t", output=output)),
        new=2,
        index=1,
        breakpoint="turn_done",
    )
    llm = evaluator("openai", "http://127.0.0.1:9")
    ticks = 0
    preparing = asyncio.create_task(llm.preview(request))
    while not preparing.done():  # the session's work on the same loop goes on meanwhile
        ticks += 1
        await asyncio.sleep(0.001)
    body, tokens = await preparing
    await llm.aclose()
    assert ticks >= 3
    assert tokens < 2_000
    assert "lines omitted" in body["messages"][1]["content"]


@pytest.mark.parametrize(("provider", "variable"), [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")])
def test_show_prompt_names_the_variable_of_a_bad_key(provider: str, variable: str) -> None:
    settings = Settings.from_env({variable: "two words"})
    with pytest.raises(ConfigurationError, match=f"^{variable} has a space"):
        prompt_evaluator(provider, settings, model=None, base_url=None)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_server_quoting_the_key_in_its_error_does_not_get_it_journaled(provider: str) -> None:
    key = "mygw-7fa9c2e1b4d8a6f3"
    refused = Reply.error(403, "permission_error", f"key {key} may not use this model", should_retry=False)
    with stub_server(provider, refused) as stub:
        if provider == "anthropic":
            llm: LLMEvaluator = AnthropicEvaluator(
                base_url=stub.base_url, api_key=key, settings=Settings(), counter="estimate"
            )
        else:
            llm = OpenAICompatEvaluator(model="m", base_url=stub.base_url, api_key=key, settings=Settings())
        message = await failure_of(llm)
    assert "refused (HTTP 403): key mygw…[REDACTED] may not use this model" in message
    assert key not in message


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_an_unknown_model_is_named_as_such_not_as_a_wrong_url(provider: str) -> None:
    unknown = Reply.error(404, "not_found_error", "model: claude-nope-9", should_retry=False)
    with stub_server(provider, unknown) as stub:
        message = await failure_of(evaluator(provider, stub.root_url))
    assert "the server does not know this model (HTTP 404): model: claude-nope-9; check the model id" in message
    assert "check the base URL" not in message


async def test_a_chat_answer_in_content_parts_is_read(serve: Callable[[Answer], RawServer]) -> None:
    parts = [{"type": "text", "text": "[INTERJECT]\ncontent: "}, {"type": "text", "text": "stop\n[/INTERJECT]"}]
    message = {"role": "assistant", "content": parts}
    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }
    server = serve(lambda: http("200 OK", json.dumps(body)))
    llm = evaluator("openai", server.url)
    result = await llm.evaluate(REQUEST)
    await llm.aclose()
    assert isinstance(result.decision, Interject) and result.decision.interjection.content == "stop"


@pytest.mark.parametrize(("provider", "variable"), [("anthropic", "ANTHROPIC_BASE_URL"), ("openai", "OPENAI_BASE_URL")])
def test_a_base_url_variable_with_a_query_is_refused_too(provider: str, variable: str) -> None:
    settings = Settings.from_env({variable: "http://127.0.0.1:1234/v1?key=abc", "ANTHROPIC_API_KEY": "k"})
    with pytest.raises(ConfigurationError, match="has a query or fragment"):
        build(provider, settings=settings)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_https_to_a_plain_http_server_says_to_use_http(provider: str) -> None:
    with stub_server(provider) as stub:
        message = await failure_of(evaluator(provider, stub.root_url.replace("http://", "https://")))
    assert "TLS with https://127.0.0.1:" in message
    assert "the server speaks plain HTTP: give its address with http://" in message


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_failure_the_server_says_not_to_retry_counts_no_attempts(provider: str) -> None:
    final = Reply.error(500, "api_error", "the model crashed", should_retry=False)
    with stub_server(provider, final) as stub:
        message = await failure_of(evaluator(provider, stub.root_url, max_retries=2))
        assert len(stub.requests) == 1
    assert "failed (HTTP 500): the model crashed" in message


# --- a server that accepts and never answers: the evaluator, not the engine's deadline, says so -----


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_silent_server_is_named_within_the_watchers_budget(provider: str) -> None:
    silent = socket.create_server(("127.0.0.1", 0))  # accepts (the backlog), never reads, never answers
    url = f"http://127.0.0.1:{silent.getsockname()[1]}"
    spec = WatcherSpec(name="sec", role="security", brief="b", caps=Caps(timeout_s=2.5))
    request = EvaluationRequest(spec, "agent", REQUEST.observations, new=2, index=1, breakpoint="turn_done")
    llm = evaluator(provider, url, max_retries=1)  # its own timeout is 5 s a call: longer than the budget
    started = time.monotonic()
    try:
        with pytest.raises(EvaluationError) as failed:
            await asyncio.wait_for(llm.evaluate(request), 10)
    finally:
        await llm.aclose()
        silent.close()
    assert time.monotonic() - started < 2.5  # before the engine's deadline, which would say only "timed out"
    assert f"no answer from {url}" in str(failed.value)  # the server, named (openai's ends in /v1/)
    assert "within 1.5s, the watcher's budget (caps.timeout_s 2.5s) less a margin" in str(failed.value)


def test_secret_named_settings_that_are_plain_words_are_not_masked_everywhere() -> None:
    environ = {
        "SECRET_SCANNING": "disabled",
        "GATEWAY_TOKEN": "corp-tok-9b8a7c6d5e",
        "PASSWORD_STORE_DIR": "/home/me/.pw",
    }
    llm = OpenAICompatEvaluator(model="m", base_url="http://127.0.0.1:9/v1", settings=Settings.from_env(environ))
    assert llm.secrets == ("corp-tok-9b8a7c6d5e",)
