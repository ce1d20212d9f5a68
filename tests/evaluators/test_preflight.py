"""The pre-start check proves an LLM evaluator's key and model with one request through its real SDK.

Against the stub servers (which answer the Models API as the real APIs do) and raw sockets for
what no stub does: a refused key, an unknown model (named, with the server's own), a server
without a models endpoint (not refused), one that never answers or answers a byte at a time
(refused within the budget), and a proxy that is the only way to the server.
"""

from __future__ import annotations

import contextlib
import io
import json
import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from raw_http import Handler, RawServer

from watcher.cli import main
from watcher.core.errors import ConfigurationError, UnreachableServerError
from watcher.evaluators.anthropic import AnthropicEvaluator
from watcher.evaluators.openai_compat import OpenAICompatEvaluator
from watcher.evaluators.preflight import check_reachable, check_url
from watcher.settings import Settings
from watcher.testing import StubAnthropicServer, StubOpenAIServer

KEY = "sk-ant-api03-preflight-good-key-000000000000"
WRONG = "sk-ant-api03-preflight-wrong-key-11111111111"


@pytest.fixture
def raw(raw_server: Callable[[Handler], RawServer]) -> Callable[[Handler], RawServer]:
    return raw_server


def answer(status: str, body: object) -> Handler:
    data = json.dumps(body).encode()

    def handle(conn: socket.socket, _head: bytes) -> None:
        head = f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(data)}\r\n"
        conn.sendall(head.encode() + b"connection: close\r\n\r\n" + data)

    return handle


def anthropic(url: str, *, key: str = KEY, model: str | None = None) -> AnthropicEvaluator:
    return AnthropicEvaluator(base_url=url, api_key=key, model=model, settings=Settings())


def openai(url: str, *, model: str = "m", key: str | None = None) -> OpenAICompatEvaluator:
    return OpenAICompatEvaluator(base_url=f"{url}/v1", model=model, api_key=key, settings=Settings())


def test_a_refused_anthropic_key_is_said_before_anything_starts() -> None:
    with StubAnthropicServer(api_keys=[KEY]) as stub:
        with pytest.raises(ConfigurationError) as refused:
            check_reachable(anthropic(stub.base_url, key=WRONG))
        check_reachable(anthropic(stub.base_url))  # the right key passes
        assert stub.requests == [] and len(stub.lookups) == 2  # no evaluation was paid for
    message = str(refused.value)
    assert "refused the key" in message and "HTTP 401" in message and "ANTHROPIC_API_KEY" in message
    assert WRONG not in message


def test_an_unknown_anthropic_model_is_named_with_the_servers_own() -> None:
    with StubAnthropicServer(models=["claude-haiku-4-5", "claude-sonnet-4-5", "claude-opus-4-1"]) as stub:
        with pytest.raises(ConfigurationError) as unknown:
            check_reachable(anthropic(stub.base_url, model="claude-haiku-4.5"))
        check_reachable(anthropic(stub.base_url, model="claude-sonnet-4-5"))
    message = str(unknown.value)
    assert "has no model 'claude-haiku-4.5'" in message and "WATCHER_ANTHROPIC_MODEL" in message
    assert message.index("claude-haiku-4-5") < message.index("claude-opus-4-1")  # the nearest first


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_server_without_a_models_endpoint_is_not_refused(provider: str) -> None:
    stub_class = StubAnthropicServer if provider == "anthropic" else StubOpenAIServer
    with stub_class(models_endpoint=False) as stub:
        check_reachable(anthropic(stub.base_url) if provider == "anthropic" else openai(stub.root_url))
        assert len(stub.lookups) >= 1


def test_an_openai_compatible_key_refused_is_said_and_its_masked_echo_is_not_the_key() -> None:
    key = "sk-proj-preflight-good-key-0000000000"
    with StubOpenAIServer(api_keys=[key]) as stub:
        with pytest.raises(ConfigurationError) as refused:
            check_reachable(openai(stub.root_url, model="stub-model", key="sk-proj-preflight-WRONG-key-999999"))
        check_reachable(openai(stub.root_url, model="stub-model", key=key))
    assert "refused the key" in str(refused.value) and "OPENAI_API_KEY" in str(refused.value)


def test_a_server_that_quotes_the_whole_key_back_does_not_get_it_shown(raw: Callable[[Handler], RawServer]) -> None:
    key = "gw-0123456789abcdefXYZ"  # a gateway's key, of no shape the redaction patterns know
    server = raw(answer("401 Unauthorized", {"error": {"message": f"key {key} is not valid here"}}))
    with pytest.raises(ConfigurationError) as refused:
        check_reachable(openai(server.url, key=key))
    assert "refused the key" in str(refused.value) and key not in str(refused.value)


def test_an_openai_compatible_model_not_listed_is_named_and_ollamas_latest_tag_is_the_same_model() -> None:
    with StubOpenAIServer(models=["qwen3:latest", "llama3.1:8b", "nomic-embed-text"]) as stub:
        check_reachable(openai(stub.root_url, model="qwen3"))  # Ollama serves qwen3 as qwen3:latest
        with pytest.raises(ConfigurationError) as unknown:
            check_reachable(openai(stub.root_url, model="llama3.1"))
    assert "has no model 'llama3.1'" in str(unknown.value) and "llama3.1:8b" in str(unknown.value)


