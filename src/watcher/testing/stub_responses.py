"""A local server that speaks the OpenAI **Responses** API, the only wire format Codex CLI uses.

``POST /v1/responses`` answers with a ``response`` JSON, or (``"stream": true``) with SSE events
that carry ``event:`` lines, in the real order: ``response.created``, then per output item
``response.output_item.added``, its deltas (``response.output_text.delta`` or
``response.function_call_arguments.delta``/``.done``) and ``response.output_item.done``, and
last ``response.completed`` with usage. A scripted ``Reply.tool_use(name, input)`` becomes a
``function_call`` item whose ``arguments`` is ``input`` as JSON.

A request that offers no tools (a title or a summary the CLI asks for on the side) is answered
(Codex 0.169 offers its tools in an ``additional_tools`` input item, which counts)
with ``default_reply`` and leaves the script alone, so a scripted run stays in step.
"""

from __future__ import annotations

import json
import time
from typing import Any

from watcher.testing._http import Exchange, StubServer, estimate_tokens, text_pieces
from watcher.testing.scripts import RecordedRequest, Reply, next_id

__all__ = ["StubResponsesServer"]


class StubResponsesServer(StubServer):
    """The OpenAI Responses API on ``127.0.0.1``; ``base_url`` ends with ``/v1``."""

    name = "stub-responses"

    def __init__(self, *replies: Reply, host: str = "127.0.0.1", port: int = 0, default_reply: Reply | None = None):
        super().__init__(*replies, host=host, port=port, default_reply=default_reply or Reply.text("OK"))

    def offers_tools(self, body: dict[str, Any]) -> bool:
        return offers_tools(body)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, what ``openai.OpenAI(base_url=...)`` and Codex expect."""
        return f"{self.root_url}/v1"

    def answer(self, exchange: Exchange) -> None:
        request = exchange.request
        if request.method == "GET" and request.path == "/v1/models":
            exchange.send_json(200, {"object": "list", "data": [{"id": "stub-model", "object": "model"}]})
            return
        if request.method != "POST" or request.path != "/v1/responses":
            exchange.send_json(404, _error("not_found", f"no route {request.method} {request.path}"))
            return
        if request.body is None:
            exchange.send_json(400, _error("invalid_request_error", "the body is not a JSON object"))
            return
        reply = self._next_reply(request)
        if reply is None:
            exchange.send_json(500, _error("server_error", self.script_ran_out()))
            return
        reply = reply.resolve(request)
        if reply.kind == "error":
            exchange.send_json(reply.status, _error(reply.error_type, reply.message), reply.retry_headers())
            return
        if not exchange.wait(reply.delay_s):
            return
        if not request.stream:
            exchange.send_json(200, self.response(request, reply, "completed"))
            return
        self._stream(exchange, reply)

    # --- bodies --------------------------------------------------------------------------------

    def items(self, reply: Reply) -> list[dict[str, Any]]:
        """The completed output items of ``reply``: a message, then one function call per tool."""
        out: list[dict[str, Any]] = []
        if reply.content or not reply.tools:
            text = {"type": "output_text", "text": reply.content, "annotations": []}
            out.append(
                {"type": "message", "id": next_id("msg"), "status": "completed", "role": "assistant", "content": [text]}
            )
        for tool in reply.tools:
            out.append(
                {
                    "type": "function_call",
                    "id": next_id("fc"),
                    "call_id": tool.id,
                    "name": tool.name,
                    "arguments": json.dumps(dict(tool.input)),
                    "status": "completed",
                }
            )
        return out

    def response(
        self, request: RecordedRequest, reply: Reply, status: str, output: list[Any] | None = None
    ) -> dict[str, Any]:
        """A ``response`` object; usage is computed from the request unless the reply overrides it."""
        body = request.body or {}
        output = self.items(reply) if output is None else output
        override = dict(reply.usage or {})
        prompt = override.get("input_tokens", estimate_tokens(json.dumps(body.get("input"), ensure_ascii=False)))
        completion = override.get("output_tokens", estimate_tokens(json.dumps(output)))
        return {
            "id": next_id("resp"),
            "object": "response",
            "created_at": int(time.time()),
            "status": status,
            "model": body.get("model", "stub-model"),
            "output": output,
            "usage": {
                "input_tokens": prompt,
                "input_tokens_details": {"cached_tokens": override.get("cache_read_input_tokens", 0)},
                "output_tokens": completion,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": prompt + completion,
            },
        }

    def events(self, request: RecordedRequest, reply: Reply) -> list[tuple[str, dict[str, Any]]]:
        """The SSE events of a complete streamed answer, in wire order."""
        done = self.response(request, reply, "completed")
        events: list[tuple[str, dict[str, Any]]] = [
            ("response.created", {"response": {**done, "status": "in_progress", "output": []}})
        ]
        for index, item in enumerate(done["output"]):
            base = {"output_index": index, "item_id": item["id"]}
            if item["type"] == "message":
                events.append(("response.output_item.added", {"output_index": index, "item": {**item, "content": []}}))
                part = {"type": "output_text", "text": "", "annotations": []}
                events.append(("response.content_part.added", {**base, "content_index": 0, "part": part}))
                text = item["content"][0]["text"]
                events += [
                    ("response.output_text.delta", {**base, "content_index": 0, "delta": piece})
                    for piece in text_pieces(text)
                ]
                events.append(("response.output_text.done", {**base, "content_index": 0, "text": text}))
                events.append(("response.content_part.done", {**base, "content_index": 0, "part": item["content"][0]}))
            else:
                events.append(
                    ("response.output_item.added", {"output_index": index, "item": {**item, "arguments": ""}})
                )
                raw = item["arguments"]
                half = max(1, len(raw) // 2)
                events += [
                    ("response.function_call_arguments.delta", {**base, "delta": raw[i : i + half]})
                    for i in range(0, len(raw), half)
                ]
                events.append(("response.function_call_arguments.done", {**base, "arguments": raw}))
            events.append(("response.output_item.done", {"output_index": index, "item": item}))
        events.append(("response.completed", {"response": done}))
        return [(name, {"type": name, "sequence_number": n, **data}) for n, (name, data) in enumerate(events)]

    def _stream(self, exchange: Exchange, reply: Reply) -> None:
        events = self.events(exchange.request, reply)
        exchange.start_stream()
        if reply.kind in ("stall", "endless"):
            exchange.send_event(events[0][1], events[0][0])
            if reply.kind == "stall":
                exchange.wait(reply.seconds)
            else:
                while exchange.wait(reply.interval_s):
                    exchange.send_event(
                        {"type": "response.in_progress", "response": events[0][1]["response"]}, "response.in_progress"
                    )
            exchange.hang_up()
            return
        if reply.kind in ("stream_error", "truncated"):
            for name, data in events[: reply.after_events]:
                exchange.send_event(data, name)
            if reply.kind == "stream_error":
                failed = {
                    "type": "response.failed",
                    "response": {
                        **events[0][1]["response"],
                        "status": "failed",
                        "error": {"code": reply.error_type, "message": reply.message},
                    },
                }
                exchange.send_event(failed, "response.failed")
                exchange.end_stream()
            else:
                exchange.hang_up()
            return
        for name, data in events:
            exchange.send_event(data, name)
        exchange.end_stream()


def offers_tools(body: dict[str, Any]) -> bool:
    """True when the request offers tools: top-level ``tools``, or (Codex 0.169) an ``additional_tools`` input item."""
    if body.get("tools"):
        return True
    items = body.get("input")
    return isinstance(items, list) and any(isinstance(i, dict) and i.get("type") == "additional_tools" for i in items)


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}
