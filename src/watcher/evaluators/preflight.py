"""Checking an LLM evaluator's server, key and model before anything starts.

A replay, an eval or a notebook watcher whose server cannot be reached, whose key is refused
or whose model the server does not have would otherwise run to the end with every evaluation
failing (each failing closed, as it must), and look like a run in which nothing was wrong.

``check_reachable`` proves an LLM evaluator with one cheap authenticated request through its own
SDK, as its evaluations will be sent (key, headers, proxies): the Models API (``GET
/v1/models/{id}`` for Anthropic, ``GET /v1/models`` for an OpenAI-compatible server), within a
short budget. A refused key (401, 403), an unknown model (404: a few of the server's are named),
a server that is down or does not answer in time is a ``ConfigurationError`` that says what to
fix. A server without a models endpoint (many local ones), or one that is busy (429, 5xx), has
proved only that it answers HTTP, and is not refused. ``check_url`` opens one TCP connection, for
servers watcher does not talk to itself (an agent CLI's); through a proxy when one applies.

Callers check once, before they start: never per evaluation (a hook call must not pay for it).
"""

from __future__ import annotations

import asyncio
import difflib
import socket
import threading
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from watcher.core.errors import ConfigurationError, UnreachableServerError
from watcher.core.evaluation import Evaluator
from watcher.core.logs import logger
from watcher.core.redact import redact, redact_known, redact_url
from watcher.evaluators._llm import plain
from watcher.evaluators._transport import MAX_RESPONSE_BYTES, ResponseTooLarge, http_client

__all__ = ["check_reachable", "check_url", "prove"]

log = logger("watcher.evaluators")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_SHOWN_MODELS = 8
# what reading a models answer that is not the API's raises (JSON errors and pydantic's are ValueErrors)
_UNREADABLE = (ValueError, TypeError, AttributeError, KeyError, IndexError, ResponseTooLarge)


def check_reachable(evaluator: Evaluator, *, timeout_s: float = 1.0, budget_s: float = 5.0) -> None:
    """Raise a ``ConfigurationError`` when ``evaluator``'s server, key or model will not work.

    An LLM evaluator (one with ``check_model``) is proved with its SDK (``prove``); another that
    names a server gets a TCP connection (``check_url``); one that talks to no server (rules,
    callables) passes at once. ``timeout_s`` bounds the connection, ``budget_s`` the whole proof.
    """
    where = getattr(evaluator, "where", None)
    if not (isinstance(where, str) and "://" in where):
        return
    if callable(getattr(evaluator, "check_model", None)):
        prove(evaluator, connect_s=timeout_s, budget_s=budget_s)
    else:
        check_url(where, who=f"{getattr(evaluator, 'name', 'the LLM evaluator')}'s server", timeout_s=timeout_s)


def prove(llm: Any, *, connect_s: float = 1.0, budget_s: float = 5.0) -> None:
    """One authenticated models request of ``llm`` (an ``LLMEvaluator``), within ``budget_s``; raises what it found.

    It runs on a thread of its own with its own event loop and its own copy of the SDK client, so
    it can be called from any thread, a running event loop's included (it holds that loop for
    at most ``budget_s``), and leaves the evaluator's client untouched.
    """
    outcome: list[BaseException | None] = []
    worker = threading.Thread(
        target=lambda: outcome.append(_outcome(llm, connect_s, budget_s)), name="watcher-preflight", daemon=True
    )
    worker.start()
    worker.join(budget_s + 5.0)  # the proof bounds itself; this bounds a thread that could not start its loop
    if not outcome:
        raise UnreachableServerError(_no_answer(llm, budget_s))
    if outcome[0] is not None:
        raise outcome[0]


def _outcome(llm: Any, connect_s: float, budget_s: float) -> BaseException | None:
    try:
        asyncio.run(_prove(llm, connect_s, budget_s))
    except ConfigurationError as exc:
        return exc
    except Exception as exc:  # noqa: BLE001 - anything else is a check that could not say: not a refusal
        log.warning("%s: the pre-start check of its server failed unexpectedly (%s); not refused", llm.name, exc)
    return None


async def _prove(llm: Any, connect_s: float, budget_s: float) -> None:
    sdk = llm.sdk
    client = llm.client.copy(
        timeout=sdk.Timeout(budget_s, connect=connect_s),
        max_retries=0,
        http_client=http_client(sdk, longest_wait=0.0, max_body_bytes=MAX_RESPONSE_BYTES),
    )
    try:
        async with asyncio.timeout(budget_s):
            missing = await llm.check_model(client)
    except (TimeoutError, sdk.APITimeoutError):
        raise UnreachableServerError(_no_answer(llm, budget_s)) from None
    except sdk.APIConnectionError as exc:
        raise UnreachableServerError(_unreachable(llm, exc)) from None
    except sdk.AuthenticationError as exc:
        raise ConfigurationError(_said(llm, exc, _refused_key(llm, exc))) from None
    except sdk.PermissionDeniedError as exc:
        raise ConfigurationError(_said(llm, exc, _denied(llm, exc))) from None
    except sdk.APIStatusError as exc:  # no models endpoint (404, 405), or busy (429, 5xx): it answers HTTP
        log.debug("%s: %s answered the models request with HTTP %s; not refused", llm.name, llm.where, exc.status_code)
        return
    except _UNREADABLE as exc:  # a models answer that is not the API's: the server may still serve its API
        log.debug("%s: %s has no readable models endpoint (%s); not refused", llm.name, llm.where, type(exc).__name__)
        return
    finally:
        await client.close()
    if missing is not None:
        raise ConfigurationError(_said(llm, None, _unknown_model(llm, missing)))


