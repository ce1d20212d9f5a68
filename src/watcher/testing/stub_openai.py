"""A local server that speaks the OpenAI chat-completions API (LM Studio, Ollama, vLLM style).

``POST /v1/chat/completions`` answers with a ``chat.completion`` JSON, or with ``data:`` chunks
(no ``event:`` lines) ending with ``data: [DONE]`` when ``"stream": true``; a usage chunk with
``choices: []`` comes last when ``stream_options.include_usage`` is set. Tool calls are sent as
``tool_calls`` with their ``arguments`` split across chunks. Errors use the
``{"error": {message, type, param, code}}`` body. ``GET /v1/models`` lists the stub's models
(``models``, default ``stub-model``) and ``GET /v1/models/{model}`` answers one, or the API's
``404 model_not_found`` for a model not in ``models`` (None: any model asked for is known);
``models_endpoint=False`` answers both with 404, as many local servers do. Model lookups are
recorded in ``lookups``, not in ``requests``. Local servers need no key, so none is required
here unless ``api_keys`` is given: then another key (or none) is refused with the API's
``401 invalid_api_key``, which quotes the key masked as the API does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Sequence
from typing import Any
from urllib.parse import unquote

from watcher.testing._http import Exchange, StubServer, estimate_tokens, text_pieces
from watcher.testing.scripts import RecordedRequest, Reply, next_id

__all__ = ["StubOpenAIServer"]


class StubOpenAIServer(StubServer):
    """The OpenAI chat-completions API on ``127.0.0.1``; ``base_url`` ends with ``/v1``."""

    name = "stub-openai"

    def __init__(
        self,
        *replies: Reply,
        host: str = "127.0.0.1",
        port: int = 0,
        default_reply: Reply | None = None,
        models: Sequence[str] | None = None,
        api_keys: Collection[str] | None = None,
        models_endpoint: bool = True,
    ) -> None:
        super().__init__(*replies, host=host, port=port, default_reply=default_reply)
        self.models = tuple(models) if models is not None else None
        self.api_keys = frozenset(api_keys) if api_keys is not None else None
        self.models_endpoint = models_endpoint
        self.lookups: list[RecordedRequest] = []  # model lookups, oldest first

    def _record(self, request: RecordedRequest) -> None:
        if _is_lookup(request):
            with self._lock:
                self.lookups.append(request)
            return
        super()._record(request)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, what ``openai.OpenAI(base_url=...)`` expects."""
        return f"{self.root_url}/v1"

    def answer(self, exchange: Exchange) -> None:
        request = exchange.request
        key = request.headers.get("authorization", "").removeprefix("Bearer ")
        if self.api_keys is not None and key not in self.api_keys:
            body = _error_body("invalid_request_error", f"Incorrect API key provided: {_masked(key)}.", 401)
            body["error"]["code"] = "invalid_api_key"
            exchange.send_json(401, body)
            return
        if _is_lookup(request):
            self._answer_lookup(exchange)
            return
        if request.method != "POST" or request.path != "/v1/chat/completions":
            exchange.send_json(404, _error_body("not_found_error", f"no route {request.method} {request.path}", 404))
            return
        if request.body is None:
            exchange.send_json(400, _error_body("invalid_request_error", "the body is not a JSON object", 400))
            return
        reply = self._next_reply(request)
        if reply is None:
            exchange.send_json(
                500, _error_body("server_error", self.script_ran_out(), 500), {"x-should-retry": "false"}
            )
            return
        self.answer_with(exchange, reply.resolve(request))

    def _answer_lookup(self, exchange: Exchange) -> None:
        """``GET /v1/models`` (a list) or ``GET /v1/models/{model}`` (one model)."""
        path = exchange.request.path
        if not self.models_endpoint:
            exchange.send_json(404, _error_body("not_found_error", f"no route GET {path}", 404))
            return
        if path == "/v1/models":
            listed = self.models if self.models is not None else ("stub-model",)
            exchange.send_json(200, {"object": "list", "data": [_model(m) for m in listed]})
            return
        model = unquote(path.removeprefix("/v1/models/"))
        if self.models is not None and model not in self.models:
            message = f"The model `{model}` does not exist or you do not have access to it."
            body = _error_body("invalid_request_error", message, 404)
            body["error"]["code"] = "model_not_found"
            exchange.send_json(404, body)
            return
        exchange.send_json(200, _model(model))

    def answer_with(self, exchange: Exchange, reply: Reply) -> None:
        """Answer one request with ``reply`` in the format the request asked for."""
        request = exchange.request
        if reply.kind == "error":
            headers = reply.retry_headers()
            exchange.send_json(reply.status, _error_body(reply.error_type, reply.message, reply.status), headers)
            return
        if reply.kind == "stall" and not request.stream:
            exchange.wait(reply.seconds)
            exchange.hang_up()
            return
        if reply.kind in ("stream_error", "truncated", "endless") and not request.stream:
            message = f"Reply.{reply.kind} was scripted but the request did not ask for a stream"
            exchange.send_json(500, _error_body("server_error", message, 500), {"x-should-retry": "false"})
            return
        if not exchange.wait(reply.delay_s):
            return
        if request.stream:
            self._stream(exchange, reply)
        else:
            exchange.send_json(200, self.completion(request, reply))

    # --- bodies --------------------------------------------------------------------------------

    def usage(self, request: RecordedRequest, reply: Reply) -> dict[str, Any]:
        """``prompt_tokens``/``completion_tokens``; a reply's ``cache_read_input_tokens`` becomes ``cached_tokens``."""
        body = request.body or {}
        override = dict(reply.usage or {})
        prompt = override.get("input_tokens", estimate_tokens(json.dumps(body.get("messages"), ensure_ascii=False)))
        cached = override.get("cache_read_input_tokens", 0)
        completion = override.get(
            "output_tokens", estimate_tokens(reply.content + "".join(json.dumps(dict(t.input)) for t in reply.tools))
        )
        return {
            "prompt_tokens": prompt + cached,
            "completion_tokens": completion,
            "total_tokens": prompt + cached + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        }

    def completion(self, request: RecordedRequest, reply: Reply) -> dict[str, Any]:
        """A complete ``chat.completion``."""
        message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
        if reply.tools:
            message["tool_calls"] = [
                {"id": t.id, "type": "function", "function": {"name": t.name, "arguments": json.dumps(dict(t.input))}}
                for t in reply.tools
            ]
        return {
            "id": next_id("chatcmpl"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": (request.body or {}).get("model", "stub-model"),
            "choices": [{"index": 0, "message": message, "finish_reason": _finish(reply), "logprobs": None}],
            "usage": self.usage(request, reply),
        }

    def chunks(self, request: RecordedRequest, reply: Reply) -> list[dict[str, Any]]:
        """The streamed chunks of a complete answer (without ``[DONE]``)."""
        body = request.body or {}
        base = {
            "id": next_id("chatcmpl"),
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", "stub-model"),
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

        out = [chunk({"role": "assistant", "content": ""})]
        out += [chunk({"content": piece}) for piece in text_pieces(reply.content)]
        for index, tool in enumerate(reply.tools):
            raw = json.dumps(dict(tool.input))
            half = max(1, len(raw) // 2)
            call = {"index": index, "id": tool.id, "type": "function", "function": {"name": tool.name, "arguments": ""}}
            out.append(chunk({"tool_calls": [call]}))
            out += [
                chunk({"tool_calls": [{"index": index, "function": {"arguments": raw[i : i + half]}}]})
                for i in range(0, len(raw), half)
            ]
        out.append(chunk({}, _finish(reply)))
        if (body.get("stream_options") or {}).get("include_usage"):
            out.append({**base, "choices": [], "usage": self.usage(request, reply)})
        return out

    def _stream(self, exchange: Exchange, reply: Reply) -> None:
        chunks = self.chunks(exchange.request, reply)
        exchange.start_stream()
        if reply.kind == "stall":
            exchange.send_event(chunks[0])
            exchange.wait(reply.seconds)
            exchange.hang_up()
            return
        if reply.kind == "endless":
            exchange.send_event(chunks[0])
            while exchange.wait(reply.interval_s):
                exchange.send_event(
                    {**chunks[0], "choices": [{"index": 0, "delta": {"content": reply.content}, "finish_reason": None}]}
                )
            exchange.hang_up()
            return
        if reply.kind in ("stream_error", "truncated"):
            for data in chunks[: reply.after_events]:
                exchange.send_event(data)
            if reply.kind == "stream_error":
                exchange.send_event(_error_body(reply.error_type, reply.message, 500))
                exchange.end_stream()
            else:
                exchange.hang_up()
            return
        for data in chunks:
            exchange.send_event(data)
        exchange.send_event("[DONE]")
        exchange.end_stream()


def _is_lookup(request: RecordedRequest) -> bool:
    return request.method == "GET" and (request.path == "/v1/models" or request.path.startswith("/v1/models/"))


def _model(model: str) -> dict[str, Any]:
    return {"id": model, "object": "model", "created": 1_700_000_000, "owned_by": "watcher"}


def _masked(key: str) -> str:
    """A key as the API quotes a wrong one: its first and last characters around stars."""
    return f"{key[:3]}{'*' * max(len(key) - 7, 0)}{key[-4:]}" if len(key) > 8 else "*" * len(key)


def _finish(reply: Reply) -> str:
    if reply.tools:
        return "tool_calls"
    return {"max_tokens": "length", "refusal": "content_filter"}.get(reply.stop_reason, "stop")


def _error_body(kind: str, message: str, status: int) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": str(status)}}
