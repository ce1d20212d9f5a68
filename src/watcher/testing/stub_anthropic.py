"""A local server that speaks the Anthropic Messages API, answering from a script.

``POST /v1/messages`` answers with a full ``Message`` JSON, or with SSE (``"stream": true``): one
``event:`` line and one ``data:`` line per event, in the real order (``message_start``, ``ping``,
``content_block_start`` / ``content_block_delta`` (``text_delta``, ``input_json_delta``) /
``content_block_stop``, ``message_delta`` with usage, ``message_stop``). Authentication is
accepted from ``x-api-key`` or ``Authorization: Bearer`` with any ``anthropic-version``, as SDK
1.x and 2.x send them (``api_keys`` narrows that to the keys given: another is refused with the
API's ``401 authentication_error``). ``POST /v1/messages/count_tokens`` is answered without using
the script, and so is the Models API: ``GET /v1/models/{model_id}`` (a ``ModelInfo``, or the API's
``404 not_found_error`` "model: …" for a model not in ``models``) and ``GET /v1/models`` (a page:
``data``, ``first_id``, ``last_id``, ``has_more``). Model lookups are recorded in ``lookups``, not
in ``requests``, so a test counting the evaluations a run made counts those alone.

Usage is computed from the request unless the reply says otherwise: the prefix up to the last
``cache_control`` marker (tools, then system, then messages) is a cache *write* the first time
it is seen and a cache *read* afterwards, so a cache test measures what the client really sent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterator, Sequence
from typing import Any
from urllib.parse import unquote

from watcher.testing._http import Exchange, StubServer, estimate_tokens, text_pieces
from watcher.testing.scripts import RecordedRequest, Reply, next_id

__all__ = ["StubAnthropicServer", "cache_breakpoints"]

Event = tuple[str, dict[str, Any]]


def _cacheable_items(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The blocks of a request in cache-prefix order: tools, system, then message content."""
    yield from body.get("tools") or []
    system = body.get("system")
    if isinstance(system, str):
        yield {"type": "text", "text": system}
    elif isinstance(system, list):
        yield from system
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            yield {"role": message.get("role"), **block}


def cache_breakpoints(body: dict[str, Any]) -> list[tuple[str, int]]:
    """(prefix hash, prefix tokens) for every ``cache_control`` breakpoint, shortest first."""
    items = list(_cacheable_items(body))
    marked = [i for i, item in enumerate(items) if isinstance(item, dict) and item.get("cache_control")]
    if body.get("cache_control") and items:
        marked.append(len(items) - 1)  # automatic caching: the breakpoint is the last block
    points: list[tuple[str, int]] = []
    for end in sorted(set(marked)):
        prefix = json.dumps(items[: end + 1], sort_keys=True, ensure_ascii=False)
        points.append((hashlib.sha256(prefix.encode()).hexdigest(), estimate_tokens(prefix)))
    return points


