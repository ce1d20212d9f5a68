"""The journal's PostgreSQL connection pool: psycopg_pool's, with its reconnection backoff capped.

When the server goes away, psycopg_pool tries to reconnect with an exponential backoff that has
no ceiling (1, 2, 4, 8 ... seconds). After an outage of a minute its next try would come half a
minute after the server is back, and every journal call would wait for it: a supervisor's lease
renewal, a task's event, a person's command. Capped, the pool tries about once a second while the
server is away and is back within a second of it.
"""

from __future__ import annotations

from psycopg_pool import ConnectionPool
from psycopg_pool.base import AttemptWithBackoff

__all__ = ["RECONNECT_MAX_S", "JournalPool"]

RECONNECT_MAX_S = 1.0  # the longest wait between two tries to reach a server that went away


class JournalPool(ConnectionPool):
    """A ``ConnectionPool`` whose reconnection attempts are at most ``RECONNECT_MAX_S`` apart."""

    def _add_connection(self, attempt: AttemptWithBackoff | None, growing: bool = False) -> None:
        # the pool doubles the delay after a failed try: keep the doubled delay within the cap
        if attempt is not None and attempt.delay * AttemptWithBackoff.DELAY_BACKOFF > RECONNECT_MAX_S:
            attempt.delay = RECONNECT_MAX_S / AttemptWithBackoff.DELAY_BACKOFF
        super()._add_connection(attempt, growing)
