"""A PostgreSQL journal's URL read as libpq's connection string, or a message saying what is wrong with it.

How a URL is *named* (without its password) is ``_store.journal_label``, shared with file journals.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from watcher.core.errors import JournalError
from watcher.runtime._pg_messages import first_line
from watcher.runtime._store import journal_label, misread_query

try:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo
except ImportError as exc:  # the extra is not installed: say how to get it
    raise JournalError(
        "a postgresql:// journal needs psycopg: pip install 'watcher-agents[postgres]'; or give a file path instead"
    ) from exc

__all__ = ["conninfo"]


def _unquoted(text: str, url: str) -> str:
    """``text`` (a driver's message about ``url``) without the parts of the URL it quotes that may hold a password."""
    try:
        password = urlsplit(url).password or ""
    except ValueError:
        password = ""

    def keep(match: re.Match[str]) -> str:
        quoted = match.group(1)
        risky = any(c in quoted for c in ":/@%") or (password and (password in quoted or quoted in password))
        return '"…"' if risky else match.group(0)

    return re.sub(r'"([^"]*)"', keep, text)


def conninfo(url: str, **extra: Any) -> str:
    """``url`` as libpq's connection string, or a ``JournalError`` saying what is wrong with it.

    ``extra`` are defaults: a parameter the URL sets itself (``?connect_timeout=30`` for a slow
    link) is the user's choice and is kept.
    """
    if "\x00" in url:  # libpq reads a URL up to its first NUL: what follows (sslmode=verify-full) would be ignored
        raise JournalError(
            f"the journal URL {journal_label(url)} holds a NUL character; libpq would read it only up to there. "
            "Remove it (a value that needs one cannot be given in a URL)"
        )
    try:
        url.encode("utf-8")
    except UnicodeEncodeError as exc:  # a byte that is not UTF-8 (an environment variable decoded as it came)
        raise JournalError(
            f"the journal URL {journal_label(url)} holds a byte that is not UTF-8 (character {exc.start + 1}): "
            "percent-encode it (the byte 0xFF is written %FF), or give the URL in UTF-8"
        ) from None
    if misread_query(url):
        raise JournalError(
            f"the journal URL {journal_label(url)} has an '@' in its query and no path: libpq would read "
            "everything before that '@' as a user name and connect to the host after it. Put a '/' before "
            "the '?' (postgresql://HOST/?…, or postgresql://HOST/DATABASE?…), or write the '@' as %40"
        )
    try:
        given = conninfo_to_dict(url)
        return make_conninfo(url, **{key: value for key, value in extra.items() if key not in given})
    except psycopg.ProgrammingError as exc:
        raise JournalError(
            f"the journal location is not a PostgreSQL URL watcher can read ({_unquoted(first_line(exc), url)}); "
            "write it as postgresql://USER@HOST:PORT/DATABASE, a password after USER and a colon, with any '%', '@', "
            "':' or '/' in it percent-encoded (%25, %40, %3A, %2F)"
        ) from exc
