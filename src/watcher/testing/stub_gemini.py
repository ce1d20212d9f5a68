"""A local server that speaks the Gemini API as Gemini CLI uses it.

``POST /v1beta/models/{model}:streamGenerateContent?alt=sse`` answers with ``data:`` lines only
(no ``event:`` lines, no ``[DONE]``), one ``GenerateContentResponse`` each; the last carries
``finishReason`` and ``usageMetadata``. ``:generateContent`` answers with one JSON response and
``:countTokens`` with a count. A scripted ``Reply.tool_use(name, input)`` becomes a
``functionCall`` part. The key is read from ``x-goog-api-key`` (or ``?key=``), any value accepted.

A request that offers no tools (the CLI's routing and summary calls) is answered with
``default_reply`` and leaves the script alone, so a scripted run stays in step.
"""

from __future__ import annotations

import json
from typing import Any

from watcher.testing._http import Exchange, StubServer, estimate_tokens, text_pieces
from watcher.testing.scripts import RecordedRequest, Reply, next_id

__all__ = ["StubGeminiServer"]


class StubGeminiServer(StubServer):
    """The Gemini API on ``127.0.0.1``; hand ``root_url`` to ``GOOGLE_GEMINI_BASE_URL``."""

    name = "stub-gemini"

    def __init__(self, *replies: Reply, host: str = "127.0.0.1", port: int = 0, default_reply: Reply | None = None):
        super().__init__(*replies, host=host, port=port, default_reply=default_reply or Reply.text("OK"))

    def answer(self, exchange: Exchange) -> None:
        request = exchange.request
        model, _, method = request.path.rpartition(":")
        if request.method != "POST" or not model.startswith("/v1beta/models/"):
            exchange.send_json(404, _error(404, "NOT_FOUND", f"no route {request.method} {request.path}"))
            return
        if request.body is None:
            exchange.send_json(400, _error(400, "INVALID_ARGUMENT", "the body is not a JSON object"))
            return
        if method == "countTokens":
            exchange.send_json(200, {"totalTokens": estimate_tokens(json.dumps(request.body))})
            return
        if method not in ("generateContent", "streamGenerateContent"):
            exchange.send_json(404, _error(404, "NOT_FOUND", f"no method {method!r}"))
            return
        reply = self._next_reply(request)
        if reply is None:
            exchange.send_json(500, _error(500, "INTERNAL", self.script_ran_out()))
            return
        reply = reply.resolve(request)
        if reply.kind == "error":
            exchange.send_json(
                reply.status, _error(reply.status, reply.error_type, reply.message), reply.retry_headers()
            )
            return
        if not exchange.wait(reply.delay_s):
            return
        model_name = model.removeprefix("/v1beta/models/")
        if method == "generateContent":
            exchange.send_json(200, self.chunk(request, model_name, self.parts(reply), finish=True))
            return
        self._stream(exchange, reply, model_name)

    # --- bodies --------------------------------------------------------------------------------

    def parts(self, reply: Reply) -> list[dict[str, Any]]:
        """All parts of ``reply``: its text, then one ``functionCall`` per tool."""
        parts: list[dict[str, Any]] = [{"text": reply.content}] if reply.content or not reply.tools else []
        parts += [{"functionCall": {"id": t.id, "name": t.name, "args": dict(t.input)}} for t in reply.tools]
        return parts

    def chunk(
        self, request: RecordedRequest, model: str, parts: list[dict[str, Any]], *, finish: bool
    ) -> dict[str, Any]:
        """One ``GenerateContentResponse`` holding ``parts``; the final one has the finish reason and usage."""
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        out: dict[str, Any] = {"candidates": [candidate], "modelVersion": model, "responseId": next_id("resp")}
        if finish:
            candidate["finishReason"] = "STOP"
            prompt = estimate_tokens(json.dumps((request.body or {}).get("contents"), ensure_ascii=False))
            output = estimate_tokens(json.dumps(parts))
            out["usageMetadata"] = {
                "promptTokenCount": prompt,
                "candidatesTokenCount": output,
                "totalTokenCount": prompt + output,
            }
        return out

    def _stream(self, exchange: Exchange, reply: Reply, model: str) -> None:
        request = exchange.request
        texts = [{"text": piece} for piece in text_pieces(reply.content)]
        calls = self.parts(reply)[1 if reply.content else 0 :] if reply.tools else []
        exchange.start_stream()
        if reply.kind in ("stall", "endless"):
            exchange.send_event(self.chunk(request, model, [{"text": ""}], finish=False))
            if reply.kind == "stall":
                exchange.wait(reply.seconds)
            else:
                while exchange.wait(reply.interval_s):
                    exchange.send_event(self.chunk(request, model, [{"text": reply.content}], finish=False))
            exchange.hang_up()
            return
        chunks = [self.chunk(request, model, [piece], finish=False) for piece in texts]
        chunks.append(self.chunk(request, model, calls or [{"text": ""}], finish=True))
        if reply.kind in ("stream_error", "truncated"):
            for data in chunks[: reply.after_events]:
                exchange.send_event(data)
            if reply.kind == "stream_error":
                exchange.send_event(_error(500, reply.error_type, reply.message))
                exchange.end_stream()
            else:
                exchange.hang_up()
            return
        for data in chunks:
            exchange.send_event(data)
        exchange.end_stream()


def _error(code: int, status: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}