def test_a_key_that_may_not_list_models_is_not_refused(raw: Callable[[Handler], RawServer]) -> None:
    # an OpenAI key restricted to chat completions answers the models list with 403
    server = raw(answer("403 Forbidden", {"error": {"message": "missing scope api.model.read"}}))
    check_reachable(openai(server.url, key="sk-proj-restricted-0000000000"))


def test_an_anthropic_key_without_access_is_said(raw: Callable[[Handler], RawServer]) -> None:
    server = raw(answer("403 Forbidden", {"type": "error", "error": {"type": "permission_error", "message": "no"}}))
    with pytest.raises(ConfigurationError) as denied:
        check_reachable(anthropic(server.url))
    assert "HTTP 403" in str(denied.value) and "claude-haiku-4-5" in str(denied.value)


@pytest.mark.parametrize("how", ["silent", "a byte at a time"])
def test_a_server_that_does_not_answer_in_time_is_refused_within_the_budget(
    raw: Callable[[Handler], RawServer], how: str
) -> None:
    def slow(conn: socket.socket, _head: bytes) -> None:
        if how == "a byte at a time":
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n")
        while not server.done.wait(0.2):
            if how == "a byte at a time":
                conn.sendall(b" ")

    server = raw(slow)
    started = time.monotonic()
    with pytest.raises(UnreachableServerError) as silent:
        check_reachable(anthropic(server.url), budget_s=1.0)
    assert time.monotonic() - started < 5
    assert "did not answer one within 1s" in str(silent.value)


async def test_the_check_runs_from_inside_a_running_event_loop() -> None:
    with StubAnthropicServer(api_keys=[KEY]) as stub:
        llm = anthropic(stub.base_url, key=WRONG)
        with pytest.raises(ConfigurationError):
            check_reachable(llm)  # watcher replay checks from its own loop
        await llm.aclose()


def test_watcher_eval_refuses_a_wrong_key_before_any_case_runs(tmp_path: Path) -> None:
    cases = tmp_path / "set.jsonl"
    case = {"id": "c1", "label": "benign", "language": "python", "code": "x = 1\n", "lines": []}
    cases.write_text(json.dumps(case) + "\n")
    with StubOpenAIServer(api_keys=["sk-proj-the-right-one-000000"]) as stub:
        err = io.StringIO()
        args = ["eval", "--role", "security", "--set", str(cases), "--evaluator", "openai", "--no-plot"]
        args += ["--base-url", stub.base_url, "--model", "stub-model", "--out", str(tmp_path / "rows.jsonl")]
        with contextlib.redirect_stderr(err), pytest.MonkeyPatch.context() as env:
            env.setenv("OPENAI_API_KEY", "sk-proj-a-wrong-one-111111111")
            status = main(args)
        assert status == 2 and "refused the key" in err.getvalue(), err.getvalue()
        assert stub.requests == []


def test_check_url_goes_through_the_proxy_the_environment_names(raw: Callable[[Handler], RawServer]) -> None:
    proxy = raw(lambda conn, head: None)  # listening is all a TCP check asks of it
    closed = "http://127.0.0.1:9/v1"  # nothing listens on the discard port
    check_url(closed, who="the model server", environ={"HTTP_PROXY": proxy.url})
    with pytest.raises(UnreachableServerError) as direct:
        check_url(closed, who="the model server", environ={"HTTP_PROXY": proxy.url, "NO_PROXY": "localhost,127.0.0.1"})
    assert "through the proxy" not in str(direct.value)
    with pytest.raises(UnreachableServerError) as dead_proxy:
        check_url("http://example.invalid/v1", who="the model server", environ={"all_proxy": "http://127.0.0.1:9"})
    assert "through the proxy http://127.0.0.1:9" in str(dead_proxy.value)


def test_a_base_url_with_or_without_v1_the_wrong_way_round_is_refused_with_the_right_one() -> None:
    with StubAnthropicServer() as stub, pytest.raises(ConfigurationError) as anthropic_slip:
        check_reachable(anthropic(f"{stub.base_url}/v1"))  # the SDK adds /v1/messages itself
    assert f"but {stub.base_url} does" in str(anthropic_slip.value) and "has no /v1" in str(anthropic_slip.value)
    with StubOpenAIServer() as stub:
        llm = OpenAICompatEvaluator(base_url=stub.root_url, model="stub-model", settings=Settings())
        with pytest.raises(ConfigurationError) as openai_slip:
            check_reachable(llm)
    assert f"but {stub.root_url}/v1 does" in str(openai_slip.value)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_server_with_no_models_endpoint_anywhere_is_not_refused_for_its_path(provider: str) -> None:
    if provider == "anthropic":
        with StubAnthropicServer(models_endpoint=False) as stub:
            check_reachable(anthropic(f"{stub.base_url}/v1"))
    else:
        with StubOpenAIServer(models_endpoint=False) as stub:
            check_reachable(OpenAICompatEvaluator(base_url=stub.root_url, model="m", settings=Settings()))
