"""The HTTP client an LLM SDK is given: bounded waits, bounded answers, no redirects.

The SDKs read a whole answer into memory before parsing it, and follow redirects. A hostile or
broken server (a base URL that points at the wrong thing, a proxy's error page that never ends,
a gzip bomb) could then fill the watcher's memory, and a redirect would carry the request, with
its ``x-api-key`` header and the prompt, to whatever host the server names. ``http_client``
builds the SDK's own client with three guards: a ``retry-after`` longer than the watcher waits
is not waited for; an answer whose *decoded* body passes ``max_body_bytes`` is abandoned with
``ResponseTooLarge`` (counted as it arrives, so a gzip bomb is stopped at the limit too); and a
redirect is answered as the 3xx it is, which the evaluators report with the address it names.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any

from watcher.core.errors import ConfigurationError
from watcher.core.redact import redact

__all__ = ["MAX_RESPONSE_BYTES", "ResponseTooLarge", "http_client", "retry_after"]

MAX_RESPONSE_BYTES = 8 * 1024 * 1024  # an evaluation's answer is under 1 MB; a models list of a big gateway about 2


class ResponseTooLarge(Exception):
    """A server's answer was longer than the client reads; the connection was closed there."""

    def __init__(self, url: str, limit: int) -> None:
        super().__init__(
            f"the answer from {url} was longer than {limit // (1024 * 1024)} MiB, the most a watcher reads; "
            "it stopped reading there (is the base URL an API server of this kind?)"
        )
        self.url = url
        self.limit = limit


def http_client(sdk: ModuleType, *, longest_wait: float, max_body_bytes: int | None = None) -> Any:
    """The SDK's own async HTTP client, told not to retry when the server asks for a wait over ``longest_wait`` s.

    The SDKs honour ``retry-after`` (Anthropic's for up to 50 days): a 429 asking for an hour would
    hold the evaluation until the engine's timeout, which then reports a timeout, not the rate
    limit. The server's ``x-should-retry`` header is the SDKs' documented switch; the hook sets it.
    ``max_body_bytes`` (None: unbounded, for a streamed agent run) bounds every answer. Redirects
    are never followed (see the module docstring).
    """

    async def no_long_waits(response: Any) -> None:
        wait = retry_after(response.headers)
        if wait is not None and wait > longest_wait:
            response.headers["x-should-retry"] = "false"

    hooks = {"response": [no_long_waits]}
    try:  # the client reads the environment's proxy variables here
        if max_body_bytes is None:  # a redirect is answered as it is here too: it would carry the key away
            return sdk.DefaultAsyncHttpxClient(event_hooks=hooks, follow_redirects=False)
        client = _capped_class(sdk)(event_hooks=hooks, follow_redirects=False)
    except ImportError as exc:  # ALL_PROXY=socks5://…, set for another tool, without socksio installed
        raise ConfigurationError(
            "a proxy variable of the environment (ALL_PROXY, HTTPS_PROXY or HTTP_PROXY) names a SOCKS proxy, and "
            "the socksio package it needs is not installed: run `pip install 'httpx2[socks]'`, or unset the "
            "variable for watcher"
        ) from exc
    except ValueError as exc:  # a proxy URL of a scheme no client speaks (ftp://…)
        raise ConfigurationError(
            f"a proxy variable of the environment (ALL_PROXY, HTTPS_PROXY or HTTP_PROXY) is not a proxy's URL "
            f"({redact(str(exc))}): set it to http://HOST:PORT, or unset it"
        ) from exc
    client.max_body_bytes = max_body_bytes
    return client


def retry_after(headers: Any) -> float | None:
    """The seconds a response asks the client to wait (``retry-after-ms``, else ``retry-after``), or None."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            return float(headers.get(name)) / scale
        except (TypeError, ValueError):
            continue
    return None  # an HTTP date is read by the SDK; it is rare enough to be waited for within the engine's timeout


@functools.cache
def _capped_class(sdk: ModuleType) -> type[Any]:
    """``sdk``'s client class, reading at most ``max_body_bytes`` of any answer.

    The error raised is also the SDK's own base error: both SDKs hand their own errors on as they
    are, where anything else raised while reading would be retried as a connection error and
    read again.
    """
    import httpx2  # both SDKs talk through it; imported here, as the SDKs are (the ``llm`` extra)

    too_large: type[ResponseTooLarge] = type("ResponseTooLarge", (ResponseTooLarge, sdk.APIError.__base__), {})

    class Capped(httpx2.AsyncByteStream):
        """A response's raw byte stream that raises once more than ``limit`` bytes came through it."""

        def __init__(self, inner: Any, limit: int, error: Any) -> None:
            self.inner, self.limit, self.error, self.seen = inner, limit, error, 0

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self.inner:
                self.seen += len(chunk)
                if self.seen > self.limit:
                    raise self.error()
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

    class CappedClient(sdk.DefaultAsyncHttpxClient):  # type: ignore[misc, name-defined]
        max_body_bytes: int = MAX_RESPONSE_BYTES

        async def send(self, request: Any, *, stream: bool = False, **kwargs: Any) -> Any:
            response = await super().send(request, stream=True, **kwargs)
            limit = self.max_body_bytes
            url = _origin(request)
            try:
                if _declared_length(response) > limit:  # said up front: nothing of it is read
                    raise too_large(url, limit)
                if stream:  # read by the caller as it comes: each raw chunk is counted on its way
                    response.stream = Capped(response.stream, limit, lambda: too_large(url, limit))
                    return response
                parts, total = [], 0
                async for part in response.aiter_bytes():  # decoded: a gzip bomb counts what it expands to
                    total += len(part)
                    if total > limit:
                        raise too_large(url, limit)
                    parts.append(part)
            except BaseException:
                await response.aclose()
                raise
            response._content = b"".join(parts)  # what ``Response.aread`` itself stores
            return response

    return CappedClient


def _declared_length(response: Any) -> int:
    try:
        return int(response.headers.get("content-length") or -1)
    except ValueError:
        return -1


def _origin(request: Any) -> str:
    """The scheme, host and port a request went to: never its path's query or a userinfo's key."""
    url = request.url
    port = f":{url.port}" if url.port else ""
    return f"{url.scheme}://{url.host}{port}"
