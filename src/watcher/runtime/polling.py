"""A background poll of the journal that survives outages without flooding the log.

The command pollers (a session's, a fleet's) and a fleet's task host each look at the journal a
few times a second. While another process holds the journal locked every look fails; logging a
traceback each time would bury everything else, so an outage is logged once and its end once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from watcher.core.errors import WatcherError

__all__ = ["poll"]


async def poll(
    step: Callable[[], Awaitable[object]],
    interval_s: float,
    log: logging.Logger,
    *,
    failed: str,
    recovered: str,
    nap: Callable[[float], Awaitable[None]] | None = None,
) -> None:
    """Await ``step`` every ``interval_s`` seconds until cancelled; a failure never ends the poll.

    ``nap`` sleeps between steps instead of ``asyncio.sleep``: a journal's ``nap`` returns early
    when a writer on another machine signals a command or a decision (PostgreSQL's NOTIFY).

    The first failure of an outage is logged (``"<failed> failed; retrying every …"``, with its
    traceback unless it is a ``WatcherError``, whose message says what and what to do), and the
    first success after it (``recovered``); the failures between are not.
    """
    failing = False
    while True:
        try:
            await step()
            if failing:
                log.warning("%s", recovered)
                failing = False
        except asyncio.CancelledError:
            raise
        except WatcherError as exc:  # a handled condition (a locked journal): its message says it all
            if not failing:
                log.warning("%s failed (%s); retrying every %gs", failed, exc, interval_s)
            failing = True
        except Exception:
            if not failing:
                log.exception("%s failed; retrying every %gs", failed, interval_s)
            failing = True
        await (nap or asyncio.sleep)(interval_s)