def _said(llm: Any, exc: BaseException | None, message: str) -> str:
    """``message`` with every secret masked (the server's words may quote the key) and no control character."""
    return redact_known(redact(plain(message)), llm.secrets)


def _server_words(exc: Any) -> str:
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    said = inner.get("message") if isinstance(inner, dict) else None
    return f": {plain(str(said))[:200]}" if said else ""


def _refused_key(llm: Any, exc: Any) -> str:
    return (
        f"{llm.where} refused the key of the {llm.name} watcher (HTTP 401{_server_words(exc)}): set "
        f"{llm.key_variable} to a key this server accepts (or pass api_key=), or use the offline `rules` evaluator"
    )


def _denied(llm: Any, exc: Any) -> str:
    return (
        f"{llm.where} does not let the key of the {llm.name} watcher use its models (HTTP 403{_server_words(exc)}): "
        f"use a key with access to {llm.model!r}, or another model"
    )


def _unknown_model(llm: Any, available: Sequence[str]) -> str:
    available = [plain(m)[:100] for m in available]  # a server's words: no escapes, no novel for a name
    near = difflib.get_close_matches(llm.model, available, n=3, cutoff=0.5)
    shown = list(dict.fromkeys([*near, *available]))[:_SHOWN_MODELS]
    more = f" and {len(available) - len(shown)} more" if len(available) > len(shown) else ""
    has = f"it has {', '.join(shown)}{more}" if shown else "it lists none"
    return (
        f"{llm.where} has no model {llm.model!r} ({has}): give one of its models with --model "
        f"(--watcher-model; model= in Python) or {llm.model_variable}"
    )


def _no_answer(llm: Any, budget_s: float) -> str:
    return (
        f"{llm.name}'s server at {llm.where} accepted no request or did not answer one within {budget_s:g}s: "
        "is it the right server, and running? Fix --base-url (or the provider's BASE_URL variable); the offline "
        "`rules` evaluator needs no server"
    )


def _unreachable(llm: Any, exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    reason = " ".join(str(cause or exc).split())[:200] or type(cause or exc).__name__
    message = (
        f"cannot reach {llm.name}'s server at {llm.where} ({reason}): start the server or fix --base-url "
        "(or the provider's BASE_URL variable); the offline `rules` evaluator needs no server"
    )
    return redact_known(redact(plain(message)), llm.secrets)


def check_url(
    url: str, *, who: str, fix: str = "--base-url", timeout_s: float = 1.0, environ: Mapping[str, str] | None = None
) -> None:
    """Raise ``UnreachableServerError`` unless a TCP connection to ``url``'s host and port opens in time.

    When the environment sends ``url`` through a proxy (``HTTPS_PROXY``, ``ALL_PROXY``, not
    excluded by ``NO_PROXY``), the proxy is what is connected to, as every HTTP client here does:
    a host reached only through it is not refused. ``environ`` is the environment of whoever will
    connect (a spawned CLI's); None: this process's, as its HTTP clients read it. Messages show the URL without its userinfo
    and with any other secret masked (``redact_url``).
    """
    parts = urlsplit(url)
    shown = redact_url(url)
    host = parts.hostname
    if not host:
        raise ConfigurationError(f"{who} address {shown!r} names no host; give a URL such as http://127.0.0.1:8080/v1")
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme, 443)
    except ValueError as exc:
        raise ConfigurationError(f"{who} address {shown!r} has a bad port ({redact(str(exc))})") from exc
    target, through = (host, port), ""
    proxy = _proxy_for(parts.scheme, host, environ)
    if proxy is not None:
        target, through = proxy[0], f" through the proxy {redact_url(proxy[1])}"
    try:
        with socket.create_connection(target, timeout=timeout_s):
            pass
    except OSError as exc:
        reason = f"no answer within {timeout_s:g}s" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise UnreachableServerError(
            f"cannot reach {who} at {shown}{through} ({redact(reason)}): start the server or fix {fix} "
            "(or the provider's BASE_URL variable); the offline `rules` evaluator needs no server"
        ) from exc


def _proxies(environ: Mapping[str, str] | None) -> dict[str, str]:
    """The proxy variables as urllib and httpx read them (``https_proxy`` before ``HTTPS_PROXY``); ``no`` is NO_PROXY."""
    if environ is None:
        return urllib.request.getproxies_environment()  # this process's: what its HTTP clients use
    found: dict[str, str] = {}
    for name, value in environ.items():
        if value and name.lower().endswith("_proxy") and (name.islower() or name.lower()[:-6] not in found):
            found[name.lower()[:-6]] = value
    return found


def _proxy_for(scheme: str, host: str, environ: Mapping[str, str] | None) -> tuple[tuple[str, int], str] | None:
    """The proxy (host and port, and its URL) when the environment sends ``scheme://host`` through one, else None."""
    proxies = _proxies(environ)
    proxy = proxies.get(scheme) or proxies.get("all")
    if not proxy or _bypassed(host, proxies.get("no", "")):
        return None
    parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme, 1080)
    except ValueError:
        return None
    return ((parts.hostname, port), proxy) if parts.hostname else None


def _bypassed(host: str, no_proxy: str) -> bool:
    """Whether ``NO_PROXY`` (``*``, or hosts and domains, ``.example.com`` or ``example.com``) names ``host``."""
    host = host.lower().strip("[]")
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        name = entry.rsplit(":", 1)[0] if entry.count(":") == 1 else entry  # a port is not matched on
        name = name.strip("[]").lstrip(".")
        if entry == "*" or (name and (host == name or host.endswith(f".{name}"))):
            return True
    return False
