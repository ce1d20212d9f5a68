"""Checking an LLM evaluator's server before anything starts.

A replay, a bench run or a spawn with an LLM watcher whose server cannot be reached would
otherwise run to the end with every evaluation failing (each failing closed, as it must), and
look like a run in which nothing was wrong. ``check_reachable`` opens one TCP connection to the
server, within a second, and says which flag or variable to fix when it cannot.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from watcher.core.errors import ConfigurationError, UnreachableServerError
from watcher.core.evaluation import Evaluator
from watcher.core.redact import redact, redact_url

__all__ = ["check_reachable", "check_url"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def check_reachable(evaluator: Evaluator, *, timeout_s: float = 1.0) -> None:
    """Raise ``UnreachableServerError`` when ``evaluator`` talks to a server that does not answer.

    Evaluators that talk to no server (rules, callables) pass at once.
    """
    where = getattr(evaluator, "where", None)
    if isinstance(where, str) and "://" in where:
        check_url(where, who=f"{getattr(evaluator, 'name', 'the LLM evaluator')}'s server", timeout_s=timeout_s)


def check_url(url: str, *, who: str, fix: str = "--base-url", timeout_s: float = 1.0) -> None:
    """Raise ``UnreachableServerError`` unless a TCP connection to ``url``'s host and port opens in time.

    Messages show the URL without its userinfo and with any other secret masked (``redact_url``).
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
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as exc:
        reason = f"no answer within {timeout_s:g}s" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise UnreachableServerError(
            f"cannot reach {who} at {shown} ({redact(reason)}): start the server or fix {fix} "
            "(or the provider's BASE_URL variable); the offline `rules` evaluator needs no server"
        ) from exc
