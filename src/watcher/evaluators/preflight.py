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

__all__ = ["check_reachable"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def check_reachable(evaluator: Evaluator, *, timeout_s: float = 1.0) -> None:
    """Raise ``UnreachableServerError`` when ``evaluator`` talks to a server that does not answer.

    Evaluators that talk to no server (rules, callables) pass at once.
    """
    where = getattr(evaluator, "where", None)
    if not isinstance(where, str) or "://" not in where:
        return
    parts = urlsplit(where)
    host = parts.hostname
    if not host:
        return
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme, 443)
    except ValueError as exc:
        raise ConfigurationError(f"the evaluator's server address {where!r} has a bad port ({exc})") from exc
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as exc:
        reason = f"no answer within {timeout_s:g}s" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        name = getattr(evaluator, "name", "the LLM evaluator")
        raise UnreachableServerError(
            f"cannot reach {name}'s server at {where} ({reason}): start the server or fix --base-url "
            "(or the provider's BASE_URL variable); the offline `rules` evaluator needs no server"
        ) from exc
