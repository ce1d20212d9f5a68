"""Answering every request: malformed params get a JSON-RPC error (-32602), never silence.

pygls turns a request whose params do not fit the method's type into an exception inside its
reader loop, where no response is sent: the client waits for ever. ``AnsweringProtocol`` catches
that while the message is decoded and answers the request with ``Invalid params``, saying which
field is wrong. Command errors are answered the same way, with our message, and logged as one
line (pygls logs a traceback for each, which editors show in the server's output). A request
after ``shutdown``, which pygls drops unanswered, is answered with ``Invalid request``; one before
``initialize``, which pygls answered as if all were well (an empty history), with ``Server not
initialized`` (-32002), and a notification before it (but ``exit``) is dropped, as the LSP says. The
workspace it makes at ``initialize`` holds ``documents.EditedDocument``s (edits cost what they touch).
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from cattrs import transform_error
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcServerNotInitialized,
)
from pygls.protocol import LanguageServerProtocol, lsp_method

from watcher.core.logs import logger
from watcher.lsp_bridge.documents import EditedWorkspace

__all__ = ["AnsweringProtocol", "invalid_params"]

log = logger("watcher.lsp")


@dataclass(frozen=True, slots=True)
class _Refused:
    """A request whose params could not be read: answered with an error instead of handled."""

    id: int | str
    method: str
    reason: str


class _NoDecodeTraceback(logging.Filter):
    """Drops pygls' traceback for a message it cannot decode: ``AnsweringProtocol`` logs one line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Unable to deserialize message")


logging.getLogger("pygls.protocol.json_rpc").addFilter(_NoDecodeTraceback())


def invalid_params(message: str) -> JsonRpcInvalidParams:
    """The -32602 error carrying ``message`` (and no traceback) for the client."""
    return JsonRpcInvalidParams(message)


class AnsweringProtocol(LanguageServerProtocol):
    """pygls' protocol, except that a request it cannot decode is answered with -32602."""

    asked_to_initialize = False  # an ``initialize`` request came: other messages may follow it
    _early = False  # a message came before initialize (logged once)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if not (isinstance(data, dict) and "id" in data and isinstance(data.get("method"), str)):
                raise
            return _Refused(data["id"], data["method"], _reason(exc))

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        """pygls' initialize, then the same workspace as an ``EditedWorkspace`` (no document is open yet)."""
        result = yield from super().lsp_initialize(params)
        made = self.workspace
        self._workspace = EditedWorkspace(
            made.root_uri, made._sync_kind, list(made.folders.values()), made.position_encoding
        )
        self._workspace.syncs_notebooks = params.capabilities.notebook_document is not None
        return result

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Refused):
            log.warning("answered %s request %r with invalid params: %s", message.method, message.id, message.reason)
            text = f"invalid params for {message.method}: {message.reason}"
            self._send_response(message.id, None, invalid_params(text).to_response_error())
            return
        method = getattr(message, "method", None)
        if method == types.INITIALIZE:
            self.asked_to_initialize = True
        elif not self.asked_to_initialize and method not in (None, types.EXIT):
            if getattr(message, "id", None) is not None:
                text = f"{method} before initialize: send the initialize request first"
                self._send_response(message.id, None, JsonRpcServerNotInitialized(text).to_response_error())
            if not self._early:  # one line: a client that floods before initialize must not flood the log
                log.warning("dropped %s and whatever else comes before initialize", method)
            self._early = True
            return
        if self._shutdown and method not in (None, "exit") and getattr(message, "id", None) is not None:
            text = f"{method} after shutdown: the server is shutting down and serves no more requests"
            self._send_response(message.id, None, JsonRpcInvalidRequest(text).to_response_error())
            return
        super().handle_message(message)

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        """Our own -32602 (a bad command argument) is answered and logged as one line, no traceback."""
        failed = future.exception() if future.done() and not future.cancelled() else None
        if isinstance(failed, JsonRpcInvalidParams):
            self._request_futures.pop(msg_id, None)
            log.warning("answered request %r with invalid params: %s", msg_id, failed.message)
            self._send_response(msg_id, None, failed.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)


def _reason(exc: BaseException) -> str:
    cause = exc.__cause__
    try:
        details = transform_error(cause) if isinstance(cause, Exception) else []
    except Exception:  # noqa: BLE001 - not a cattrs error: fall back to its text
        details = []
    return "; ".join(details[:5]) if details else str(cause or exc)
