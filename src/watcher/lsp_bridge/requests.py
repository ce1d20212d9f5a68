"""Answering every request: malformed params get a JSON-RPC error (-32602), never silence.

pygls turns a request whose params do not fit the method's type into an exception inside its
reader loop, where no response is sent: the client waits for ever. ``AnsweringProtocol`` catches
that while the message is decoded and answers the request with ``Invalid params``, saying which
field is wrong. Command errors are answered the same way, with our message and no traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cattrs import transform_error
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol

from watcher.core.logs import logger

__all__ = ["AnsweringProtocol", "invalid_params"]

log = logger("watcher.lsp")


@dataclass(frozen=True, slots=True)
class _Refused:
    """A request whose params could not be read: answered with an error instead of handled."""

    id: int | str
    method: str
    reason: str


def invalid_params(message: str) -> JsonRpcInvalidParams:
    """The -32602 error carrying ``message`` (and no traceback) for the client."""
    return JsonRpcInvalidParams(message)


class AnsweringProtocol(LanguageServerProtocol):
    """pygls' protocol, except that a request it cannot decode is answered with -32602."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if not (isinstance(data, dict) and "id" in data and isinstance(data.get("method"), str)):
                raise
            return _Refused(data["id"], data["method"], _reason(exc))

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Refused):
            log.warning("answered %s request %r with invalid params: %s", message.method, message.id, message.reason)
            text = f"invalid params for {message.method}: {message.reason}"
            self._send_response(message.id, None, invalid_params(text).to_response_error())
            return
        super().handle_message(message)


def _reason(exc: BaseException) -> str:
    cause = exc.__cause__
    try:
        details = transform_error(cause) if isinstance(cause, Exception) else []
    except Exception:  # noqa: BLE001 - not a cattrs error: fall back to its text
        details = []
    return "; ".join(details[:5]) if details else str(cause or exc)