class StubAnthropicServer(StubServer):
    """The Anthropic Messages API on ``127.0.0.1`` (``base_url`` has no ``/v1``, like the SDK wants).

    ``min_cache_tokens`` mimics the model's minimum cacheable prefix: shorter prefixes are neither
    written nor read, as the real API does silently. ``default_reply`` answers requests that offer
    no tools (Claude Code's side requests) without consuming the script. ``models`` are the models
    the Models API knows (None: any model asked for, and a few listed); ``models_endpoint=False``
    answers the Models API with 404, as a Messages-API gateway without it does.
    """

    name = "stub-anthropic"

    def __init__(
        self,
        *replies: Reply,
        host: str = "127.0.0.1",
        port: int = 0,
        min_cache_tokens: int = 0,
        default_reply: Reply | None = None,
        models: Sequence[str] | None = None,
        api_keys: Collection[str] | None = None,
        models_endpoint: bool = True,
    ) -> None:
        super().__init__(*replies, host=host, port=port, default_reply=default_reply)
        self.min_cache_tokens = min_cache_tokens
        self.models = tuple(models) if models is not None else None
        self.api_keys = frozenset(api_keys) if api_keys is not None else None
        self.models_endpoint = models_endpoint
        self.lookups: list[RecordedRequest] = []  # Models API requests, oldest first
        self._cached: set[str] = set()

    # --- routing -------------------------------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        if _is_lookup(request):
            with self._lock:
                self.lookups.append(request)
            return
        super()._record(request)

    def answer(self, exchange: Exchange) -> None:
        request = exchange.request
        key = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ")
        if not (request.headers.get("x-api-key") or request.headers.get("authorization", "").startswith("Bearer ")):
            message = "missing credentials: send x-api-key or Authorization: Bearer"
            exchange.send_json(401, _error_body("authentication_error", message), {"x-should-retry": "false"})
            return
        if self.api_keys is not None and key not in self.api_keys:
            exchange.send_json(
                401, _error_body("authentication_error", "invalid x-api-key"), {"x-should-retry": "false"}
            )
            return
        if _is_lookup(request):
            self._answer_lookup(exchange)
            return
        if request.method != "POST" or request.path not in ("/v1/messages", "/v1/messages/count_tokens"):
            exchange.send_json(404, _error_body("not_found_error", f"no route {request.method} {request.path}"))
            return
        if request.body is None:
            exchange.send_json(400, _error_body("invalid_request_error", "the body is not a JSON object"))
            return
        if request.path.endswith("/count_tokens"):
            exchange.send_json(200, {"input_tokens": estimate_tokens(json.dumps(request.body))})
            return
        reply = self._next_reply(request)
        if reply is None:
            exchange.send_json(500, _error_body("api_error", self.script_ran_out()), {"x-should-retry": "false"})
            return
        self.answer_with(exchange, reply.resolve(request))

    def _answer_lookup(self, exchange: Exchange) -> None:
        """The Models API: one model's ``ModelInfo``, or the first page of the list."""
        path = exchange.request.path
        if not self.models_endpoint:
            exchange.send_json(404, _error_body("not_found_error", f"no route GET {path}"))
            return
        listed = self.models if self.models is not None else _DEFAULT_MODELS
        if path == "/v1/models":
            data = [_model_info(m) for m in listed]
            page = {"data": data, "first_id": listed[0] if listed else None, "last_id": listed[-1] if listed else None}
            exchange.send_json(200, {**page, "has_more": False})
            return
        model = unquote(path.removeprefix("/v1/models/"))
        if self.models is not None and model not in self.models:
            exchange.send_json(404, _error_body("not_found_error", f"model: {model}"))
            return
        exchange.send_json(200, _model_info(model))

    def answer_with(self, exchange: Exchange, reply: Reply) -> None:
        """Answer one request with ``reply`` in the format the request asked for."""
        request = exchange.request
        if reply.kind == "error":
            headers = reply.retry_headers()
            exchange.send_json(reply.status, _error_body(reply.error_type, reply.message), headers)
            return
        if reply.kind == "stall" and not request.stream:
            exchange.wait(reply.seconds)
            exchange.hang_up()
            return
        if reply.kind in ("stream_error", "truncated", "endless") and not request.stream:
            message = f"Reply.{reply.kind} was scripted but the request did not ask for a stream"
            exchange.send_json(500, _error_body("api_error", message), {"x-should-retry": "false"})
            return
        if not exchange.wait(reply.delay_s):
            return
        if request.stream:
            self._stream(exchange, reply)
        else:
            exchange.send_json(200, self.message(request, reply))

    # --- bodies --------------------------------------------------------------------------------

    def usage(self, request: RecordedRequest, reply: Reply, output: str) -> dict[str, int]:
        """Token usage for ``reply`` to ``request``: the reply's override, else computed (see module)."""
        body = request.body or {}
        total = estimate_tokens(
            json.dumps({k: body.get(k) for k in ("tools", "system", "messages")}, ensure_ascii=False)
        )
        read = write = 0
        points = [p for p in cache_breakpoints(body) if p[1] >= self.min_cache_tokens]
        with self._lock:
            seen = [tokens for key, tokens in points if key in self._cached]
            read = max(seen, default=0)
            if points and points[-1][0] not in self._cached:
                write = points[-1][1] - read
            self._cached.update(key for key, _ in points)
        usage = {
            "input_tokens": max(total - read - write, 1),
            "output_tokens": estimate_tokens(output),
            "cache_creation_input_tokens": write,
            "cache_read_input_tokens": read,
        }
        usage.update(reply.usage or {})
        return usage

    def content(self, reply: Reply) -> list[dict[str, Any]]:
        """The reply's content blocks."""
        blocks: list[dict[str, Any]] = (
            [{"type": "text", "text": reply.content}] if reply.content or not reply.tools else []
        )
        blocks += [{"type": "tool_use", "id": t.id, "name": t.name, "input": dict(t.input)} for t in reply.tools]
        return blocks

    def message(self, request: RecordedRequest, reply: Reply) -> dict[str, Any]:
        """A complete non-streaming ``Message``."""
        content = self.content(reply)
        return {
            "id": next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": (request.body or {}).get("model", "claude-stub"),
            "content": content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": self.usage(request, reply, json.dumps(content)),
        }

    def events(self, request: RecordedRequest, reply: Reply) -> list[Event]:
        """The SSE events of a complete streamed answer, in wire order."""
        message = self.message(request, reply)
        usage = message["usage"]
        start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
        events: list[Event] = [
            ("message_start", {"type": "message_start", "message": start}),
            ("ping", {"type": "ping"}),
        ]
        for index, block in enumerate(message["content"]):
            opening: dict[str, Any]
            if block["type"] == "text":
                opening = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": piece} for piece in text_pieces(block["text"])]
            else:
                opening = {**block, "input": {}}
                raw = json.dumps(block["input"], ensure_ascii=False)
                third = max(1, len(raw) // 3)
                fragments = [""] + [raw[i : i + third] for i in range(0, len(raw), third)]
                deltas = [{"type": "input_json_delta", "partial_json": f} for f in fragments]
            events.append(
                ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opening})
            )
            events += [
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas
            ]
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        delta = {"stop_reason": reply.stop_reason, "stop_sequence": None}
        events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
        events.append(("message_stop", {"type": "message_stop"}))
        return events

    # --- streaming -----------------------------------------------------------------------------

    def _stream(self, exchange: Exchange, reply: Reply) -> None:
        request = exchange.request
        events = self.events(request, reply)
        exchange.start_stream()
        if reply.kind == "stall":
            exchange.send_event(events[0][1], events[0][0])
            exchange.wait(reply.seconds)
            exchange.hang_up()
            return
        if reply.kind == "endless":
            for name, data in events[:3]:  # message_start, ping, content_block_start
                exchange.send_event(data, name)
            while exchange.wait(reply.interval_s):
                delta = {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": reply.content},
                }
                exchange.send_event(delta, "content_block_delta")
            exchange.hang_up()
            return
        if reply.kind in ("stream_error", "truncated"):
            for name, data in events[: reply.after_events]:
                exchange.send_event(data, name)
            if reply.kind == "stream_error":
                exchange.send_event(_error_body(reply.error_type, reply.message), "error")
                exchange.end_stream()
            else:
                exchange.hang_up()
            return
        for name, data in events:
            exchange.send_event(data, name)
        exchange.end_stream()


_DEFAULT_MODELS = ("claude-haiku-4-5", "claude-sonnet-4-5", "claude-opus-4-1")


def _is_lookup(request: RecordedRequest) -> bool:
    """A Models API request: ``GET /v1/models`` or ``GET /v1/models/{model_id}``."""
    return request.method == "GET" and (request.path == "/v1/models" or request.path.startswith("/v1/models/"))


def _model_info(model: str) -> dict[str, Any]:
    """A ``ModelInfo`` as the Models API answers it."""
    return {"type": "model", "id": model, "display_name": model, "created_at": "2025-10-01T00:00:00Z"}


def _error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": next_id("req")}
