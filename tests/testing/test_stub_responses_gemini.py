"""The Responses and Gemini stubs, driven by the real ``openai`` SDK and by plain HTTP as Gemini CLI speaks it."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator

import openai
import pytest

from watcher.testing import Reply, StubGeminiServer, StubResponsesServer

TOOLS = [{"type": "function", "name": "shell", "parameters": {"type": "object", "properties": {}}}]


@pytest.fixture
def responses_stub() -> Iterator[StubResponsesServer]:
    with StubResponsesServer() as stub:
        yield stub


@pytest.fixture
def gemini_stub() -> Iterator[StubGeminiServer]:
    with StubGeminiServer() as stub:
        yield stub


def test_responses_stream_has_event_lines_and_the_sdk_rebuilds_a_function_call(
    responses_stub: StubResponsesServer,
) -> None:
    responses_stub.push(Reply.tool_use("shell", {"command": ["git", "status"]}, text="checking"))
    with (
        openai.OpenAI(base_url=responses_stub.base_url, api_key="k") as client,
        client.responses.stream(model="m", input="hi", tools=TOOLS) as stream,  # type: ignore[arg-type]
    ):
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.output_text.delta" in kinds and "response.function_call_arguments.delta" in kinds
    call = next(item for item in final.output if item.type == "function_call")
    assert json.loads(call.arguments) == {"command": ["git", "status"]}
    assert final.usage is not None and final.usage.input_tokens > 0


def test_responses_requests_without_tools_get_the_default_reply(responses_stub: StubResponsesServer) -> None:
    responses_stub.push(Reply.text("scripted"))
    with openai.OpenAI(base_url=responses_stub.base_url, api_key="k") as client:
        side = client.responses.create(model="m", input="a title please")
        main = client.responses.create(model="m", input="work", tools=TOOLS)  # type: ignore[arg-type]
    assert side.output_text == "OK" and main.output_text == "scripted"
    assert responses_stub.remaining == 0


def _post(url: str, body: dict[str, object]) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"x-goog-api-key": "k", "content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_gemini_stream_is_data_lines_with_a_function_call_and_usage_last(gemini_stub: StubGeminiServer) -> None:
    gemini_stub.push(Reply.tool_use("run_shell_command", {"command": "ls"}, text="let me look"))
    url = f"{gemini_stub.root_url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    status, raw = _post(
        url, {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "tools": [{"functionDeclarations": []}]}
    )
    lines = [line for line in raw.decode().splitlines() if line]
    assert status == 200 and all(line.startswith("data: ") for line in lines)
    chunks = [json.loads(line[6:]) for line in lines]
    last = chunks[-1]
    assert last["candidates"][0]["finishReason"] == "STOP" and last["usageMetadata"]["totalTokenCount"] > 0
    assert last["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] == {"command": "ls"}
    assert "".join(c["candidates"][0]["content"]["parts"][0].get("text", "") for c in chunks[:-1]) == "let me look"


def test_gemini_generate_content_without_tools_does_not_consume_the_script(gemini_stub: StubGeminiServer) -> None:
    gemini_stub.push(Reply.text("scripted"))
    status, raw = _post(f"{gemini_stub.root_url}/v1beta/models/m:generateContent", {"contents": []})
    assert status == 200 and json.loads(raw)["candidates"][0]["content"]["parts"] == [{"text": "OK"}]
    assert gemini_stub.remaining == 1


def test_tool_ids_differ_between_processes() -> None:
    code = "from watcher.testing import Reply; print(Reply.tool_use('x', {}).tools[0].id)"
    ids = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    }
    assert len(ids) == 2
