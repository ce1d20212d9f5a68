"""A key inside an LLM evaluator's server URL (``http://user:KEY@host``) is never shown: not in its
``where``, not in the preflight's "cannot reach", not in a failed evaluation's error or its journal row."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from watcher.core.errors import ConfigurationError, EvaluationError, UnreachableServerError
from watcher.core.evaluation import EvaluationRequest
from watcher.core.observations import ToolCall, ToolResult
from watcher.core.spec import WatcherSpec
from watcher.evaluators._llm_base import LLMEvaluator
from watcher.evaluators.anthropic import AnthropicEvaluator
from watcher.evaluators.openai_compat import OpenAICompatEvaluator
from watcher.evaluators.preflight import check_reachable, check_url
from watcher.runtime.hub import Runtime
from watcher.runtime.journal import Journal
from watcher.runtime.session import RecordingSession
from watcher.settings import Settings

KEY = "sk-ant-api03-Qx7vT2mKp9LwZr4nBc8dFh1jYs6uEe3oGi5aNt0lXq"
SPEC = WatcherSpec(name="sec", role="security", brief="Flag leaked secrets.")
TURN = (
    ToolCall(id="t1", name="Write", input={"file_path": "a.py", "content": "x = 1"}),
    ToolResult(tool_call_id="t1", output="wrote a.py"),
)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens there once it is closed


def _evaluator(provider: str, url: str) -> LLMEvaluator:
    if provider == "anthropic":
        return AnthropicEvaluator(base_url=url, api_key="k", max_retries=0, timeout=2, settings=Settings())
    return OpenAICompatEvaluator(model="m", base_url=url, max_retries=0, timeout=2, settings=Settings())


URLS = {
    "user and key": "http://u:{key}@127.0.0.1:{port}/v1",
    "key as the user": "http://{key}@127.0.0.1:{port}/v1",
}
CASES = [(p, shape) for p in ("anthropic", "openai") for shape in URLS]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_key_in_the_query_is_refused_without_showing_it(provider: str) -> None:
    # a query never works (the SDK puts the API's path after it), so it is refused when the evaluator is built
    with pytest.raises(ConfigurationError, match="has a query or fragment") as refused:
        _evaluator(provider, f"http://127.0.0.1:{_closed_port()}/v1?api_key={KEY}")
    assert KEY not in str(refused.value) and KEY[10:30] not in str(refused.value)


@pytest.mark.parametrize(("provider", "shape"), CASES)
async def test_an_unreachable_server_is_named_without_the_key(provider: str, shape: str) -> None:
    port = _closed_port()
    evaluator = _evaluator(provider, URLS[shape].format(key=KEY, port=port))
    try:
        assert KEY not in evaluator.where and f"127.0.0.1:{port}" in evaluator.where
        with pytest.raises(UnreachableServerError) as preflight:
            check_reachable(evaluator)  # the host and port still come through: it did try the right server
        assert "cannot reach" in str(preflight.value) and f"127.0.0.1:{port}" in str(preflight.value)
        with pytest.raises(EvaluationError) as failed:
            await evaluator.evaluate(EvaluationRequest(SPEC, "agent", TURN, new=2, index=1, breakpoint="tool_result"))
        assert "could not reach" in str(failed.value)
        for message in (str(preflight.value), str(failed.value)):
            assert KEY not in message and KEY[10:30] not in message
    finally:
        await evaluator.aclose()


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_the_journaled_error_of_a_failed_evaluation_holds_no_key(provider: str, tmp_path: Path) -> None:
    evaluator = _evaluator(provider, f"http://u:{KEY}@127.0.0.1:{_closed_port()}/v1")
    journal = Journal(tmp_path / "j.sqlite3")
    runtime = Runtime(journal=journal)
    runtime.attach(SPEC, evaluator, RecordingSession("agent"))
    for obs in TURN:
        runtime.observe("agent", obs)
    await runtime.close()
    await evaluator.aclose()
    rows = journal.read()
    journal.close()
    (event,) = [row.payload for row in rows if row.kind == "evaluation"]
    assert "could not reach http://***@127.0.0.1:" in event["error"]
    assert not [row for row in rows if KEY[10:30] in str(row.payload)]


def test_check_url_names_a_bad_address_without_its_key() -> None:
    for url, why in ((f"http://u:{KEY}@127.0.0.1:notaport/v1", "bad port"), (f"http://u:{KEY}@/v1", "names no host")):
        with pytest.raises(Exception, match=why) as caught:
            check_url(url, who="the watcher model's server")
        assert KEY[10:30] not in str(caught.value)
